"""Binary classification (paper 001): BoostedAdaSSP with three losses, non-private boosting, logistic regression."""

import math

import numpy as np
import pytest
import scipy.linalg
from scipy.special import expit
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from dpbench import algorithms
from dpbench.algorithms.base import clip_rows
from dpbench.algorithms.boosting import (
    LOSSES,
    BoostedAdaSSPClassifier,
    BoostedAdaSSPRegressor,
    loss_targets,
    loss_value,
    negative_gradient,
)
from dpbench.algorithms.nonprivate import BoostedLinearClassifier, LogisticRegressionClassifier
from dpbench.privacy import mu_from_epsilon_delta, split_mu

ALL = [BoostedAdaSSPClassifier, BoostedLinearClassifier, LogisticRegressionClassifier]


def chi2_ok(stat: float, dof: int, z: float = 5.0) -> bool:
    """A chi-square(dof) statistic within z standard deviations (sqrt(2 dof)) of its mean."""
    return abs(stat - dof) < z * math.sqrt(2 * dof)


@pytest.fixture(scope="module")
def clf_data():
    """A logistic model with rows inside the unit ball (so row clipping at 1 never acts); 20k train, 5k test."""
    rng = np.random.default_rng(5)
    n, d = 25_000, 5
    X = clip_rows(rng.normal(size=(n, d)) / (2 * math.sqrt(d)), 1.0)
    w = rng.normal(size=d)
    w *= 6 / np.linalg.norm(w)
    y = (rng.random(n) < expit(X @ w)).astype(int)
    return X[:20_000], y[:20_000], X[20_000:], y[20_000:]


def test_registry():
    est = algorithms.make("boosted_adassp_clf", epsilon=2.0)
    assert isinstance(est, BoostedAdaSSPClassifier) and est.epsilon == 2.0
    assert (est.loss, est.x_bound, est.y_bound, est.n_rounds, est.learning_rate, est.lr_schedule) == (
        "squared", 1.0, 1.0, 100, 1.0, "constant")
    for name, cls, private in [("boosted_adassp_clf", BoostedAdaSSPClassifier, True),
                               ("boosted_linear_clf", BoostedLinearClassifier, False),
                               ("logreg", LogisticRegressionClassifier, False)]:
        spec = algorithms.get_spec(name)
        assert spec.estimator is cls and spec.task == "classification" and spec.private is private
        assert cls.private is private


@pytest.mark.parametrize("loss", LOSSES)
def test_ledger_matches_budget(loss, clf_data):
    X, y, _, _ = clf_data
    eps, delta, xb, yb, T = 0.7, 1e-5, 0.8, 2.5, 60
    est = BoostedAdaSSPClassifier(epsilon=eps, delta=delta, loss=loss, x_bound=xb, y_bound=yb, n_rounds=T,
                                  random_state=0).fit(X, y)
    led = est.privacy_ledger_
    mu = mu_from_epsilon_delta(eps, delta)
    assert led.total_mu() == pytest.approx(mu, rel=1e-12)
    spent_eps, spent_delta = led.epsilon_delta(delta)
    assert spent_eps == pytest.approx(eps, rel=1e-9) and spent_delta == delta
    for e in led.entries:
        assert e.mechanism == "gaussian" and e.noise_scale == pytest.approx(e.sensitivity / e.mu, rel=1e-12)
    mu1, mu2, mu3 = split_mu(mu, [1, 1, 1])
    by_name = {e.name: e for e in led.entries}
    assert set(by_name) == {"X^T X", "lambda_min(X^T X)", "X^T clip(g_t)"}
    assert by_name["X^T X"].sensitivity == pytest.approx(xb**2) and by_name["X^T X"].mu == pytest.approx(mu1)
    assert by_name["lambda_min(X^T X)"].mu == pytest.approx(mu3)
    rounds = by_name["X^T clip(g_t)"]
    assert rounds.count == T and rounds.sensitivity == pytest.approx(xb * yb)
    assert rounds.mu == pytest.approx(mu2 / math.sqrt(T))


