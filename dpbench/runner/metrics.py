"""Metrics of a fitted estimator on a dataset, by task."""

from __future__ import annotations

import numpy as np
from sklearn.metrics import accuracy_score, f1_score, mean_squared_error, r2_score, roc_auc_score


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


def evaluate(est, data) -> dict:
    out = {}
    for split, X, y in (("train", data.X_train, data.y_train), ("test", data.X_test, data.y_test)):
        pred = est.predict(X)
        if data.task == "regression":
            out[f"{split}_mse"] = float(mean_squared_error(y, pred))
            out[f"{split}_r2"] = float(r2_score(y, pred))
        else:
            out[f"{split}_accuracy"] = float(accuracy_score(y, pred))
            out[f"{split}_f1"] = float(f1_score(y, pred, zero_division=0))
            out[f"{split}_auroc"] = _auroc(y, _scores(est, X))
    return out
