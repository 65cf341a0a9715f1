"""The audit's statistics (dpbench/audit/bounds.py): Clopper-Pearson bounds and the epsilon and mu lower bounds
they give, on counts and on outputs with known privacy."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpbench.audit import (
    audit_outputs,
    clopper_pearson_lower,
    clopper_pearson_upper,
    epsilon_lower_bound,
    mu_lower_bound,
)
from dpbench.privacy import epsilon_from_mu_delta


def test_clopper_pearson_matches_scipy_exact_interval():
    # a two-sided 95% exact interval is two one-sided 97.5% bounds
    for k, n in [(0, 50), (3, 50), (25, 50), (50, 50), (7, 300)]:
        ci = stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
        assert clopper_pearson_lower(k, n, 0.025) == pytest.approx(ci.low, abs=1e-12)
        assert clopper_pearson_upper(k, n, 0.025) == pytest.approx(ci.high, abs=1e-12)
    assert clopper_pearson_lower(50, 50, 0.05) == pytest.approx(0.05 ** (1 / 50))
    assert clopper_pearson_upper(0, 50, 0.05) == pytest.approx(1 - 0.05 ** (1 / 50))


def test_perfect_separation_gives_a_finite_bound_that_grows_with_runs():
    delta = 1e-6
    bounds = [float(epsilon_lower_bound(0, n, n, n, delta)) for n in (50, 500, 5000)]
    p = 0.025 ** (1 / 50)  # each rate bound at alpha / 2
    assert bounds[0] == pytest.approx(math.log((p - delta) / (1 - p)))
    assert all(np.isfinite(bounds)) and bounds[0] < bounds[1] < bounds[2]
    assert float(mu_lower_bound(0, 500, 500, 500)) == pytest.approx(2 * stats.norm.ppf(0.025 ** (1 / 500)))


def test_no_evidence_gives_zero():
    assert epsilon_lower_bound(250, 500, 250, 500, 1e-6) == 0.0
    assert mu_lower_bound(250, 500, 250, 500) == 0.0
    rng = np.random.default_rng(0)
    res = audit_outputs(rng.normal(size=2000), rng.normal(size=2000), 1e-6, gdp=True)
    assert res["eps_lb"] < 0.1 and res["mu_lb"] < 0.05


def test_gaussian_shift_bounds_are_below_the_truth_and_have_power():
    """Outputs N(0,1) vs N(mu,1) are exactly mu-GDP: the bounds must stay below mu (and its epsilon) yet be positive."""
    rng = np.random.default_rng(1)
    for mu in (1.0, 3.0):
        res = audit_outputs(rng.normal(size=4000), rng.normal(mu, size=4000), 1e-6, gdp=True)
        assert 0.5 * mu < res["mu_lb"] < mu
        assert 0 < res["eps_lb"] < epsilon_from_mu_delta(mu, 1e-6)


def test_failures_are_an_outcome():
    """A fit that raises only on D' (e.g. branching on n) separates D from D' perfectly."""
    s0 = np.random.default_rng(2).normal(size=400)
    s1 = np.full(400, np.nan)
    assert audit_outputs(s0, s1, 1e-6, gdp=False)["eps_lb"] > 3
