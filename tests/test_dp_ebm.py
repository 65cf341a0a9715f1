"""DP-EBM wrappers: public bounds only, explicit feature types, interpret's accounting, ledger, sklearn API."""

import math
import re
import warnings

import numpy as np
import pytest
from interpret.privacy import DPExplainableBoostingRegressor
from scipy.special import expit
from sklearn.base import clone
from sklearn.model_selection import cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from dpbench import algorithms
from dpbench.algorithms.classification import LogisticRegressionClassifier
from dpbench.algorithms.dp_ebm import DPEBMClassifier, DPEBMRegressor
from dpbench.privacy import mu_from_epsilon_delta

FAST = {"max_rounds": 5, "random_state": 0}  # a handful of rounds keeps every fit ~10 ms


@pytest.fixture(scope="module")
def reg_data():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(4000, 3))
    y = X @ np.array([1.0, -0.5, 0.25]) + rng.normal(0, 0.1, size=4000)
    return X[:2000], y[:2000], X[2000:], y[2000:]


@pytest.fixture(scope="module")
def clf_data():
    rng = np.random.default_rng(5)
    X = rng.uniform(-1, 1, size=(7000, 3))
    y = (rng.random(7000) < expit(X @ np.array([3.0, -2.0, 1.0]))).astype(int)
    return X[:2000], y[:2000], X[2000:], y[2000:]


def privacy_warnings(fit) -> list[str]:
    """Messages of the warnings mentioning privacy that `fit()` emits."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit()
    return [str(w.message) for w in caught if re.search("privacy", str(w.message), re.IGNORECASE)]


def test_registry():
    for name, cls, task in [("dp_ebm", DPEBMRegressor, "regression"), ("dp_ebm_clf", DPEBMClassifier,
                                                                          "classification")]:
        spec = algorithms.get_spec(name)
        assert spec.estimator is cls and spec.task == task and spec.private
        assert {"x_bound", "max_rounds", "max_leaves"} <= set(spec.tuning_space)  # paper 000 Table I
        assert "feature_types" in cls().get_params()  # the runner passes the schema's types
    assert algorithms.make("dp_ebm_clf").max_leaves == 100  # paper 001's main setting
    assert algorithms.make("dp_ebm").y_bound == 1.0


@pytest.mark.parametrize("cls", [DPEBMRegressor, DPEBMClassifier])
def test_ledger_is_one_entry_for_the_requested_budget(cls, reg_data):
    X, y, _, _ = reg_data
    y = y if cls is DPEBMRegressor else (y > 0).astype(int)
    eps, delta = 0.8, 1e-5
    est = cls(epsilon=eps, delta=delta, **FAST).fit(X, y)
    (entry,) = est.privacy_ledger_.entries
    assert entry.mechanism == "interpret_dp_ebm" and entry.mu is None
    assert (entry.epsilon, entry.delta, entry.count) == (eps, delta, 1)
    assert entry.noise_scale == est.model_.noise_scale_boosting_
    spent = est.privacy_ledger_.epsilon_delta(delta)
    assert spent[0] == pytest.approx(eps, rel=1e-9) and spent[1] == pytest.approx(delta, rel=1e-9)


def test_interpret_noise_matches_our_accounting(reg_data):
    """The one-entry ledger trusts interpret's split: binning gets (f eps, delta/2) over d histograms, boosting
    (eps - f eps, delta/2) over R d updates of sensitivity (y range) * learning rate, each GDP-composed.  Recompute
    both noise scales with dpbench's own (eps, delta) -> mu and compare; they compose to exactly (eps, delta)."""
    X, y, _, _ = reg_data
    eps, delta, yb, lr, R, f = 2.0, 1e-5, 3.0, 0.05, 7, 0.2
    d = X.shape[1]
    est = DPEBMRegressor(epsilon=eps, delta=delta, y_bound=yb, learning_rate=lr, max_rounds=R, bin_budget_frac=f,
                         random_state=0).fit(X, y)
    boost = 2 * yb * lr * math.sqrt(R * d) / mu_from_epsilon_delta((1 - f) * eps, delta / 2)
    binning = math.sqrt(d) / mu_from_epsilon_delta(f * eps, delta / 2)
    assert est.model_.noise_scale_boosting_ == pytest.approx(boost, rel=1e-6)
    assert est.model_.noise_scale_binning_ == pytest.approx(binning, rel=1e-6)
    assert est.privacy_ledger_.entries[0].sensitivity == pytest.approx(2 * yb * lr)