@pytest.mark.parametrize("loss", LOSSES)
def test_negative_gradients_are_table_1(loss):
    """g = -dL/ds per record (central differences, away from the hinge's kink), in the loss's label coding."""
    rng = np.random.default_rng(0)
    y01, s, h = rng.integers(0, 2, size=50).astype(float), rng.normal(0, 2, size=50), 1e-6
    keep = np.abs(1 - loss_targets("hinge", y01) * s) > 1e-3
    y, s = loss_targets(loss, y01[keep]), s[keep]
    numeric = [(loss_value(loss, y[i:i + 1], s[i:i + 1] - h) - loss_value(loss, y[i:i + 1], s[i:i + 1] + h)) / (2 * h)
               for i in range(len(s))]
    np.testing.assert_allclose(negative_gradient(loss, y, s), numeric, atol=1e-6)
    assert set(np.unique(y)) == ({0.0, 1.0} if loss == "logistic" else {-1.0, 1.0})


@pytest.mark.parametrize("cls", [BoostedLinearClassifier, LogisticRegressionClassifier])
def test_nonprivate_have_empty_ledgers(cls, clf_data):
    X, y, _, _ = clf_data
    est = cls().fit(X, y)
    assert len(est.privacy_ledger_) == 0 and est.privacy_ledger_.epsilon_delta(1e-6) == (0.0, 0.0)
    assert "epsilon" not in est.get_params()


def test_squared_loss_is_the_regressor_on_pm1_labels(clf_data):
    """Squared loss on +-1 labels is paper 000's BoostedAdaSSP: same releases, same draws, same model."""
    X, y, Xt, _ = clf_data
    kw = {"epsilon": 0.5, "x_bound": 0.7, "y_bound": 1.3, "n_rounds": 30, "lr_schedule": "1/sqrt(t)",
          "fit_intercept": True, "random_state": 11}
    clf = BoostedAdaSSPClassifier(loss="squared", **kw).fit(X, y)
    reg = BoostedAdaSSPRegressor(**kw).fit(X, 2.0 * y - 1)
    np.testing.assert_allclose(clf.decision_function(Xt), reg.predict(Xt), rtol=1e-12, atol=1e-12)
    assert clf.intercept_[0] == pytest.approx(reg.intercept_, rel=1e-12)


@pytest.mark.parametrize("loss", LOSSES)
def test_label_codings_give_the_same_model(loss, clf_data):
    X, y, Xt, _ = clf_data
    X, y = X[:3000], y[:3000]
    fits = [BoostedAdaSSPClassifier(loss=loss, n_rounds=10, classes=classes, random_state=3).fit(X, labels)
            for labels, classes in ((y, (0, 1)), (2 * y - 1, (-1, 1)), (np.where(y == 1, "yes", "no"), ("no", "yes")))]
    for f in fits[1:]:
        np.testing.assert_array_equal(f.decision_function(Xt), fits[0].decision_function(Xt))
    np.testing.assert_array_equal(fits[2].classes_, ["no", "yes"])
    assert set(fits[2].predict(Xt)) <= {"no", "yes"}
    np.testing.assert_array_equal(fits[1].predict(Xt), 2 * fits[0].predict(Xt) - 1)


@pytest.mark.parametrize("loss,y_bound,a", [("squared", 2.0, 0.0), ("squared", 1.0, 0.5), ("logistic", 1.0, 0.75),
                                           ("hinge", 1.0, 1.0)])
