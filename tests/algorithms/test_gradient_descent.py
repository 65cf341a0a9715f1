"""DP gradient descent (paper 000 Sec. IV's DP-GD partner)."""

import math

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from dpbench import algorithms
from dpbench.algorithms.base import clip_rows
from dpbench.algorithms.gradient_descent import DPGDRegressor, clipped_gradient_sum
from dpbench.algorithms.nonprivate import OLSRegressor
from dpbench.privacy import mu_from_epsilon_delta
from dpbench.tuning.spaces import tuning_space


def chi2_ok(stat: float, dof: int, z: float = 5.0) -> bool:
    """A chi-square(dof) statistic within z standard deviations (sqrt(2 dof)) of its mean."""
    return abs(stat - dof) < z * math.sqrt(2 * dof)


def test_registry():
    est = algorithms.make("dpgd", epsilon=2.0)
    assert isinstance(est, DPGDRegressor) and est.epsilon == 2.0
    assert (est.grad_bound, est.n_rounds, est.lr_schedule, est.learning_rate) == (1.0, 100, "constant", 1.0)
    spec = algorithms.get_spec("dpgd")
    assert spec.private and spec.task == "regression"
    assert set(tuning_space(spec.name)) == {"grad_bound", "n_rounds", "lr_schedule"}  # paper 000 Table I


def test_ledger_matches_budget():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(300, 4)), rng.normal(size=300)
    eps, delta, C, T = 0.7, 1e-5, 2.5, 37
    led = DPGDRegressor(epsilon=eps, delta=delta, grad_bound=C, n_rounds=T, random_state=0).fit(X, y).privacy_ledger_
    mu = mu_from_epsilon_delta(eps, delta)
    assert len(led) == 2
    count, e = led.entries
    assert count.count == 1 and count.sensitivity == 1.0
    assert count.mu == pytest.approx(mu * math.sqrt(0.05), rel=1e-12)
    assert e.count == T and e.sensitivity == C
    assert e.mu == pytest.approx(mu * math.sqrt(0.95) / math.sqrt(T), rel=1e-12)
    assert e.noise_scale == pytest.approx(e.sensitivity / e.mu, rel=1e-12)
    assert led.total_mu() == pytest.approx(mu, rel=1e-12)
    spent_eps, spent_delta = led.epsilon_delta(delta)
    assert spent_eps == pytest.approx(eps, rel=1e-9) and spent_delta == delta


def test_clipped_gradient_sum_is_row_clipping_of_per_example_gradients():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 3)) * rng.uniform(0, 3, size=(200, 1))
    X[:5] = 0.0  # zero gradients stay zero
    y, theta = rng.normal(size=200) * 2, rng.normal(size=3)
    grads = X * (X @ theta - y)[:, None]
    for C in [0.1, 1.0, 1e3]:
        np.testing.assert_allclose(clipped_gradient_sum(X, y, theta, C), clip_rows(grads, C).sum(axis=0),
                                   rtol=1e-12, atol=1e-12)


def test_a_nan_residual_counts_zero_in_its_runs_sum_only():
    """A residual 0 * inf is NaN: that record's clipped gradient counts 0 (no NaN reaches the release), for one
    run and for that run's column of a batch, whose other runs are untouched."""
    X, y = np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 2.0]]), np.array([0.0, 1.0, -1.0])
    theta = np.array([np.inf, 1.0])  # residuals NaN, inf, inf
    expected = X[1] * 0.5 + X[2] * 0.5 / math.sqrt(5)  # clipped to C / ||x_i||
    with np.errstate(invalid="ignore"):
        assert np.isnan(X @ theta)[0]
    np.testing.assert_allclose(clipped_gradient_sum(X, y, theta, 0.5), expected, rtol=1e-12)
    other = np.array([0.3, -0.2])
    both = clipped_gradient_sum(X, y, np.column_stack([theta, other]), np.array([0.5, 2.0]))
    np.testing.assert_allclose(both[:, 0], expected, rtol=1e-12)
    np.testing.assert_array_equal(both[:, 1], clipped_gradient_sum(X, y, other, 2.0))


def test_first_step_noise_matches_ledger():
    """From theta_0 = 0 one step gives theta_1 = -step (S + Z) / n~ with S the clipped gradient sum (clipping
    active here).  Recover Z over m seeds: its mean must be 0 (z-test per coordinate) and sum Z^2 / std^2 with
    the ledger's std is chi-square(m d)."""
    rng = np.random.default_rng(2)
    n, d, m, step, C = 500, 3, 400, 0.5, 1.0
    X, y = rng.normal(size=(n, d)), 2 * rng.normal(size=n)
    Phi = clip_rows(X, 1.0)  # the feature map: rows clipped to x_bound = 1
    S = clip_rows(-Phi * y[:, None], C).sum(axis=0)
    assert np.mean(np.linalg.norm(Phi * y[:, None], axis=1) > C) > 0.5  # the clip matters
    fits = [DPGDRegressor(epsilon=1.0, grad_bound=C, n_rounds=1, learning_rate=step, random_state=s).fit(X, y)
            for s in range(m)]
    std = fits[0].privacy_ledger_.entries[1].noise_scale
    assert std == pytest.approx(C / (math.sqrt(0.95) * mu_from_epsilon_delta(1.0, 1e-6)), rel=1e-12)
    Z = np.array([-f.record_count_ * f.coef_ / step - S for f in fits])
    assert np.all(np.abs(Z.mean(axis=0)) < 5 * std / math.sqrt(m))
    assert chi2_ok(np.sum(Z**2) / std**2, m * d)


