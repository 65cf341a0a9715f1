"""Scoring fitted estimators on a dataset with the registered metrics (dpbench.metrics); linear models'
predictions as one product per feature map."""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from dpbench import metrics


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


def evaluate(est, data) -> dict:
    out = {}
    for split, X, y in (("train", data.X_train, data.y_train), ("test", data.X_test, data.y_test)):
        pred = est.predict(X)
        out.update(metrics.score(data.task, split, y, pred, _scores(est, X) if data.task != "regression" else None))
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
        scored = [{} for _ in idx]
        for split, shared, y in (("train", shared_train, data.y_train), ("test", shared_test, data.y_test)):
            scores = shared.features(*key) @ theta
            for j, i in enumerate(idx):
                est, s = estimators[i], scores[:, j]
                pred = s if data.task == "regression" else est.classes_[(s > 0).astype(int)]
                scored[j].update(metrics.score(data.task, split, y, pred, s))
        for j, i in enumerate(idx):
            out[i] = scored[j]
    return out