def test_round_noise_matches_ledger(loss, y_bound, a):
    """One constant feature, balanced labels: at theta = 0 the gradients sum to 0 for every loss, and near it the
    rounds follow theta_t = a theta_{t-1} + e_t / n (Gamma = 1/n up to its own O(1e-3) relative noise), with
    a = 1 - (1/n) sum_i d clip(g_i)/ds:
      squared, y_bound 2: g = y - s, a = 0;
      squared, y_bound 1: y - s leaves [-1, 1] on the side of the sign of -s and is clipped there, so only half
        the records respond: a = 1/2;
      logistic: sigma'(0) = 1/4, a = 3/4;   hinge: g = y while |s| < 1, a = 1 (a random walk).
    So n theta_T has variance s^2 sum_{k<T} a^(2k), s the ledger's per-round std.  Chi-square over m seeds."""
    n, T, m = 10_000, 4, 1000
    X, y = np.ones((n, 1)), np.tile([0, 1], n // 2)
    fits = [BoostedAdaSSPClassifier(epsilon=1.0, loss=loss, y_bound=y_bound, n_rounds=T, random_state=k).fit(X, y)
            for k in range(m)]
    assert all(f.ridge_lambda_ == 0 for f in fits)
    s = next(e.noise_scale for e in fits[0].privacy_ledger_.entries if e.name == "X^T clip(g_t)")
    var = s**2 * sum(a ** (2 * k) for k in range(T))
    z = np.array([n * f.coef_[0, 0] for f in fits])
    assert abs(z.mean()) < 5 * math.sqrt(var / m)
    assert chi2_ok(np.sum(z**2) / var, m)


@pytest.mark.parametrize("loss,y_bound", [("squared", 4.0), ("logistic", 1.0)])
def test_fixed_point_spread_around_nonprivate_at_large_epsilon(loss, y_bound, clf_data):
    """No clipping acts (rows in the unit ball; |g| < y_bound), so the noise-free boosting converges to the
    non-private fit theta* (X^T g(theta*) = 0).  Linearised there, delta_t = (I - Gamma H) delta_{t-1} + Gamma e_t
    with H = X^T diag(-dg/ds) X and Gamma ~ (X^T X)^{-1}; its stationary covariance solves a discrete Lyapunov
    equation.  The Mahalanobis distances of m private fits from the non-private one are chi-square(m d)."""
    X, y, _, _ = clf_data
    T, m, eps = 100, 20, 50.0
    ref = BoostedLinearClassifier(loss=loss, n_rounds=T).fit(X, y)
    s = X @ ref.theta_
    weights = np.ones(len(s)) if loss == "squared" else expit(s) * (1 - expit(s))
    if loss == "squared":
        assert np.max(np.abs(2 * y - 1 - s)) < y_bound
    gamma = np.linalg.inv(X.T @ X)
    A = np.eye(X.shape[1]) - gamma @ (X.T * weights) @ X
    fits = [BoostedAdaSSPClassifier(epsilon=eps, loss=loss, y_bound=y_bound, n_rounds=T, random_state=k).fit(X, y)
            for k in range(m)]
    std = next(e.noise_scale for e in fits[0].privacy_ledger_.entries if e.name == "X^T clip(g_t)")
    cov = scipy.linalg.solve_discrete_lyapunov(A, std**2 * gamma @ gamma)
    dev = np.array([f.theta_ - ref.theta_ for f in fits])
    assert chi2_ok(np.einsum("ki,ij,kj->", dev, np.linalg.inv(cov), dev), m * X.shape[1])


@pytest.mark.parametrize("loss", LOSSES)
def test_accuracy_at_large_epsilon_matches_logistic_regression(loss, clf_data):
    """On a logistic model with isotropic features every loss's linear score points the same way, so at eps=50
    the test accuracy is logistic regression's up to sampling: allow 3 standard errors of a difference of two
    accuracies on m test points, 3 sqrt(2 p (1 - p) / m)."""
    X, y, Xt, yt = clf_data
    base = LogisticRegressionClassifier(C=1e4).fit(X, y).score(Xt, yt)
    acc = BoostedAdaSSPClassifier(epsilon=50.0, loss=loss, random_state=0).fit(X, y).score(Xt, yt)
    assert acc > base - 3 * math.sqrt(2 * base * (1 - base) / len(yt))
    assert base > 0.65  # the data carry signal


def test_nonprivate_boosting_loss_curves(clf_data):
    """Paper 001 Fig. 1 / Sec. 2.2: with the squared loss every round after the first adds nothing; the logistic
    loss decreases monotonically (each round is a gradient step in the X^T X metric, step 1 <= 2 / (1/4)) to the
    unpenalised logistic MLE; the hinge loss decreases."""
    X, y, _, _ = clf_data
    sq = BoostedLinearClassifier(loss="squared", n_rounds=20).fit(X, y).loss_curve_
    np.testing.assert_allclose(sq, sq[0], rtol=1e-10)
    lg = BoostedLinearClassifier(loss="logistic", n_rounds=300).fit(X, y)
    assert np.all(np.diff(lg.loss_curve_) <= 1e-15)
    mle = LogisticRegression(C=np.inf, fit_intercept=False, tol=1e-12, max_iter=10_000).fit(X, y)
    assert lg.loss_curve_[-1] == pytest.approx(loss_value("logistic", y, X @ mle.coef_[0]), rel=1e-9)
    hg = BoostedLinearClassifier(loss="hinge", n_rounds=50).fit(X, y).loss_curve_
    assert hg[-1] < 0.9 * hg[0]


def test_intercept_only_logistic_converges_to_log_odds():
    """Zero features plus the constant column: the logistic boosting converges to logit(mean(y)) (the contraction
    per round is 1 - p(1-p) = 0.79, so 200 rounds leave < 1e-12)."""
    y = np.r_[np.ones(700), np.zeros(300)]
    est = BoostedLinearClassifier(loss="logistic", n_rounds=200, fit_intercept=True).fit(np.zeros((1000, 0)), y)
    assert est.coef_.shape == (1, 0) and est.intercept_.shape == (1,)
    assert est.intercept_[0] == pytest.approx(math.log(0.7 / 0.3), rel=1e-9)
    np.testing.assert_allclose(est.predict_proba(np.zeros((2, 0)))[:, 1], 0.7, rtol=1e-9)


def test_decision_function_uses_the_fit_feature_map(clf_data):
    X, y, Xt, _ = clf_data
    est = BoostedAdaSSPClassifier(epsilon=5.0, x_bound=0.3, fit_intercept=True, random_state=0).fit(3 * X, y)
    Phi = clip_rows(np.hstack([3 * Xt, np.ones((len(Xt), 1))]), 0.3)
    np.testing.assert_allclose(est.decision_function(3 * Xt), Phi @ np.r_[est.coef_[0], est.intercept_])
    assert est.coef_.shape == (1, X.shape[1])


def test_predict_proba_only_where_scores_are_log_odds(clf_data):
    X, y, Xt, _ = clf_data
    for est in [BoostedAdaSSPClassifier(loss="logistic", random_state=0), BoostedLinearClassifier(loss="logistic"),
                LogisticRegressionClassifier()]:
        est.fit(X[:2000], y[:2000])
        p = est.predict_proba(Xt)
        np.testing.assert_allclose(p[:, 1], expit(est.decision_function(Xt)))
        np.testing.assert_allclose(p.sum(axis=1), 1.0)
        np.testing.assert_array_equal(est.predict(Xt), est.classes_[(p[:, 1] > 0.5).astype(int)])
    for loss in ["squared", "hinge"]:
        assert not hasattr(BoostedAdaSSPClassifier(loss=loss), "predict_proba")


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"epsilon": 0}, "epsilon"),
        ({"delta": 0.0}, "delta"),
        ({"x_bound": -1.0}, "x_bound"),
        ({"y_bound": 0.0}, "y_bound"),
        ({"loss": "cubic"}, "loss"),
        ({"n_rounds": 0}, "n_rounds"),
        ({"lr_schedule": "fast"}, "lr_schedule"),
        ({"failure_prob": 1.0}, "failure_prob"),
    ],
)
def test_bad_hyperparameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        BoostedAdaSSPClassifier(**kwargs).fit(np.ones((10, 2)), np.tile([0, 1], 5))


