"""DP-ROBGD (paper 004 Alg. 1-3): ledger, utility, robustness, noise, fallbacks, inputs."""

import math

import numpy as np
import pytest
from sklearn.base import clone

from dpbench import algorithms
from dpbench.algorithms.robust_gd import DPRobGDRegressor
from dpbench.privacy import mu_from_epsilon_delta
from dpbench.privacy.composition import ADVANCED_PARALLEL, part_of, per_step_budget, spent_by

D = 5


def paper_data(n, sigma=1.0, seed=0, d=D):
    """Paper 004 Sec. 5: w* uniform on the unit sphere, x ~ N(0, I_d), z ~ U[-sigma, sigma]."""
    rng = np.random.default_rng(seed)
    w = rng.normal(size=d)
    w /= np.linalg.norm(w)
    X = rng.normal(size=(n, d))
    return X, X @ w + rng.uniform(-sigma, sigma, size=n), w


@pytest.fixture(scope="module")
def data_30k():
    return paper_data(30_000)


def test_registry():
    spec = algorithms.get_spec("robgd")
    assert spec.private and spec.task == "regression"
    est = algorithms.make("robgd", epsilon=0.5)
    assert est.gamma_fraction == 0.2 and est.n_rounds == 30 and est.epsilon == 0.5
    assert clone(est).get_params() == est.get_params()


@pytest.mark.parametrize("best_iterate, trace", [(False, None), (True, None), (True, 5.0)])
def test_ledger_spends_exactly_the_budget(data_30k, best_iterate, trace):
    X, y, _ = data_30k
    eps, delta, T = 4.0, 1e-6, 5
    est = DPRobGDRegressor(epsilon=eps, delta=delta, n_rounds=T, best_iterate=best_iterate, trace=trace,
                           random_state=0).fit(X, y)
    assert est.fit_status_ == "ok"
    led = est.privacy_ledger_
    assert led.accountant == ADVANCED_PARALLEL
    assert spent_by(led, delta) == pytest.approx((eps, delta), rel=1e-9)
    k = T + best_iterate
    eps0, delta0 = per_step_budget(0.95 * eps, delta, k)  # 5% of epsilon went to the record count
    assert (est.step_epsilon_, est.step_delta_) == (eps0, delta0)
    count, *releases = led.entries
    assert part_of(count.name) == "" and count.mechanism == "laplace" and count.epsilon == pytest.approx(0.05 * eps)
    parts = [part_of(e.name) for e in releases]
    assert parts.count("S1") == (trace is None) and parts.count("S2") == k and parts.count("S3") == T
    grads = [e for e in releases if part_of(e.name) == "S3"]
    for e in releases:
        assert (e.epsilon, e.delta) == (eps0, delta0)
        if e.mechanism == "stability_histogram":
            assert e.noise_scale == pytest.approx(2 / eps0, rel=1e-15)
    for e, theta in zip(grads, est.clip_thresholds_, strict=True):
        assert e.mechanism == "gaussian_classical"  # eps0 <= 1
        assert e.sensitivity == pytest.approx(est.norm_threshold_ * theta, rel=1e-14)  # the clipped sum
        assert e.noise_scale == pytest.approx(e.sensitivity * math.sqrt(2 * math.log(1.25 / delta0)) / eps0, rel=1e-14)


def test_analytic_calibration_above_eps0_one(data_30k):
    X, y, _ = data_30k
    est = DPRobGDRegressor(epsilon=20.0, n_rounds=3, random_state=0).fit(X, y)
    mu0 = mu_from_epsilon_delta(est.step_epsilon_, est.step_delta_)
    grads = [e for e in est.privacy_ledger_.entries if e.name.startswith("S3/")]
    assert est.step_epsilon_ > 1 and len(grads) == 3
    for e in grads:
        assert e.mechanism == "gaussian_analytic" and e.noise_scale == pytest.approx(e.sensitivity / mu0, rel=1e-14)
    assert spent_by(est.privacy_ledger_, 1e-6) == pytest.approx((20.0, 1e-6), rel=1e-9)