def test_bounds_and_types_are_passed_explicitly():
    """interpret receives privacy_bounds = (-x_bound, x_bound) per feature, the target bounds and the schema's
    feature types, uses those bounds (not the data's min/max) and emits no privacy warning; interpret called
    without them does warn (the detection works)."""
    rng = np.random.default_rng(1)
    X = np.column_stack([rng.normal(0, 3, 500), rng.integers(0, 2, 500), rng.normal(0, 0.1, 500)])
    y = X[:, 0] + rng.normal(size=500)
    types = ["continuous", "nominal", "continuous"]
    est = DPEBMRegressor(x_bound=2.0, y_bound=4.0, feature_types=types, **FAST)
    assert privacy_warnings(lambda: est.fit(X, y)) == []
    m = est.model_
    np.testing.assert_array_equal(m.privacy_bounds, [[-2.0, 2.0]] * 3)
    # column 2 spans only +-0.3: what interpret used is the public bound, not the data's range
    np.testing.assert_array_equal(m.feature_bounds_[[0, 2]], [[-2.0, 2.0]] * 2)
    assert (m.privacy_target_min, m.privacy_target_max) == (-4.0, 4.0)
    assert list(m.feature_types) == types and list(m.feature_types_in_) == types
    default = DPEBMClassifier(**FAST)
    assert privacy_warnings(lambda: default.fit(X, y > 0)) == []
    assert list(default.model_.feature_types_in_) == ["continuous"] * 3
    raw = privacy_warnings(lambda: DPExplainableBoostingRegressor(max_rounds=5, n_jobs=1).fit(X, y))
    assert any("Automatic determination of the feature" in w for w in raw)
    assert any("min/max values per feature" in w for w in raw)


def test_data_are_clipped_to_the_bounds():
    rng = np.random.default_rng(2)
    X, y = rng.normal(0, 3, size=(500, 2)), rng.normal(0, 5, size=500)
    Xc, yc = np.clip(X, -1.5, 1.5), np.clip(y, -2.0, 2.0)
    assert np.mean(X != Xc) > 0.3 and np.mean(y != yc) > 0.3
    a = DPEBMRegressor(x_bound=1.5, y_bound=2.0, **FAST).fit(X, y)
    b = DPEBMRegressor(x_bound=1.5, y_bound=2.0, **FAST).fit(Xc, yc)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    np.testing.assert_array_equal(a.predict(X), a.predict(Xc))  # the same clip at predict time


def test_seeded_from_random_state(reg_data):
    X, y, Xt, _ = reg_data
    p1, p2, p3 = (DPEBMRegressor(max_rounds=5, random_state=s).fit(X, y).predict(Xt) for s in (3, 3, 4))
    np.testing.assert_array_equal(p1, p2)
    assert not np.allclose(p1, p3)
    assert np.all(np.isfinite(DPEBMRegressor(max_rounds=5).fit(X, y).predict(Xt)))  # random_state=None works


def test_interpret_failure_is_a_clear_runtime_error(reg_data):
    X, y, _, _ = reg_data
    with pytest.raises(RuntimeError, match=r"DP-EBM \(interpret\) failed to fit at epsilon=1e-06") as info:
        DPEBMRegressor(epsilon=1e-6, **FAST).fit(X, y)
    assert info.value.__cause__ is not None


def test_regression_reaches_its_nonprivate_optimum_at_large_epsilon(reg_data):
    """At eps=600 the DP noise is negligible and boosting with random splits converges to the least-squares
    additive step function on DP-EBM's own bins (the non-private optimum of its model class, fitted here by
    least squares on bin indicators).  The test MSEs must agree within 3 standard errors of the baseline's test
    MSE (sd of the per-point squared errors / sqrt(m)).  (eps=600: interpret's own root finder overflows near
    1000.)"""
    X, y, Xt, yt = reg_data
    est = DPEBMRegressor(epsilon=600.0, y_bound=2.0, learning_rate=0.1, max_rounds=300, random_state=0).fit(X, y)
    assert np.max(np.abs(y)) < 2.0

    def indicators(Z):
        cuts = [est.model_.bins_[j][0] for j in range(Z.shape[1])]
        return np.hstack([np.eye(len(c) + 1)[np.searchsorted(c, Z[:, j], side="right")] for j, c in enumerate(cuts)])

    coef = np.linalg.lstsq(indicators(X), y, rcond=None)[0]
    base_err = (indicators(Xt) @ coef - yt) ** 2
    mse = np.mean((est.predict(Xt) - yt) ** 2)
    assert abs(mse - base_err.mean()) < 3 * base_err.std() / math.sqrt(len(yt))