def test_bad_nonprivate_hyperparameters():
    X, y = np.ones((10, 2)), np.tile([0, 1], 5)
    with pytest.raises(ValueError, match="alpha"):
        BoostedLinearClassifier(alpha=-1.0).fit(X, y)
    with pytest.raises(ValueError, match="'C' parameter"):
        LogisticRegressionClassifier(C=0.0).fit(X, y)


@pytest.mark.parametrize("cls", ALL)
def test_bad_labels_and_data(cls):
    X = np.random.default_rng(0).normal(size=(12, 2))
    with pytest.raises(ValueError, match="Only binary classification.*multiclass"):
        cls().fit(X, np.arange(12) % 3)
    with pytest.raises(ValueError, match="continuous"):
        cls().fit(X, np.linspace(0, 1, 12))
    if cls.private:  # the label set is the public `classes`
        with pytest.raises(ValueError, match=r"label\(s\) \[2\] outside the public label set"):
            cls().fit(X, np.tile([0, 2], 6))
        assert list(cls().fit(X, np.ones(12)).classes_) == [0, 1]  # one class in the rows: a fit like any other
    else:  # read from the rows
        with pytest.raises(ValueError, match="only 1 class"):
            cls().fit(X, np.ones(12))
    bad = X.copy()
    bad[0, 0] = np.inf
    with pytest.raises(ValueError, match="NaN or infinite"):
        cls().fit(bad, np.tile([0, 1], 6))
    with pytest.raises(ValueError, match="X contains complex numbers"):  # not a cast that drops the imaginary part
        cls().fit(X + 1j, np.tile([0, 1], 6))
    with pytest.raises(ValueError, match="different numbers of samples"):
        cls().fit(X, np.tile([0, 1], 3))