def test_large_epsilon_approaches_least_squares():
    # At large eps the iterates are GD on S3's least squares plus the ledger's Gaussian noise (no clipping is active:
    # theta_t >> |residual|, Theta >> ||x||).  With rho = 1 - eta lambda_min (lambda_min of the data's X^T X/n,
    # 5% margin for S3), E||w_T - w*||^2 <= rho^(2T)||w*||^2 + eta^2 d sum_t rho^(2(T-1-t)) std_t^2 + s^2 d/n3
    # (s^2 = 1/3, the U[-1, 1] noise variance); a scaled chi^2_5 exceeds 10x its mean w.p. < 1e-8.
    n = 100_000
    X, y, w = paper_data(n)
    est = DPRobGDRegressor(epsilon=50.0, random_state=1).fit(X, y)
    assert est.fit_status_ == "ok"
    T, eta, n3 = est.n_rounds, est.learning_rate_, (1 - 1 / 3 - 0.2) * est.record_count_
    rho = 1 - 0.95 * eta * np.linalg.eigvalsh(X.T @ X / n)[0]
    stds = np.array([e.noise_scale for e in est.privacy_ledger_.entries if e.name.startswith("S3/")]) / n3
    bound = rho ** (2 * T) + eta**2 * D * np.sum(rho ** (2 * np.arange(T)[::-1]) * stds**2) + D / (3 * n3)
    assert np.sum((est.coef_ - w) ** 2) <= 10 * bound
    assert bound <= 5 * D / (3 * n)  # ... which is within a small factor of OLS's s^2 d / n


def test_robust_to_label_corruption():
    # Paper 004 Sec. 5.2: a fraction of labels set to 1000.  OLS's error is ~ 1000 sqrt(0.1 d / n) ~ 1;
    # DP-ROBGD clips those residuals at theta_t (a few noise sd) and their x's average out.
    n = 300_000
    X, y, w = paper_data(n, seed=3)
    bad = np.random.default_rng(4).random(n) < 0.1
    y[bad] = 1000.0
    ols = np.linalg.lstsq(X, y, rcond=None)[0]
    est = DPRobGDRegressor(epsilon=1.0, delta=1e-6, random_state=0).fit(X, y)
    assert est.fit_status_ == "ok"
    err_ols, err = np.linalg.norm(ols - w), np.linalg.norm(est.coef_ - w)
    assert err_ols > 0.5 and err < err_ols / 5
    assert max(est.clip_thresholds_) < 50  # the corrupted residuals (~1000) are clipped


def test_gradient_noise_spread_matches_ledger():
    # Identical rows make Gamma, gamma_0 and theta_0 the same for every seed (they are left ends of histogram
    # bins), and the gradient sum is -3 x |S3| (the clip Theta depends on the noisy count only through a log;
    # the residual clip is inactive), so w_1 = eta (3 |S3| x - std nu) / n3~.  On the plane orthogonal to x the
    # signal vanishes: (n3~ / eta) P w_1 = -std P nu, chi-square with 2 dof per fit, std from the ledger.
    x, n, R = np.array([1.0, -2.0, 0.5]), 2000, 400
    X, y = np.tile(x, (n, 1)), np.full(n, 3.0)
    fits = [DPRobGDRegressor(epsilon=1.0, n_rounds=1, random_state=s).fit(X, y) for s in range(R)]
    assert all(f.fit_status_ == "ok" for f in fits)
    eta = fits[0].learning_rate_
    assert all(f.learning_rate_ == eta for f in fits)
    basis = np.linalg.svd(x[None, :])[2][1:]
    stat = 0.0
    for f in fits:
        (entry,) = [e for e in f.privacy_ledger_.entries if e.name.startswith("S3/")]
        n3 = max(1.0, (1 - 1 / 3 - 0.2) * f.record_count_)
        stat += np.sum((basis @ f.coef_ * n3 / eta / entry.noise_scale) ** 2)
    assert abs(stat - 2 * R) < 5 * math.sqrt(4 * R)
    np.testing.assert_allclose(np.mean([f.coef_ @ x / (x @ x) for f in fits]), 3 * eta, rtol=0.03)


