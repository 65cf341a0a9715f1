"""AdaSSP, BoostedAdaSSP, SSP and the non-private baselines."""

import math

import numpy as np
import pytest
from sklearn.model_selection import cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from dpbench import algorithms
from dpbench.algorithms.boosting import BoostedAdaSSPRegressor
from dpbench.algorithms.nonprivate import OLSRegressor, RidgeRegressor
from dpbench.algorithms.ssp import AdaSSPRegressor, SSPRegressor
from dpbench.privacy import mu_from_epsilon_delta, split_mu
from dpbench.tuning.spaces import tuning_space

PRIVATE = [AdaSSPRegressor, BoostedAdaSSPRegressor, SSPRegressor]


def test_registry_lists_and_builds():
    names = algorithms.available()
    for n in ["adassp", "boosted_adassp", "ssp", "ols", "ridge"]:
        assert n in names
    est = algorithms.make("boosted_adassp", epsilon=2.0)
    assert est.n_rounds == 100 and est.x_bound == 1.0 and est.y_bound == 1.0
    assert est.lr_schedule == "constant" and est.learning_rate == 1.0
    assert est.epsilon == 2.0
    with pytest.raises(ValueError, match="unknown algorithm 'nope'.*adassp"):
        algorithms.make("nope")
    with pytest.raises(ValueError, match="unknown parameter.*x_bnd"):
        algorithms.make("adassp", x_bnd=1)
    spec = algorithms.get_spec("boosted_adassp")
    assert tuning_space(spec.name)["x_bound"] == {"type": "float", "low": 1e-5, "high": 1e5, "log": True}
    assert tuning_space(spec.name)["n_rounds"]["high"] == 4000


@pytest.mark.parametrize("cls", PRIVATE)
def test_ledger_matches_budget_and_bounds(cls, linear_data):
    X, y, _ = linear_data
    eps, delta, xb, yb = 0.7, 1e-5, 0.8, 2.5
    est = cls(epsilon=eps, delta=delta, x_bound=xb, y_bound=yb, random_state=0).fit(X, y)
    led = est.privacy_ledger_
    mu = mu_from_epsilon_delta(eps, delta)
    assert led.total_mu() == pytest.approx(mu, rel=1e-12)
    spent_eps, spent_delta = led.epsilon_delta(delta)
    assert spent_eps == pytest.approx(eps, rel=1e-9) and spent_delta == delta
    by_name = {e.name: e for e in led.entries}
    for e in led.entries:
        assert e.noise_scale == pytest.approx(e.sensitivity / e.mu, rel=1e-12)
    assert by_name["X^T X"].sensitivity == pytest.approx(xb**2)
    if cls is SSPRegressor:
        parts = split_mu(mu, [1, 1])
        assert by_name["X^T y"].sensitivity == pytest.approx(xb * yb)
        assert by_name["X^T y"].mu == pytest.approx(parts[1])
        return
    mu1, mu2, mu3 = split_mu(mu, [1, 1, 1])
    assert by_name["lambda_min(X^T X)"].sensitivity == pytest.approx(xb**2)
    assert by_name["lambda_min(X^T X)"].mu == pytest.approx(mu3)
    assert by_name["X^T X"].mu == pytest.approx(mu1)
    if cls is AdaSSPRegressor:
        assert by_name["X^T y"].sensitivity == pytest.approx(xb * yb)
        assert by_name["X^T y"].mu == pytest.approx(mu2)
    else:
        rounds = by_name["X^T clip(g_t)"]
        assert rounds.count == est.n_rounds
        assert rounds.sensitivity == pytest.approx(xb * yb)
        assert rounds.mu == pytest.approx(mu2 / math.sqrt(est.n_rounds))


def test_budget_ratio_is_honoured(linear_data):
    X, y, _ = linear_data
    est = AdaSSPRegressor(epsilon=1.0, budget_ratio=(1, 2, 3), random_state=0).fit(X, y)
    mus = {e.name: e.mu for e in est.privacy_ledger_.entries}
    assert mus["X^T y"] / mus["X^T X"] == pytest.approx(2)
    assert mus["lambda_min(X^T X)"] / mus["X^T X"] == pytest.approx(3)


@pytest.mark.parametrize("cls", PRIVATE)
def test_recovers_coefficients_at_large_epsilon(cls, linear_data):
    """Rows inside the unit ball and |y| < 1: nothing is clipped, so at eps=50 the fit is close to OLS."""
    X, y, w = linear_data
    ols = OLSRegressor().fit(X, y).coef_
    est = cls(epsilon=50.0, delta=1e-6, x_bound=1.0, y_bound=1.0, random_state=0).fit(X, y)
    # noise on X^T y ~ 1/mu per coordinate, X^T X ~ n/(4d) I: error ~ (1/mu) * 4d/n ~ 1e-4; allow 5e-3
    assert np.max(np.abs(est.coef_ - ols)) < 5e-3
    assert np.max(np.abs(est.coef_ - w)) < 5e-3


def test_boosted_learning_rate_schedules(linear_data):
    X, y, w = linear_data
    for lr in ["constant", "1/t", "1/sqrt(t)"]:
        est = BoostedAdaSSPRegressor(epsilon=50.0, lr_schedule=lr, n_rounds=200, random_state=0).fit(X, y)
        assert np.max(np.abs(est.coef_ - w)) < 2e-2, lr


