"""DP-AMBSSGD: one-pass private SGD with privately estimated clip thresholds; parallel composition over batches."""

import math

import numpy as np
import pytest
from sklearn.base import clone

from dpbench import algorithms
from dpbench.algorithms.robust_gd import DPAMBSSGDRegressor, clip_gradients
from dpbench.privacy import mu_from_epsilon_delta
from dpbench.privacy.composition import PARALLEL, part_of, spent_by

D = 5


def paper_data(n, sigma=1.0, seed=0, d=D):
    """Paper 004 Sec. 5: w* uniform on the unit sphere, x ~ N(0, I_d), z ~ U[-sigma, sigma]."""
    rng = np.random.default_rng(seed)
    w = rng.normal(size=d)
    w /= np.linalg.norm(w)
    X = rng.normal(size=(n, d))
    return X, X @ w + rng.uniform(-sigma, sigma, size=n), w


@pytest.fixture(scope="module")
def data_100k():
    return paper_data(100_000)


def test_registry():
    spec = algorithms.get_spec("ambssgd")
    assert spec.private and spec.task == "regression"
    assert spec.tuning_space["n_rounds"]["high"] == 4000  # paper 000 Table I iterations range
    assert spec.tuning_space["lr_schedule"]["choices"] == ["constant", "1/t", "1/sqrt(t)"]
    est = algorithms.make("ambssgd", epsilon=0.5)
    assert clone(est).get_params() == est.get_params()


@pytest.mark.parametrize("eps", [0.5, 1.0, 3.0])
def test_ledger_parallel_rounds_spend_exactly_the_budget(data_100k, eps):
    X, y, _ = data_100k
    delta, T = 1e-6, 4
    est = DPAMBSSGDRegressor(epsilon=eps, delta=delta, n_rounds=T, random_state=0).fit(X, y)
    assert est.fit_status_ == "ok"
    led = est.privacy_ledger_
    assert led.accountant == PARALLEL
    count, *releases = led.entries
    assert part_of(count.name) == "" and count.mechanism == "laplace" and count.sensitivity == 1.0
    assert (count.epsilon, count.delta) == (pytest.approx(0.05 * eps), 0.0)  # the record count reads all data
    parts = [part_of(e.name) for e in releases]
    assert len(set(parts)) == len(parts) == 2 * T and "" not in parts  # each release on its own disjoint subset
    assert spent_by(led, delta) == pytest.approx((eps, delta), rel=1e-9)
    eps_r = 0.95 * eps
    mu = mu_from_epsilon_delta(eps_r, delta)
    grads = [e for e in releases if ".grad" in e.name]
    for e, theta in zip(grads, est.clip_thresholds_, strict=True):
        assert e.sensitivity == pytest.approx(theta, rel=1e-14)  # a clipped sum: one record moves it by theta
        if eps_r <= 1:
            assert e.mechanism == "gaussian_classical"
            classical = e.sensitivity * math.sqrt(2 * math.log(1.25 / delta)) / eps_r
            assert e.noise_scale == pytest.approx(classical, rel=1e-14)
        else:
            assert e.mechanism == "gaussian_analytic" and e.noise_scale == pytest.approx(e.sensitivity / mu, rel=1e-14)
    for e in releases:
        assert (e.epsilon, e.delta) == (pytest.approx(eps_r, rel=1e-15), delta)
        if e.mechanism == "stability_histogram":
            assert e.noise_scale == pytest.approx(2 / eps_r, rel=1e-15)


def test_large_epsilon_approaches_least_squares(data_100k):
    # lr 1 with the 1/t schedule makes w_T (nearly) the average of the T batch solutions, i.e. least squares on
    # the gradient subsets (half of n); E||w - w*||^2 ~ s^2 d / (n/2) (s^2 = 1/3) plus the ledger's privacy noise
    # (steps eta/t: sum_t (std_t/t)^2 d / T^2 scale).  A scaled chi^2_5 exceeds 10x its mean w.p. < 1e-8.
    X, y, w = data_100k
    n, T = len(y), 20
    est = DPAMBSSGDRegressor(epsilon=50.0, n_rounds=T, learning_rate=1.0, lr_schedule="1/t", random_state=1).fit(X, y)
    assert est.fit_status_ == "ok"
    m = 0.5 * est.record_count_ / T  # the step divides each batch's noisy gradient sum by m~
    stds = np.array([e.noise_scale for e in est.privacy_ledger_.entries if ".grad" in e.name]) / m
    bound = D / (3 * 0.5 * n) + D * np.sum(stds**2) / T**2
    ols = np.linalg.lstsq(X, y, rcond=None)[0]
    assert np.sum((est.coef_ - w) ** 2) <= 10 * bound
    assert bound <= 3 * D / (3 * n) and np.sum((ols - w) ** 2) <= 10 * D / (3 * n)