def test_classifier_accuracy_at_large_epsilon(clf_data):
    """Additive logistic model: at eps=50 DP-EBM's test accuracy is logistic regression's up to sampling,
    3 sqrt(2 p (1 - p) / m)."""
    X, y, Xt, yt = clf_data
    base = LogisticRegressionClassifier(C=1e4, fit_intercept=True).fit(X, y).score(Xt, yt)
    est = DPEBMClassifier(epsilon=50.0, learning_rate=0.1, max_rounds=100, max_leaves=3, random_state=0).fit(X, y)
    assert est.score(Xt, yt) > base - 3 * math.sqrt(2 * base * (1 - base) / len(yt))
    assert base > 0.7


def test_classifier_labels_and_scores(clf_data):
    X, y, Xt, _ = clf_data
    est = DPEBMClassifier(**FAST).fit(X, np.where(y == 1, "yes", "no"))
    np.testing.assert_array_equal(est.classes_, ["no", "yes"])
    p, s = est.predict_proba(Xt), est.decision_function(Xt)
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    np.testing.assert_allclose(p[:, 1], expit(s), rtol=1e-9)
    np.testing.assert_array_equal(est.predict(Xt), np.where(s > 0, "yes", "no"))
    with pytest.raises(ValueError, match="Only binary classification"):
        DPEBMClassifier(**FAST).fit(X, np.arange(len(X)) % 3)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"epsilon": 0.0}, "epsilon"),
        ({"delta": 1.0}, "delta"),
        ({"x_bound": 0.0}, "x_bound"),
        ({"y_bound": -1.0}, "y_bound"),
        ({"max_rounds": 0}, "max_rounds"),
        ({"max_leaves": 0}, "max_leaves"),
        ({"max_bins": 2}, "max_bins"),
        ({"learning_rate": 0.0}, "learning_rate"),
        ({"bin_budget_frac": 1.0}, "bin_budget_frac"),
        ({"feature_types": ["continuous"]}, "feature_types has 1 entries but X has 2"),
        ({"feature_types": ["continuous", "auto"]}, "feature_types entries"),
    ],
)
def test_bad_hyperparameters(kwargs, match):
    X, y = np.random.default_rng(0).normal(size=(20, 2)), np.arange(20.0)
    with pytest.raises(ValueError, match=match):
        DPEBMRegressor(**{**FAST, **kwargs}).fit(X, y)


@pytest.mark.parametrize("cls", [DPEBMRegressor, DPEBMClassifier])
def test_bad_data(cls):
    X, y = np.random.default_rng(0).normal(size=(20, 2)), np.tile([0, 1], 10)
    bad = X.copy()
    bad[1, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        cls(**FAST).fit(bad, y)
    with pytest.raises(ValueError, match="different numbers of samples"):
        cls(**FAST).fit(X, y[:3])


@pytest.mark.parametrize("cls", [DPEBMRegressor, DPEBMClassifier])
def test_sklearn_api(cls, reg_data):
    from sklearn.utils.estimator_checks import check_estimator

    X, y, _, _ = reg_data
    y = y if cls is DPEBMRegressor else (y > 0).astype(int)
    est = cls(epsilon=5.0, **FAST)
    assert clone(est).get_params() == est.get_params()
    scores = cross_val_score(make_pipeline(FunctionTransformer(), est), X, y, cv=3)
    assert scores.shape == (3,) and np.all(np.isfinite(scores))
    # sklearn wants R^2 > 0.5 from ~200 unscaled samples; a private fit at eps=1 is noise-dominated there.
    # (and accuracy > 0.83 from a 5-round private classifier); the same reason, not an API defect.
    check = "check_regressors_train" if cls is DPEBMRegressor else "check_classifiers_train"
    expected = {check: "private fit of ~200 samples at eps=1, 5 rounds"}
    check_estimator(cls(**FAST), expected_failed_checks=expected)