def test_zero_dimensional_case():
    """Paper 000 Sec. VI: estimating a mean with tau < |mu|.  One-shot AdaSSP's mean is at most tau;
    BoostedAdaSSP converges to the mean (the constant column is the only feature)."""
    rng = np.random.default_rng(7)
    true_mean, tau, n = 5.0, 1.0, 20_000
    y = rng.normal(true_mean, 1.0, size=n)
    X = np.zeros((n, 0))
    ada = [AdaSSPRegressor(epsilon=1.0, y_bound=tau, fit_intercept=True, random_state=s).fit(X, y).intercept_
           for s in range(20)]
    boosted = [BoostedAdaSSPRegressor(epsilon=1.0, y_bound=tau, fit_intercept=True, random_state=s).fit(X, y)
               .intercept_ for s in range(20)]
    assert np.mean(ada) <= tau + 0.05  # biased by at least |mu| - tau
    # boosted: noise per round on X^T g has std tau*sqrt(T)/mu_2 ~ 10*sqrt(3)/0.24/n ~ 4e-3 per round in theta
    assert abs(np.mean(boosted) - true_mean) < 0.05
    assert abs(np.mean(boosted) - true_mean) < abs(np.mean(ada) - true_mean) / 20


def test_noise_spread_matches_ledger():
    """With X = one constant column and lambda = 0, AdaSSP's theta = (n + e1)^-1 (S + e2).
    The delta method gives sd(theta) ~ sqrt(s2^2 + (S/n)^2 s1^2) / n; compare over 400 seeds."""
    rng = np.random.default_rng(1)
    n = 2_000
    y = rng.uniform(-1, 1, size=n) + 0.3
    X = np.ones((n, 1))
    fits = [AdaSSPRegressor(epsilon=0.5, random_state=s).fit(X, y) for s in range(400)]
    led = fits[0].privacy_ledger_
    s1 = next(e.noise_scale for e in led.entries if e.name == "X^T X")
    s2 = next(e.noise_scale for e in led.entries if e.name == "X^T y")
    assert all(f.ridge_lambda_ == 0 for f in fits)
    S = np.clip(y, -1, 1).sum()
    predicted = math.sqrt(s2**2 + (S / n) ** 2 * s1**2) / n
    sd = np.std([f.coef_[0] for f in fits], ddof=1)
    # sd of a sample sd over m=400 draws: predicted / sqrt(2(m-1)) ~ 3.5%; 5 standard errors
    assert sd == pytest.approx(predicted, rel=5 / math.sqrt(2 * 399))


def test_prediction_applies_the_fit_feature_map():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(5000, 3)) * 3
    y = X @ np.array([1.0, -1.0, 0.5])
    est = AdaSSPRegressor(epsilon=10.0, x_bound=1.0, y_bound=100.0, fit_intercept=True, random_state=0).fit(X, y)
    Phi = np.hstack([X, np.ones((len(X), 1))])
    Phi = Phi * np.minimum(1, 1.0 / np.linalg.norm(Phi, axis=1))[:, None]
    np.testing.assert_allclose(est.predict(X), Phi @ np.r_[est.coef_, est.intercept_])


@pytest.mark.parametrize("cls", PRIVATE)
@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"epsilon": 0}, "epsilon"),
        ({"epsilon": -1.0}, "epsilon"),
        ({"delta": 0}, "delta"),
        ({"delta": 1.0}, "delta"),
        ({"x_bound": 0.0}, "x_bound"),
        ({"y_bound": -2.0}, "y_bound"),
    ],
)
def test_bad_hyperparameters(cls, kwargs, match, linear_data):
    X, y, _ = linear_data
    with pytest.raises(ValueError, match=match):
        cls(**kwargs).fit(X[:100], y[:100])


@pytest.mark.parametrize("cls", PRIVATE + [OLSRegressor, RidgeRegressor])
def test_bad_data(cls):
    X = np.ones((10, 2))
    y = np.ones(10)
    bad_X = X.copy()
    bad_X[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        cls().fit(bad_X, y)
    bad_y = y.copy()
    bad_y[0] = np.inf
    with pytest.raises(ValueError, match="NaN or infinite"):
        cls().fit(X, bad_y)
    with pytest.raises(ValueError, match="different numbers of samples"):
        cls().fit(X, y[:5])
    if cls.private:  # n is not public: 0 rows is a dataset like any other (noise on empty statistics)
        assert np.all(np.isfinite(cls(random_state=0).fit(X[:0], y[:0]).predict(X)))
    else:
        with pytest.raises(ValueError, match="empty"):
            cls().fit(X[:0], y[:0])


def test_boosted_bad_rounds_and_schedule(linear_data):
    X, y, _ = linear_data
    with pytest.raises(ValueError, match="n_rounds"):
        BoostedAdaSSPRegressor(n_rounds=0).fit(X, y)
    with pytest.raises(ValueError, match="lr_schedule"):
        BoostedAdaSSPRegressor(lr_schedule="fast").fit(X, y)


def test_nonprivate_baselines_have_empty_ledgers(linear_data):
    X, y, w = linear_data
    for est in [OLSRegressor(), RidgeRegressor(alpha=1e-3)]:
        est.fit(X, y)
        assert len(est.privacy_ledger_) == 0
        assert np.max(np.abs(est.coef_ - w)) < 1e-3


@pytest.mark.parametrize("cls", PRIVATE + [OLSRegressor])
def test_sklearn_pipeline_and_cross_val(cls, linear_data):
    X, y, _ = linear_data
    kw = {"random_state": 0} if cls is OLSRegressor else {"epsilon": 5.0, "random_state": 0}
    pipe = make_pipeline(FunctionTransformer(), cls(**kw))
    scores = cross_val_score(pipe, X[:5000], y[:5000], cv=3)
    # eps 5 on 3,333 unit-norm rows: close to OLS (R^2 near 1 on this data), far above a broken fit's ~0
    assert scores.shape == (3,) and np.all(scores > 0.9), scores