@pytest.mark.parametrize("cls", ALL)
def test_sklearn_pipeline_and_cross_val(cls, clf_data):
    X, y, _, _ = clf_data
    est = cls(random_state=0, **({"classes": ("neg", "pos")} if cls.private else {}))
    assert clone(est).get_params() == est.get_params()
    labels = np.where(y[:3000] == 1, "pos", "neg")
    scores = cross_val_score(make_pipeline(StandardScaler(), est), X[:3000], labels, cv=3, scoring="accuracy")
    assert scores.shape == (3,) and np.all((scores >= 0) & (scores <= 1))




def test_one_scale_budget_split_gives_every_release_one_noise_scale():
    """budget_ratio='one_scale' (a:b:c = 1 : sqrt(T) : 1): X^T X, lambda_min and each of the T per-round
    releases get the same mu, so the same noise std per unit sensitivity; the ledger still composes to the budget."""
    from dpbench.algorithms.boosting import BoostedAdaSSPRegressor
    from dpbench.privacy import mu_from_epsilon_delta

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(500, 3)), rng.normal(size=500)
    T = 16
    est = BoostedAdaSSPRegressor(epsilon=1.0, n_rounds=T, budget_ratio="one_scale", random_state=0).fit(X, y)
    mus = {e.name: e.mu for e in est.privacy_ledger_.entries}
    assert len(set(np.round(list(mus.values()), 12))) == 1
    assert math.isclose(est.privacy_ledger_.total_mu(), mu_from_epsilon_delta(1.0, 1e-6), rel_tol=1e-9)


def test_coefficients_do_not_move():
    """Coefficients of fixed-seed fits as the code before the float32 option and the row-sorted batch
    (commit b0a47d8) printed them: the single fit to 1e-12, the batched fit (other summation order) to 1e-9."""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(400, 3)) * rng.uniform(0.2, 2.0, size=(400, 1))
    y = X @ np.array([1.0, -2.0, 0.5]) + rng.normal(size=400)
    kw = {"epsilon": 2.0, "n_rounds": 12, "learning_rate": 0.8}
    runs = [{"x_bound": 1.5, "y_bound": 2.0, "random_state": 1},
            {"x_bound": 0.4, "y_bound": 0.7, "lr_schedule": "1/t", "fit_intercept": True, "random_state": 2}]
    pinned = [[1.3206319525899881, -2.959704602323822, 0.7651601311833106],
              [3.5175845715796497, -5.098588300471172, 1.8603561450219002, 0.09383649910221481]]
    for p, theta in zip(runs, pinned, strict=True):
        np.testing.assert_allclose(BoostedAdaSSPRegressor(**kw, **p).fit(X, y).theta_, theta, rtol=1e-12)
    other = {**runs[1], "fit_intercept": False}  # a batch shares fit_intercept; two clip bounds
    batch = BoostedAdaSSPRegressor.fit_batch([BoostedAdaSSPRegressor(**kw, **runs[0]),
                                              BoostedAdaSSPRegressor(**kw, **other)], X, y)
    np.testing.assert_allclose(batch[0].theta_, pinned[0], rtol=1e-9)
    np.testing.assert_allclose(batch[1].theta_, [2.565418315329577, -3.628547217307251, 1.24462202569666], rtol=1e-9)
    clf = BoostedAdaSSPClassifier(loss="logistic", x_bound=0.9, random_state=3, **kw).fit(X, y > 0)
    np.testing.assert_allclose(clf.theta_, [2.085951681324433, -2.6151780645541027, 0.5720037030856642], rtol=1e-12)