def test_multi_step_spread_matches_linear_dynamics():
    """Without active clipping DP-GD is linear in its noise: theta_t - mean_t = M_t (theta_{t-1} - mean_{t-1})
    - (eta_t / n~) Z_t with M_t = I - eta_t X^T X / n~ (n~ the fit's released count).  Propagate mean and
    covariance exactly per fit and test the Mahalanobis distances of theta_T over m seeds against
    chi-square(m d); this checks the schedule, the step size and the budget split together."""
    rng = np.random.default_rng(3)
    n, d, m, T, step, C = 2000, 3, 300, 5, 0.8, 2.5
    X = clip_rows(rng.normal(size=(n, d)) / 2, 1.0)
    y = np.clip(X @ np.array([0.5, -0.5, 0.3]) + 0.1 * rng.normal(size=n), -1, 1)
    A, b = X.T @ X, X.T @ y
    std = C * math.sqrt(T) / (math.sqrt(0.95) * mu_from_epsilon_delta(1.0, 1e-6))
    stat = 0.0
    for s in range(m):
        est = DPGDRegressor(epsilon=1.0, grad_bound=C, n_rounds=T, lr_schedule="1/sqrt(t)", learning_rate=step,
                            random_state=s).fit(X, y)
        nn = est.record_count_
        mean, cov = np.zeros(d), np.zeros((d, d))
        for t in range(1, T + 1):
            eta = step / math.sqrt(t)
            assert np.max(np.abs(X @ mean - y) * np.linalg.norm(X, axis=1)) < C / 2  # no clipping along the path
            M = np.eye(d) - eta * A / nn
            mean = mean - eta * (A @ mean - b) / nn
            cov = M @ cov @ M.T + (eta * std / nn) ** 2 * np.eye(d)
        dev = est.coef_ - mean
        stat += dev @ np.linalg.solve(cov, dev)
    assert chi2_ok(stat, m * d)


@pytest.mark.parametrize("fit_intercept", [False, True])
def test_converges_to_ols_at_large_epsilon(fit_intercept, linear_data):
    """Rows of norm ~0.5 and residuals ~0.01 at the optimum: no gradient is clipped there, so the fixed point
    is OLS.  With L = lambda_min(X^T X / n) the noise settles at sd <= (std / n) / sqrt(1 - (1 - L)^2) per
    coordinate and the start is forgotten as (1 - L)^T; allow 5 sd plus twice that transient."""
    X, y, _ = linear_data
    y = y + (0.3 if fit_intercept else 0.0)
    # the intercept column makes rows longer than 1: x_bound 2 keeps them unclipped (the step is 1 / x_bound^2)
    T, xb = (1000, 2.0) if fit_intercept else (400, 1.0)
    est = DPGDRegressor(epsilon=50.0, x_bound=xb, grad_bound=1.0, n_rounds=T, fit_intercept=fit_intercept,
                        random_state=0)
    est.fit(X, y)
    ols = OLSRegressor(fit_intercept=fit_intercept).fit(X, y)
    Phi = np.hstack([X, np.ones((len(X), 1))]) if fit_intercept else X
    lam = np.linalg.eigvalsh(Phi.T @ Phi / len(X))[0] / xb**2
    sd = est.privacy_ledger_.entries[1].noise_scale / xb**2 / est.record_count_ / math.sqrt(1 - (1 - lam) ** 2)
    tol = 5 * sd + 2 * (1 - lam) ** T * np.linalg.norm(ols.theta_)
    assert np.max(np.abs(est.theta_ - ols.theta_)) < tol
    assert tol < 0.01  # the bound is informative


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"epsilon": 0}, "epsilon"),
        ({"delta": 1.5}, "delta"),
        ({"grad_bound": 0.0}, "grad_bound"),
        ({"grad_bound": np.inf}, "grad_bound"),
        ({"n_rounds": 0}, "n_rounds"),
        ({"n_rounds": 2.5}, "n_rounds"),
        ({"lr_schedule": "fast"}, "lr_schedule"),
        ({"learning_rate": -1.0}, "learning_rate"),
        ({"count_share": 1.0}, "count_share"),
    ],
)
def test_bad_hyperparameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        DPGDRegressor(**kwargs).fit(np.ones((10, 2)), np.ones(10))


def test_bad_data():
    X, y = np.ones((10, 2)), np.ones(10)
    bad = X.copy()
    bad[2, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        DPGDRegressor().fit(bad, y)
    with pytest.raises(ValueError, match="different numbers of samples"):
        DPGDRegressor().fit(X, y[:4])
    assert np.all(np.isfinite(DPGDRegressor(random_state=0).fit(X[:0], y[:0]).predict(X)))  # n is not public


def test_reproducible_from_random_state():
    rng = np.random.default_rng(4)
    X, y = rng.normal(size=(100, 2)), rng.normal(size=100)
    a, b, c = (DPGDRegressor(random_state=s).fit(X, y).coef_ for s in (7, 7, 8))
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)


def test_sklearn_api(linear_data):
    X, y, _ = linear_data
    est = DPGDRegressor(epsilon=5.0, n_rounds=50, random_state=0)
    assert clone(est).get_params() == est.get_params()
    scores = cross_val_score(make_pipeline(StandardScaler(), est), X[:3000], y[:3000], cv=3)
    assert scores.shape == (3,) and np.all(np.isfinite(scores))
    # scikit-learn's estimator checks: tests/algorithms/test_registry.py
