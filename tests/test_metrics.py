"""The metrics' own arithmetic (fast paths written for speed) against scikit-learn's, on random inputs."""

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, f1_score, mean_squared_error, r2_score, roc_auc_score

from dpbench import metrics


@pytest.mark.parametrize("seed", range(5))
def test_regression_metrics_match_sklearn(seed):
    rng = np.random.default_rng(seed)
    y, pred = rng.normal(size=50 + seed), rng.normal(size=50 + seed)
    out = metrics.score("regression", "test", y, pred)
    assert out["test_mse"] == pytest.approx(mean_squared_error(y, pred), rel=1e-12)
    assert out["test_r2"] == pytest.approx(r2_score(y, pred), rel=1e-12)
    assert np.isnan(metrics.score("regression", "test", np.ones(4), pred[:4])["test_r2"])  # constant y: undefined


@pytest.mark.parametrize("seed", range(5))
def test_classification_metrics_match_sklearn(seed):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, size=60)
    s = rng.normal(size=60) + y * seed / 3
    pred = (s > 0).astype(int)
    out = metrics.score("classification", "train", y, pred, s)
    assert out["train_f1"] == pytest.approx(f1_score(y, pred), rel=1e-12)
    assert out["train_auroc"] == pytest.approx(roc_auc_score(y, s), rel=1e-12)
    assert out["train_accuracy"] == pytest.approx(accuracy_score(y, pred), rel=1e-12)


def test_f1_edge_cases_match_sklearn():
    for y, pred in [([0, 0, 0], [0, 0, 0]), ([1, 1, 0], [0, 0, 0]), ([0, 0, 1], [1, 1, 1]), ([1.0, 0.0], [1, 1])]:
        y, pred = np.array(y), np.array(pred)
        expected = f1_score(y, pred, zero_division=0)
        assert metrics.METRICS["f1"].fn(y, pred, None) == pytest.approx(expected)
    assert np.isnan(metrics.METRICS["auroc"].fn(np.zeros(3), np.zeros(3), np.arange(3.0)))  # one class: undefined


def test_columns_and_lookup():
    assert metrics.columns("regression") == ["test_mse", "test_r2", "train_mse", "train_r2"]
    assert metrics.of_column("test_f1").name == "f1" and metrics.of_column("fit_seconds") is None


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("rate", [0.02, 0.5, 0.98])
def test_f1_fast_path_and_r2_on_random_inputs(seed, rate):
    """The 0/1 fast path of F1 (int, float and bool labels, rare to common positives) and R^2 (offset, scale and
    near-perfect predictions) equal scikit-learn's."""
    rng = np.random.default_rng(seed)
    n = 200 + 37 * seed
    y, pred = (rng.random(n) < rate).astype(int), (rng.random(n) < rate).astype(int)
    for cast in (int, float, bool):
        got = metrics.METRICS["f1"].fn(y.astype(cast), pred.astype(cast), None)
        assert got == pytest.approx(f1_score(y, pred, zero_division=0), rel=1e-12, abs=1e-15)
    assert metrics.METRICS["f1"].fn(2 * y - 1, 2 * pred - 1, None) == pytest.approx(f1_score(2 * y - 1, 2 * pred - 1))
    y = 1e3 * rate + rng.normal(scale=10 * rate, size=n)
    for pred in (y + rng.normal(scale=1e-3, size=n), rng.normal(y.mean(), size=n), np.full(n, y.mean() + 1)):
        assert metrics.METRICS["r2"].fn(y, pred, None) == pytest.approx(r2_score(y, pred), rel=1e-9)
