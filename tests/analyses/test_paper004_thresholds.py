"""Paper 004's DP-AMBSSGD threshold: the theory's clean-gradient bound at the released iterate, reduced by a stated
factor, and the label spread it tracks under corruption."""

import math

import numpy as np
import pytest

from dpbench.algorithms.robust_gd import K_GAUSSIAN
from dpbench.analyses.paper004 import AMBSSGD_REDUCTION, TheoryThreshold, label_spread


def test_theory_threshold_bounds_every_clean_gradient_before_the_reduction():
    """Unreduced, the threshold is at least every clean per-example gradient norm of a Sec. 5 draw (unit-sphere
    covariates, so ||x|| = 1 and |r| <= |x^T (w - w*)| + sigma): nothing clean is clipped, the theory's aim;
    reduced, it is that over AMBSSGD_REDUCTION."""
    rng = np.random.default_rng(0)
    d, n, sigma = 10, 100_000, 1.0
    w_star = rng.normal(size=d)
    w_star /= np.linalg.norm(w_star)
    X = rng.normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    S = X.T @ X / n
    y = X @ w_star + rng.uniform(-sigma, sigma, n)
    full = TheoryThreshold(w_star, S, sigma, n, reduction=1.0)
    for w in (np.zeros(d), w_star, w_star + 0.3 * rng.normal(size=d)):
        grad_norms = np.abs(X @ w - y)  # ||x_i|| = 1
        assert full(w, 0) >= grad_norms.max()
        assert TheoryThreshold(w_star, S, sigma, n)(w, 0) == pytest.approx(full(w, 0) / AMBSSGD_REDUCTION)
    e = np.ones(d) / math.sqrt(d)
    expected = 2 * K_GAUSSIAN**2 * math.log(n / 0.1) * math.sqrt(np.trace(S)) * (math.sqrt(e @ S @ e) + sigma)
    assert full(w_star + e, 3) == pytest.approx(expected)


def test_label_spread_is_sigma_without_corruption_and_the_mix_with_it():
    assert label_spread(0.5, 0.0) == 0.5
    assert label_spread(1.0, 0.1) == pytest.approx(math.sqrt(0.9 + 0.1 * 1000.0**2))
