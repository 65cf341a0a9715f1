"""Metrics of fitted estimators on a dataset, by task; linear models' predictions as one product per feature map."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
from sklearn.metrics import f1_score, roc_auc_score


def _scores(est, X):
    """A continuous score for AUROC: P(y=1) if the estimator has it, else its decision function."""
    if hasattr(est, "predict_proba"):
        try:
            return est.predict_proba(X)[:, 1]
        except (AttributeError, NotImplementedError):
            pass
    if hasattr(est, "decision_function"):
        return est.decision_function(X)
    return est.predict(X)


def _auroc(y, s) -> float:
    return float(roc_auc_score(y, s)) if len(np.unique(y)) == 2 else float("nan")


def _f1(y, pred) -> float:
    """Binary F1 of the positive label 1 (sklearn's default), 0 when undefined (zero_division=0)."""
    if not (np.isin(y, (0, 1)).all() and np.isin(pred, (0, 1)).all()):
        return float(f1_score(y, pred, zero_division=0))
    tp = np.count_nonzero((pred == 1) & (y == 1))
    denom = np.count_nonzero(pred == 1) + np.count_nonzero(y == 1)
    return 2 * tp / denom if denom else 0.0


def _metrics(task: str, split: str, y, pred, score=None) -> dict:
    """The metrics of one split, computed directly (sklearn's input validation cost more than the fits)."""
    y, pred = np.asarray(y), np.asarray(pred)
    if task == "regression":
        sse, sst = float(np.sum((y - pred) ** 2)), float(np.sum((y - y.mean()) ** 2))
        return {f"{split}_mse": sse / y.size, f"{split}_r2": 1.0 - sse / sst if sst > 0 else float("nan")}
    return {f"{split}_accuracy": float(np.mean(y == pred)), f"{split}_f1": _f1(y, pred),
            f"{split}_auroc": _auroc(y, score)}


def evaluate(est, data) -> dict:
    out = {}
    for split, X, y in (("train", data.X_train, data.y_train), ("test", data.X_test, data.y_test)):
        pred = est.predict(X)
        out.update(_metrics(data.task, split, y, pred, _scores(est, X) if data.task != "regression" else None))
    return out


def evaluate_many(estimators: list, data, shared_train, shared_test) -> list[dict]:
    """evaluate() of each fitted estimator; linear models (theta_ on a feature map) are scored together.

    The scores phi(X) theta of all linear models with one feature map are one matrix product on the
    cached phi(X) (the test matrix is clipped once per unit, not once per run).  A linear classifier's
    AUROC uses its score, a monotone transform of predict_proba where it has one, so the value is the same.
    """
    out: list[dict | None] = [None] * len(estimators)
    linear = defaultdict(list)
    for i, est in enumerate(estimators):
        if hasattr(est, "theta_") and hasattr(est, "feature_key"):
            linear[est.feature_key()].append(i)
        else:
            out[i] = evaluate(est, data)
    for key, idx in linear.items():
        theta = np.column_stack([estimators[i].theta_ for i in idx])
        metrics = [{} for _ in idx]
        for split, shared, y in (("train", shared_train, data.y_train), ("test", shared_test, data.y_test)):
            scores = shared.features(*key) @ theta
            for j, i in enumerate(idx):
                est, s = estimators[i], scores[:, j]
                pred = s if data.task == "regression" else est.classes_[(s > 0).astype(int)]
                metrics[j].update(_metrics(data.task, split, y, pred, s))
        for j, i in enumerate(idx):
            out[i] = metrics[j]
    return out