def test_gradient_noise_spread_matches_ledger():
    # Identical rows: gamma, theta and the (unclipped) gradient -3 x are the same for every seed, so
    # w_1 = eta (3 |V| x - std nu) / m~ with m~ = n~ / 2 from the released count.  Projected on the plane
    # orthogonal to x the signal vanishes: (m~ / eta) P w_1 = -std P nu, chi-square with 2 dof per fit.
    x, n, R = np.array([1.0, -2.0, 0.5]), 2000, 400
    X, y = np.tile(x, (n, 1)), np.full(n, 3.0)
    fits = [DPAMBSSGDRegressor(epsilon=1.0, n_rounds=1, random_state=s).fit(X, y) for s in range(R)]
    stds = {f.privacy_ledger_.entries[-1].noise_scale for f in fits}
    assert len(stds) == 1 and all(f.fit_status_ == "ok" for f in fits)
    std = stds.pop()
    basis = np.linalg.svd(x[None, :])[2][1:]  # orthonormal basis of x's orthogonal complement
    Z = np.array([basis @ f.coef_ * (f.record_count_ / 2) / 0.5 for f in fits]) / std
    assert abs(np.sum(Z**2) - 2 * R) < 5 * math.sqrt(4 * R)
    # along x: the mean step is eta * 3 |V| / m~ ~ 1.5 (|V| ~ n/2, m~ ~ n/2)
    np.testing.assert_allclose(np.mean([f.coef_ @ x / (x @ x) for f in fits]), 1.5, rtol=0.02)


def test_fallback_when_batches_are_too_small():
    X, y, _ = paper_data(5000)
    est = DPAMBSSGDRegressor(epsilon=1.0, n_rounds=50, random_state=0).fit(X, y)
    assert est.fit_status_ == "threshold_histogram_empty" and 0 < est.failed_rounds_ <= 50
    assert np.isfinite(est.coef_).all()
    assert spent_by(est.privacy_ledger_, 1e-6)[0] == pytest.approx(1.0)


def test_clip_gradients():
    G = np.array([[3.0, 4.0], [0.3, 0.4], [0.0, 0.0]])
    np.testing.assert_allclose(clip_gradients(G, 1.0), [[0.6, 0.8], [0.3, 0.4], [0.0, 0.0]])
    np.testing.assert_array_equal(clip_gradients(G, 0.0), np.zeros_like(G))


def test_same_seed_same_fit(data_100k):
    X, y, _ = data_100k
    a = DPAMBSSGDRegressor(n_rounds=4, random_state=3).fit(X, y)
    b = DPAMBSSGDRegressor(n_rounds=4, random_state=3).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)


@pytest.mark.parametrize("params, match", [
    ({"epsilon": -1.0}, "epsilon"),
    ({"delta": 0.0}, "delta"),
    ({"n_rounds": 0}, "n_rounds"),
    ({"learning_rate": 0.0}, "learning_rate"),
    ({"lr_schedule": "1/t^2"}, "lr_schedule"),
    ({"clip_scale": np.inf}, "clip_scale"),
    ({"alpha": 1 / 3}, "alpha"),
    ({"stat_fraction": 1.0}, "stat_fraction"),
    ({"noise_calibration": "x"}, "noise_calibration"),
    ({"count_share": 0.0}, "count_share"),
])
def test_bad_inputs(params, match):
    X, y, _ = paper_data(100)
    with pytest.raises(ValueError, match=match):
        DPAMBSSGDRegressor(**params).fit(X, y)
    with pytest.raises(ValueError, match="different numbers"):
        DPAMBSSGDRegressor().fit(X, y[:-1])