def test_same_seed_same_fit(data_30k):
    X, y, _ = data_30k
    a = DPRobGDRegressor(epsilon=4.0, n_rounds=3, random_state=7).fit(X, y)
    b = DPRobGDRegressor(epsilon=4.0, n_rounds=3, random_state=7).fit(X, y)
    c = DPRobGDRegressor(epsilon=4.0, n_rounds=3, random_state=8).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert not np.array_equal(a.coef_, c.coef_)


def test_best_iterate_is_the_smallest_released_gamma(data_30k):
    X, y, _ = data_30k
    est = DPRobGDRegressor(epsilon=4.0, n_rounds=6, best_iterate=True, random_state=2).fit(X, y)
    g = np.array(est.distance_estimates_)
    assert g.size == 7 and est.best_iteration_ == np.flatnonzero(g == np.nanmin(g))[-1]
    assert g[est.best_iteration_] < g[0]  # w_0 = 0 has the largest residuals


def test_intercept(data_30k):
    X, y, w = data_30k
    est = DPRobGDRegressor(epsilon=20.0, n_rounds=40, fit_intercept=True, random_state=0).fit(X, y + 2.0)
    assert est.intercept_ == pytest.approx(2.0, abs=0.1) and np.linalg.norm(est.coef_ - w) < 0.1
    assert est.predict(X[:3]).shape == (3,)


def test_fallbacks_keep_fit_alive():
    X, y, _ = paper_data(3000)
    # eps0 = 1/30-ish needs thousands of groups per histogram: S1's norm histogram comes back empty.
    est = DPRobGDRegressor(epsilon=1.0, random_state=0).fit(X, y)
    assert est.fit_status_ == "norm_histogram_empty"
    np.testing.assert_array_equal(est.coef_, np.zeros(D))
    assert len(est.privacy_ledger_) == 2 and spent_by(est.privacy_ledger_, 1e-6)[0] < 1.0  # count + S1 only
    # with a public trace there is no S1; the distance histogram is empty every round and no step is taken
    est = DPRobGDRegressor(epsilon=1.0, n_rounds=4, trace=5.0, random_state=0).fit(X, y)
    assert est.fit_status_ == "distance_histogram_empty" and est.failed_rounds_ == 4
    assert not any(e.name.startswith("S3/") for e in est.privacy_ledger_.entries)
    assert np.all(est.predict(X[:2]) == 0)


def test_tiny_n_is_a_fit_not_an_error():
    # n is not public: two rows must not raise (that would tell n apart); the private estimates fail instead
    est = DPRobGDRegressor(random_state=0).fit(np.ones((2, 2)), np.ones(2))
    assert est.fit_status_ != "ok" and np.all(np.isfinite(est.coef_))


@pytest.mark.parametrize("params, match", [
    ({"epsilon": 0.0}, "epsilon"),
    ({"delta": 1.0}, "delta"),
    ({"n_rounds": 0}, "n_rounds"),
    ({"learning_rate": -1.0}, "learning_rate"),
    ({"alpha": 0.4}, "alpha"),
    ({"failure_prob": 1.0}, "failure_prob"),
    ({"gamma_fraction": 0.0}, "gamma_fraction"),
    ({"norm_fraction": 0.7, "gamma_fraction": 0.3}, "norm_fraction"),
    ({"trace": -1.0}, "trace"),
    ({"noise_calibration": "rdp"}, "noise_calibration"),
    ({"best_iterate": "yes"}, "best_iterate"),
])
def test_bad_parameters(params, match):
    X, y, _ = paper_data(100)
    with pytest.raises(ValueError, match=match):
        DPRobGDRegressor(**params).fit(X, y)


def test_bad_data():
    X, y, _ = paper_data(100)
    X[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        DPRobGDRegressor().fit(X, y)

