"""The metrics a run is scored by: one registry, read by the runner (scoring), results (columns) and plots (labels).

A metric is declared once with `@metric(name, task, label=..., lower_is_better=...)` on a function
f(y, pred, score) -> float (pred: predictions or predicted labels; score: a continuous score for
classifiers, None for regressors); each run gets columns `train_<name>` and `test_<name>`.  Adding a metric is
this one declaration (here or in any module imported before the sweep).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from sklearn.metrics import f1_score, roc_auc_score

PARTS = ("train", "test")  # the parts a run is scored on: columns <part>_<metric>


@dataclass(frozen=True)
class Metric:
    name: str
    task: str  # 'regression' or 'classification'
    fn: Callable
    label: str
    lower_is_better: bool
    scale_free: bool  # on one scale for every dataset, so figure panels may share the axis


METRICS: dict[str, Metric] = {}


def metric(name: str, task: str, label: str = "", lower_is_better: bool = False, scale_free: bool = True):
    """Register f(y, pred, score) -> float as the metric `name` of `task`."""
    if task not in ("regression", "classification"):
        raise ValueError(f"metric task must be 'regression' or 'classification', got {task!r}")

    def register(fn):
        if name in METRICS:
            raise ValueError(f"metric {name!r} is already registered")
        METRICS[name] = Metric(name, task, fn, label or name, lower_is_better, scale_free)
        return fn

    return register


def columns(task: str | None = None) -> list[str]:
    """Result columns of the registered metrics (`test_` first), optionally of one task."""
    names = [m.name for m in METRICS.values() if task is None or m.task == task]
    return [f"{split}_{n}" for split in ("test", "train") for n in names]


def of_column(column: str) -> Metric | None:
    """The metric behind a result column such as 'test_mse' (None if it is not one)."""
    part, _, name = column.partition("_")
    return METRICS.get(name) if part in PARTS else None


def score(task: str, split: str, y, pred, s=None) -> dict:
    """Every registered metric of `task` on one split."""
    y, pred = np.asarray(y), np.asarray(pred)
    return {f"{split}_{m.name}": float(m.fn(y, pred, s)) for m in METRICS.values() if m.task == task}


@metric("mse", "regression", label="MSE", lower_is_better=True, scale_free=False)
def mse(y, pred, s):
    return np.mean((y - pred) ** 2)


@metric("r2", "regression", label="$R^2$")
def r2(y, pred, s):
    """1 - SSE/SST, computed directly (sklearn's per-call input validation cost more than the batched fits)."""
    sst = np.sum((y - y.mean()) ** 2)
    return 1.0 - np.sum((y - pred) ** 2) / sst if sst > 0 else np.nan


@metric("f1", "classification", label="F1")
def f1(y, pred, s):
    """Binary F1 of the positive label 1 (sklearn's default), 0 when undefined (zero_division=0)."""
    if not (np.isin(y, (0, 1)).all() and np.isin(pred, (0, 1)).all()):
        return f1_score(y, pred, zero_division=0)
    tp = np.count_nonzero((pred == 1) & (y == 1))
    denom = np.count_nonzero(pred == 1) + np.count_nonzero(y == 1)
    return 2 * tp / denom if denom else 0.0


@metric("auroc", "classification", label="AUROC")
def auroc(y, pred, s):
    return roc_auc_score(y, s) if len(np.unique(y)) == 2 else np.nan


@metric("accuracy", "classification", label="accuracy")
def accuracy(y, pred, s):
    return np.mean(y == pred)
