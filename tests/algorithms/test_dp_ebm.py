"""DP-EBM wrappers: private under add/remove with n not public (no categories, bin threshold, residual bound or
bag weight from the data), public bounds, the two-entry ledger, guards on interpret's internals, sklearn API."""

import math
import re
import threading
import warnings

import interpret.glassbox._ebm._boost as interpret_boost
import interpret.glassbox._ebm._ebm as interpret_ebm
import interpret.utils._preprocessor as interpret_preprocessor
import numpy as np
import pytest
from interpret.privacy import DPExplainableBoostingRegressor
from interpret.utils._native import Booster, Native
from interpret.utils._privacy import calc_gdp_noise_multi, private_categorical_binning, private_numeric_binning
from scipy.special import expit
from sklearn.base import clone
from sklearn.model_selection import cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from dpbench import algorithms
from dpbench.algorithms import _interpret_patch as patch
from dpbench.algorithms._interpret_patch import InterpretChangedError, public_threshold_numeric_binning
from dpbench.algorithms.base import released_zero_model
from dpbench.algorithms.dp_ebm import DPEBMClassifier, DPEBMRegressor, range_grid, reachable_score_range
from dpbench.algorithms.nonprivate import LogisticRegressionClassifier
from dpbench.audit import audit_settings
from dpbench.privacy import mu_from_epsilon_delta
from dpbench.summary import spent_budget
from dpbench.tuning.spaces import tuning_space

FAST = {"n_rounds": 5, "random_state": 0}  # a handful of rounds keeps every fit ~10 ms
BOX = {"y_bound": 1e9}  # a public label box (below 1e10): a regressor whose label range is not found trains in it
PUBLIC = {"private_bounds": False}  # the public boxes [-feature_bound, feature_bound], [-y_bound, y_bound]


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


def same_bins(a, b) -> bool:
    return len(a) == len(b) and all(np.array_equal(x[0], y[0]) for x, y in zip(a, b, strict=True))


def test_registry():
    for name, cls, task in [("dp_ebm", DPEBMRegressor, "regression"), ("dp_ebm_clf", DPEBMClassifier,
                                                                          "classification")]:
        spec = algorithms.get_spec(name)
        assert spec.estimator is cls and spec.task == task and spec.private
        assert {"feature_bound", "n_rounds", "max_leaves"} <= set(tuning_space(spec.name))  # paper 000 Table I
        assert "feature_types" in cls().get_params()  # the runner passes the schema's types
        assert audit_settings(name).params["n_rounds"] <= 20
    assert algorithms.make("dp_ebm_clf").max_leaves == 100  # paper 001's main setting
    est = algorithms.make("dp_ebm")  # private feature bounds and label range inside public boxes (issue 36)
    assert (est.y_bound, est.feature_bound, est.private_bounds) == (1e10, 1e5, True)


# ----------------------------------------------------------------------------- categories never from the data

def test_a_level_in_one_row_does_not_change_the_bins():
    """The audit's case: a one-hot column whose level is present in exactly one of 2000 rows.  Fitted with and
    without that row under the same 20 seeds, every released bin (cuts of every feature) is identical: the
    column exists in both (the schema is public), its cuts are edges of the public grid over [0, 1], and the
    row only adds 1 to one cell of each noisy histogram -- a change that moves a cut only if a running sum
    lands within 1 of the merge threshold (noise sd ~ 90 per bin: a few seeds in a hundred; at most 2 of 20
    allowed).  Where the cuts agree, the noisy bin weights differ by at most that 1 per feature (the accounted
    sensitivity).  interpret left to bin the column as 'nominal' takes the
    category set from the rows and changes the bins in most of the same seeds (the test has teeth)."""
    rng = np.random.default_rng(11)
    n, rare_row = 2000, 123
    X = np.column_stack([rng.uniform(-1, 1, n), np.zeros(n), rng.integers(0, 2, n)])
    X[rare_row, 1] = 1.0
    y = X[:, 0] + 0.5 * X[:, 2] + rng.normal(0, 0.2, n)
    types = ["continuous", "nominal", "nominal"]
    keep = np.arange(n) != rare_row
    grid = np.linspace(0.0, 1.0, 2 * (32 - 1) + 1)
    raw_changed = moved = 0
    for seed in range(20):
        kw = dict(feature_types=types, n_rounds=2, random_state=seed, **BOX)
        with_row = DPEBMRegressor(**kw).fit(X, y).model_
        without = DPEBMRegressor(**kw).fit(X[keep], y[keep]).model_
        assert list(with_row.feature_types_in_) == ["continuous"] * 3
        assert np.all(np.isin(with_row.bins_[1][0], grid)) and np.all(np.isin(without.bins_[1][0], grid))
        if same_bins(with_row.bins_, without.bins_):
            for a, b in zip(with_row.bin_weights_, without.bin_weights_, strict=True):
                assert 0.0 <= a.sum() - b.sum() <= 1.0 + 1e-9 and np.count_nonzero(~np.isclose(a, b, atol=1e-9)) <= 1
        else:
            moved += 1
        raw = dict(feature_types=types, privacy_bounds={0: (-1.0, 1.0)}, privacy_target_min=-1.0,
                   privacy_target_max=1.0, max_rounds=2, n_jobs=1, random_state=seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            a = DPExplainableBoostingRegressor(**raw).fit(X, np.clip(y, -1, 1))
            b = DPExplainableBoostingRegressor(**raw).fit(X[keep], np.clip(y[keep], -1, 1))
        raw_changed += not (a.bins_[1][0] == b.bins_[1][0])
    assert moved <= 2 and raw_changed >= 15


def test_categorical_binning_is_unreachable_in_a_dpbench_fit_only():
    """Inside dpbench's fit context interpret's categorical binning raises; outside (other fits, other threads)
    interpret's own functions run, and everything is restored afterwards."""
    col = np.array(["a", "b", "a"])
    native = Native.get_native_singleton()
    expected = private_categorical_binning(col, None, 1e-9, 2, native.create_rng(0))
    with patch.private_interpret(None):
        assert interpret_preprocessor.private_numeric_binning is not private_numeric_binning
        with pytest.raises(RuntimeError, match="categorical binning"):
            interpret_preprocessor.private_categorical_binning(col, None, 1.0, 4, None)
        other = {}
        thread = threading.Thread(target=lambda: other.update(
            out=interpret_preprocessor.private_categorical_binning(col, None, 1e-9, 2, native.create_rng(0))))
        thread.start()
        thread.join()
        for part, exp in zip(other["out"], expected, strict=True):  # interpret's own function ran in the other thread
            np.testing.assert_array_equal(part, exp)
    assert interpret_preprocessor.private_numeric_binning is private_numeric_binning
    assert interpret_preprocessor.private_categorical_binning is private_categorical_binning
    assert interpret_boost.Booster is Booster


# ----------------------------------------------------------------------------- the merge threshold is not n

def test_merge_threshold_is_the_noisy_total_not_n(monkeypatch):
    """Hold the noisy histogram fixed (the noise generator is replaced so that counts + noise = h) for columns
    of 1000 and 3000 records: dpbench's binning returns the same cuts and weights for both, because it reads the
    data only through h; interpret's returns different ones (its threshold is len(X_col) / max_bins, the leak).
    When sum(h) = n the two agree exactly: the copy is interpret's function but for the threshold."""
    native = Native.get_native_singleton()
    max_bins, lo, hi = 31, -1.0, 1.0
    h = np.abs(np.random.default_rng(3).normal(40.0, 30.0, 2 * max_bins))
    h *= 2000.0 / h.sum()  # the noisy total: 2000

    def binned(binning, n):
        col = np.random.default_rng(n).uniform(lo, hi, n)
        counts = np.histogram(col, bins=2 * max_bins, range=(lo, hi))[0]
        monkeypatch.setattr(native, "generate_gaussian_random", lambda rng, stddev, count: h - counts)
        cuts, weights = binning(col, None, 5.0, max_bins, lo, hi, None)
        monkeypatch.undo()
        return cuts, np.array(weights)

    ours = [binned(public_threshold_numeric_binning, n) for n in (1000, 3000)]
    np.testing.assert_array_equal(ours[0][0], ours[1][0])
    np.testing.assert_allclose(ours[0][1], ours[1][1], rtol=1e-12)  # h - counts + counts: h up to rounding
    theirs = [binned(private_numeric_binning, n) for n in (1000, 3000)]
    assert len(theirs[0][0]) != len(theirs[1][0])  # n leaks through interpret's threshold
    for part, other in zip(binned(private_numeric_binning, 2000), ours[0], strict=True):  # sum(h) = n = 2000
        np.testing.assert_allclose(part, other, rtol=1e-12)


def test_threshold_of_a_fit_is_read_from_its_released_weights(reg_data):
    """In a fit, each merged bin but the last reaches the threshold sum(bin_weights_) / (max_bins - 1) computed
    from what the model releases; an added record far from every cut (in the last bin) leaves the cuts as they
    are and the released weights change by at most 1 (its noisy count)."""
    X, y, _, _ = reg_data
    a = DPEBMRegressor(**FAST).fit(X, y).model_
    for w in a.bin_weights_:
        assert np.all(w[1:-2] >= w.sum() / 31 - 1e-9)
    record = np.full((1, X.shape[1]), 0.999)
    b = DPEBMRegressor(**FAST).fit(np.vstack([X, record]), np.append(y, 0.0)).model_
    assert same_bins(a.bins_, b.bins_)
    for wa, wb in zip(a.bin_weights_, b.bin_weights_, strict=True):
        np.testing.assert_allclose(wa[:-2], wb[:-2], atol=1e-9)  # every bin but the record's (the last)
        assert 0.0 <= wb[-2] - wa[-2] <= 1.0 + 1e-9


# ----------------------------------------------------------------------------- the residual bound

def test_regression_model_stays_in_the_target_range():
    """interpret's regression gradient f(x) - y is bounded by the target range only while f is: on 200 records
    its model leaves [-1, 1] by several times (so one record's gradient exceeds the sensitivity charged).
    dpbench projects each update: over the whole feature box the released model stays in [-y_bound, y_bound],
    and the projection's bookkeeping equals the native model after every step."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(200, 5))
    y = np.clip(X @ np.array([0.5, -0.4, 0.3, 0.2, 0.1]) + rng.normal(0, 0.3, 200), -1, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        raw = DPExplainableBoostingRegressor(privacy_bounds=np.tile([-1.0, 1.0], (5, 1)), privacy_target_min=-1.0,
                                             privacy_target_max=1.0, n_jobs=1, random_state=4).fit(X, y)
    assert max(abs(v) for v in reachable_score_range(raw)) > 2.0
    checked = []
    apply = patch._BoundedBooster.apply_term_update

    def checking_apply(self):
        metric = apply(self)
        for j, term in enumerate(self._terms):
            np.testing.assert_array_equal(term, self._get_current_term_scores(j))
        checked.append(self._offset + self._low.sum() >= -1.0 - 1e-12 and self._offset + self._high.sum() <= 1.0
                       + 1e-12)
        return metric

    mp = pytest.MonkeyPatch()
    mp.setattr(patch._BoundedBooster, "apply_term_update", checking_apply)
    try:
        for seed in range(3):
            est = DPEBMRegressor(random_state=seed, n_rounds=100, feature_bound=1.0, y_bound=1.0, **PUBLIC).fit(X, y)
            low, high = reachable_score_range(est.model_)
            assert -1.0 - 1e-9 <= low <= high <= 1.0 + 1e-9
    finally:
        mp.undo()
    assert len(checked) == 3 * 100 * 5 and all(checked)


def test_no_count_is_released(reg_data):
    """interpret stores n in bag_weights_; dpbench replaces it by the noisy total (one bag: it weights
    nothing -- interpret's bag-weighted mean of one bag returns the value exactly, whatever the weight)."""
    X, y, _, _ = reg_data
    m = DPEBMRegressor(**FAST).fit(X, y).model_
    assert m.outer_bags == 1 and m.validation_size == 0
    assert m.bag_weights_[0] == pytest.approx(np.mean([w.sum() for w in m.bin_weights_]))
    assert m.bag_weights_[0] != len(X)
    native = Native.get_native_singleton()
    values = np.random.default_rng(1).normal(size=(1, 9))
    for weight in (1.0, 1999.0, 2000.0, 2001.0, 123456.0):
        np.testing.assert_array_equal(native.safe_mean(values, np.array([weight])), values[0])


# ----------------------------------------------------------------------------- the ledger

@pytest.mark.parametrize("cls", [DPEBMRegressor, DPEBMClassifier])
def test_ledger_is_interprets_binning_and_boosting(cls, reg_data):
    """Binning (f eps, delta/2) over d histograms of sensitivity 1; boosting ((1 - f) eps, delta/2) over R d leaf
    sums of sensitivity (y range or 1) * learning rate; each GDP-composed inside interpret.  Both noise scales
    the model drew with are dpbench's (eps, delta) -> mu recomputed here; the entries compose basically to
    exactly (eps, delta)."""
    X, y, _, _ = reg_data
    eps, delta, yb, lr, R, f = 2.0, 1e-5, 3.0, 0.05, 7, 0.2
    d = X.shape[1]
    kwargs = dict(epsilon=eps, delta=delta, learning_rate=lr, n_rounds=R, bin_share=f, random_state=0)
    if cls is DPEBMRegressor:
        est, domain = cls(y_bound=yb, **PUBLIC, **kwargs).fit(X, y), 2 * yb
    else:
        est, domain = cls(private_bounds=False, **kwargs).fit(X, (y > 0).astype(int)), 1.0  # public bounds
    ledger = est.privacy_ledger_
    binning, boosting = ledger.entries
    assert ledger.accountant == "basic"
    assert (binning.mechanism, boosting.mechanism) == ("interpret_binning", "interpret_boosting")
    assert (binning.epsilon, binning.delta, binning.count, binning.sensitivity) == (f * eps, delta / 2, 1, 1.0)
    assert boosting.epsilon == pytest.approx((1 - f) * eps) and boosting.delta == delta / 2 and boosting.count == 1
    assert boosting.sensitivity == pytest.approx(domain * lr)
    assert binning.noise_scale == est.model_.noise_scale_binning_
    assert boosting.noise_scale == est.model_.noise_scale_boosting_
    assert binning.noise_scale == pytest.approx(math.sqrt(d) / mu_from_epsilon_delta(f * eps, delta / 2), rel=1e-12)
    assert boosting.noise_scale == pytest.approx(
        domain * lr * math.sqrt(R * d) / mu_from_epsilon_delta((1 - f) * eps, delta / 2), rel=1e-12)
    assert boosting.noise_scale == pytest.approx(domain * lr * calc_gdp_noise_multi(R * d, (1 - f) * eps, delta / 2),
                                                 rel=1e-6)  # interpret's own formula agrees at this epsilon
    spent = ledger.epsilon_delta(delta)
    assert spent[0] == pytest.approx(eps, rel=1e-12) and spent[1] == pytest.approx(delta, rel=1e-12)


# ----------------------------------------------------------------------------- interpret's internals

def test_moved_interpret_internals_are_a_clear_error(monkeypatch, reg_data):
    X, y, _, _ = reg_data
    monkeypatch.delattr(interpret_preprocessor, "private_numeric_binning")
    with pytest.raises(InterpretChangedError, match="private_numeric_binning no longer exists"):
        DPEBMRegressor(**FAST).fit(X, y)
    monkeypatch.undo()

    def boost(*args, **kwargs):  # a changed DP loop
        return None

    monkeypatch.setattr(interpret_boost, "boost", boost)
    with pytest.raises(InterpretChangedError, match=r"_boost.boost differs from interpret 0\.7\.8's"):
        DPEBMClassifier(**FAST).fit(X, y > 0)
    monkeypatch.undo()
    DPEBMRegressor(**FAST).fit(X, y)  # and back to normal
    assert interpret_preprocessor.private_numeric_binning is private_numeric_binning


def test_replacements_are_restored_when_interpret_fails(monkeypatch, reg_data):
    X, y, _, _ = reg_data

    def broken(*args, **kwargs):
        raise MemoryError("no noise today")

    monkeypatch.setattr(Native.get_native_singleton(), "generate_gaussian_random", broken)
    with pytest.raises(RuntimeError, match=r"DP-EBM \(interpret\) failed to fit at epsilon=1.0, delta=1e-06: "
                                           "MemoryError: no noise today") as info:
        DPEBMRegressor(**FAST).fit(X, y)
    assert info.value.__cause__ is not None
    assert interpret_preprocessor.private_numeric_binning is private_numeric_binning
    assert interpret_preprocessor.calc_gdp_noise_multi is calc_gdp_noise_multi is interpret_ebm.calc_gdp_noise_multi
    assert interpret_boost.Booster is Booster and interpret_ebm.boost is interpret_boost.boost
    assert patch._swap["active"] == 0 and not patch._swap["originals"]


def test_observed_noise_sees_every_draw_and_changes_nothing(reg_data):
    """The noise-ledger test reads interpret's draws through `observed_noise`: d histogram draws, then n_rounds x d
    boosting draws; the fit equals one outside it, draws outside a dpbench fit are not noted, and interpret's
    generator is restored."""
    X, y, _, _ = reg_data
    native, original = Native.get_native_singleton(), Native.generate_gaussian_random
    with patch.observed_noise() as draws:
        observed = DPEBMRegressor(**FAST).fit(X, y)
        native.generate_gaussian_random(native.create_rng(0), 1.0, 4)
    assert Native.generate_gaussian_random is original
    scales = [observed.model_.noise_scale_binning_] * 3 + [observed.model_.noise_scale_boosting_] * (5 * 3)
    assert [s for s, _ in draws] == scales and [v.size for _, v in draws[:3]] == [62] * 3
    np.testing.assert_array_equal(observed.predict(X), DPEBMRegressor(**FAST).fit(X, y).predict(X))


def test_leaf_sums_are_interprets_safe_sums():
    """dp_boost sums each leaf's noisy bin weights in Python, interpret with its native SafeSum: equal bit for bit
    (leaves of 1 to 69 bins, weights over nine decades, some of one sign)."""
    native, rng = Native.get_native_singleton(), np.random.default_rng(3)
    for trial in range(2000):
        k = int(rng.integers(1, 70))
        weights = rng.normal(size=k) * 10.0 ** rng.uniform(-3, 6, size=k)
        weights = np.abs(weights) if trial % 3 == 0 else weights
        cuts = rng.choice(np.arange(1, k), size=int(rng.integers(0, k)), replace=False) if k > 1 else []
        edges = [0, *sorted(int(c) for c in cuts), k]
        expected = np.empty(len(edges) - 1)
        for i in range(len(edges) - 1):
            native.safe_sum(weights[edges[i]:edges[i + 1]], expected[i:i + 1], 0)
        np.testing.assert_array_equal(patch.leaf_sums(weights.tolist(), edges), expected)


@pytest.mark.parametrize("cls, params", [(DPEBMRegressor, {"max_leaves": 3, **BOX}),
                                         (DPEBMRegressor, {"max_leaves": 100, "max_bins": 8, "epsilon": 0.1, **BOX}),
                                         (DPEBMClassifier, {"max_leaves": 100}),
                                         (DPEBMClassifier, {"max_leaves": 2, "epsilon": 0.1})])
def test_dp_boost_is_interprets_boost(cls, params, reg_data, clf_data, monkeypatch):
    """dpbench's loop for interpret's DP boosting (dp_boost, for speed) fits interpret's model bit for bit: same
    draws in the same order, same per-leaf arithmetic, same projection (regression)."""
    X, y, _, _ = reg_data if cls is DPEBMRegressor else clf_data
    X, y = X[:300], y[:300]  # few rows, fast; every regression update goes through the projection
    calls, dp_boost = [], patch.dp_boost
    monkeypatch.setattr(patch, "dp_boost", lambda **kwargs: calls.append(1) or dp_boost(**kwargs))
    fast = cls(n_rounds=30, random_state=4, **params).fit(X, y)
    monkeypatch.setattr(patch, "_is_dp_configuration", lambda **kwargs: False)
    slow = cls(n_rounds=30, random_state=4, **params).fit(X, y)
    assert calls == [1]
    assert fast.model_.intercept_ == slow.model_.intercept_
    for a, b in zip(fast.model_.term_scores_, slow.model_.term_scores_, strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(fast.predict(X), slow.predict(X))


def test_noise_scales_use_dpbench_mu_where_interpret_is_wrong(reg_data):
    """interpret's own (eps, delta) -> mu overflows: at eps = 900 its noise would be 13 times too small, and at
    tiny eps it finds no root.  The fit uses dpbench's mu: the noise scales match dpbench's accounting exactly
    there too (and tiny eps is a very noisy model, not a failure)."""
    X, y, _, _ = reg_data
    d, R = X.shape[1], 5
    with np.errstate(over="ignore", invalid="ignore"):
        interpret_scale = calc_gdp_noise_multi(R * d, 0.9 * 900, 5e-7)
    assert interpret_scale < 0.1 * math.sqrt(R * d) / mu_from_epsilon_delta(0.9 * 900, 5e-7)
    for eps in (900.0, 1e-6):
        m = DPEBMRegressor(epsilon=eps, y_bound=1.0, **PUBLIC, **FAST).fit(X, y).model_
        assert m.noise_scale_boosting_ == pytest.approx(
            2 * 0.01 * math.sqrt(R * d) / mu_from_epsilon_delta(0.9 * eps, 5e-7), rel=1e-12)
        assert m.noise_scale_binning_ == pytest.approx(math.sqrt(d) / mu_from_epsilon_delta(0.1 * eps, 5e-7),
                                                       rel=1e-12)


# ----------------------------------------------------------------------------- bounds, clipping, API

def test_bounds_and_types_are_passed_explicitly():
    """interpret receives public bounds per feature ((-b, b), b = feature_bound; [0, 1] for an indicator), the target
    bounds and 'continuous' for every feature, uses those bounds (not the data's min/max) and emits no privacy
    warning; interpret called without them does warn (the detection works)."""
    rng = np.random.default_rng(1)
    X = np.column_stack([rng.normal(0, 3, 500), rng.integers(0, 2, 500), rng.normal(0, 0.1, 500)])
    y = X[:, 0] + rng.normal(size=500)
    types = ["continuous", "nominal", "continuous"]
    est = DPEBMRegressor(feature_bound=2.0, y_bound=4.0, feature_types=types, **PUBLIC, **FAST)
    assert privacy_warnings(lambda: est.fit(X, y)) == []
    m = est.model_
    bounds = [[-2.0, 2.0], [0.0, 1.0], [-2.0, 2.0]]
    np.testing.assert_array_equal(m.privacy_bounds, bounds)
    np.testing.assert_array_equal(est.clip_bounds_, bounds)
    # column 2 spans only +-0.3: what interpret used is the public bound, not the data's range
    np.testing.assert_array_equal(m.feature_bounds_, bounds)
    assert (m.privacy_target_min, m.privacy_target_max) == (-4.0, 4.0)
    assert list(m.feature_types) == list(m.feature_types_in_) == ["continuous"] * 3
    default = DPEBMClassifier(**FAST)
    assert privacy_warnings(lambda: default.fit(X, y > 0)) == []
    assert list(default.model_.feature_types_in_) == ["continuous"] * 3
    raw = privacy_warnings(lambda: DPExplainableBoostingRegressor(max_rounds=5, n_jobs=1).fit(X, y))
    assert any("Automatic determination of the feature" in w for w in raw)
    assert any("min/max values per feature" in w for w in raw)


def test_range_grid_is_public_and_symmetric():
    g = range_grid(1e5)
    assert np.all(np.diff(g) > 0) and np.array_equal(g, -g[::-1]) and 0.0 in g
    assert g[-1] == 1e5 and g[g > 0][0] == pytest.approx(1e-3) and len(g) == 2 * 17 + 1  # 1e-3 .. 1e5, x sqrt(10)
    assert range_grid(0.5)[-1] == 0.5 and list(range_grid(1e-4)) == [-1e-4, 0.0, 1e-4]


def test_private_bounds_bracket_the_data_and_are_charged():
    """Each continuous feature's private range is the span of its half-decade cells holding data (at a large
    epsilon every cell with a count clears the threshold: the range holds all the data, within a factor
    sqrt(10)); one Gaussian release of sensitivity sqrt(k) spends bound_share of epsilon and delta, interpret the
    rest, and the ledger composes to exactly (eps, delta).  An indicator keeps [0, 1]."""
    rng = np.random.default_rng(5)
    n = 20_000
    X = np.column_stack([rng.normal(-500, 100, n), rng.integers(0, 2, n), rng.uniform(0.1, 0.4, n)])
    y = (X[:, 2] > 0.25).astype(int)
    eps, frac = 2000.0, 0.05
    est = DPEBMClassifier(epsilon=eps, bound_share=frac, feature_types=["continuous", "nominal", "continuous"],
                          n_rounds=3, random_state=0).fit(X, y)
    grid = range_grid(1e5)
    for j in (0, 2):
        lo, hi = est.clip_bounds_[j]
        assert lo in grid and hi in grid and lo <= X[:, j].min() and X[:, j].max() <= hi
        assert hi - lo <= 10 * (X[:, j].max() - X[:, j].min())
    assert list(est.clip_bounds_[1]) == [0.0, 1.0]
    ledger = est.privacy_ledger_
    bounds = [e for e in ledger.entries if e.name.startswith("DP-EBM bounds")]
    assert len(bounds) == 1 and bounds[0].sensitivity == pytest.approx(math.sqrt(2))
    assert (bounds[0].epsilon, bounds[0].delta) == (pytest.approx(frac * eps), pytest.approx(frac * 1e-6))
    assert est.interpret_epsilon_ == pytest.approx((1 - frac) * eps)
    assert ledger.epsilon_delta(1e-6) == pytest.approx((eps, 1e-6), rel=1e-12)
    np.testing.assert_array_equal(est.model_.privacy_bounds, est.clip_bounds_)


def test_private_bounds_fall_back_to_the_public_box_when_no_cell_clears_the_threshold():
    """Too few rows for the noise: no cell's count clears 4 standard deviations, the range is the public box."""
    rng = np.random.default_rng(6)
    X, y = rng.uniform(0.1, 0.4, (50, 2)), rng.integers(0, 2, 50)
    est = DPEBMClassifier(epsilon=0.1, n_rounds=2, random_state=0).fit(X, y)
    np.testing.assert_array_equal(est.clip_bounds_, [[-1e5, 1e5], [-1e5, 1e5]])


def test_regressor_releases_its_label_range_and_keeps_the_model_in_it():
    """The default regressor's label range is released with the features' (one histogram release), widened to
    hold 0: labels in the thousands get a range there, not [-1, 1]; the model stays inside it over the feature
    box; it learns (MSE a tenth of the zero model's: interpret's DP model starts at 0, not at the mean)."""
    rng = np.random.default_rng(3)
    X = rng.normal(0, 50, size=(4000, 3))
    y = 2000 + 30 * X[:, 0] + rng.normal(0, 100, 4000)
    est = DPEBMRegressor(epsilon=2.0, delta=1e-6, random_state=0).fit(X, y)
    low, high = est.target_bounds_
    assert low == 0.0 and y.max() <= high <= 10 * y.max()
    model_low, model_high = reachable_score_range(est.model_)
    assert low - 1e-6 <= model_low <= model_high <= high + 1e-6
    assert est.privacy_ledger_.epsilon_delta(1e-6) == pytest.approx((2.0, 1e-6), rel=1e-12)
    assert np.mean((est.predict(X) - y) ** 2) < 0.1 * np.mean(y**2)  # far better than the zero model


def test_regressor_without_a_label_range_releases_the_zero_model():
    """Too few rows for the label's noisy histogram (no cell clears 4 standard deviations): the public box would
    be [-1e10, 1e10], so the regressor releases the zero model ('label_range_not_found'), interpret not run: the
    ledger holds the bounds' release alone, under the budget.  The same data with enough budget train a model."""
    rng = np.random.default_rng(7)
    X = rng.normal(0, 1, size=(500, 3))
    y = 5 + X[:, 0] + rng.normal(0, 0.1, 500)
    est = DPEBMRegressor(epsilon=0.1, delta=1e-6, random_state=0).fit(X, y)
    assert est.fit_status_ == "label_range_not_found" and released_zero_model(est)
    np.testing.assert_array_equal(est.predict(X), np.zeros(len(X)))
    assert [e.name.startswith("DP-EBM bounds") for e in est.privacy_ledger_.entries] == [True]
    spent = spent_budget(est, 0.1, 1e-6)
    assert spent["ok"] and spent["spent_epsilon"] == pytest.approx(0.05 * 0.1)
    trained = DPEBMRegressor(epsilon=1e4, delta=1e-6, n_rounds=20, random_state=0).fit(X, y)
    assert trained.fit_status_ == "ok" and not released_zero_model(trained)
    assert np.mean((trained.predict(X) - y) ** 2) < np.mean(y**2)


def test_data_are_clipped_to_the_bounds():
    rng = np.random.default_rng(2)
    X, y = rng.normal(0, 3, size=(500, 3)), rng.normal(0, 5, size=500)
    X[:, 2] = rng.integers(-1, 3, 500)  # an indicator column with out-of-range values
    types = ["continuous", "continuous", "nominal"]
    Xc, yc = np.column_stack([np.clip(X[:, :2], -1.5, 1.5), np.clip(X[:, 2], 0, 1)]), np.clip(y, -2.0, 2.0)
    assert np.mean(X != Xc) > 0.3 and np.mean(y != yc) > 0.3
    a = DPEBMRegressor(feature_bound=1.5, y_bound=2.0, feature_types=types, **FAST).fit(X, y)
    b = DPEBMRegressor(feature_bound=1.5, y_bound=2.0, feature_types=types, **FAST).fit(Xc, yc)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    np.testing.assert_array_equal(a.predict(X), a.predict(Xc))  # the same clip at predict time


def test_seeded_from_random_state(reg_data):
    """A seed fixes the fit; random_state=None draws fresh noise on every fit, from the same distribution: its
    test MSE lies within the range of 200 seeded fits' widened by that range on each side (0.445 +- 0.003 here;
    predicting 0 scores 0.468).  The MSE has a heavy left tail: of 300 other seeded fits one lay 6.5 sd below the
    mean of 30 (so the former bound, 5 sd, failed a CI run about once in 150); the widened range reaches ~10 sd
    below and above, beyond which none of the 300 lay."""
    X, y, Xt, yt = reg_data
    p1, p2, p3 = (DPEBMRegressor(n_rounds=5, random_state=s, **BOX).fit(X, y).predict(Xt) for s in (3, 3, 4))
    np.testing.assert_array_equal(p1, p2)
    assert not np.allclose(p1, p3)
    seeded = [np.mean((DPEBMRegressor(n_rounds=5, random_state=s, **BOX).fit(X, y).predict(Xt) - yt) ** 2)
              for s in range(200)]
    low, high = min(seeded), max(seeded)
    u1, u2 = (DPEBMRegressor(n_rounds=5, **BOX).fit(X, y).predict(Xt) for _ in range(2))
    assert not np.allclose(u1, u2)  # not a fixed seed in disguise
    for u in (u1, u2):
        assert low - (high - low) < np.mean((u - yt) ** 2) < high + (high - low)


def test_regression_reaches_its_nonprivate_optimum_at_large_epsilon(reg_data):
    """At eps=600 the DP noise is negligible and boosting with random splits converges to the least-squares
    additive step function on DP-EBM's own bins (the non-private optimum of its model class, fitted here by
    least squares on bin indicators; its range, 1.75, is inside y_bound = 2, so the projection is idle).  The
    test MSEs must agree within 3 standard errors of the baseline's test MSE (sd of the per-point squared
    errors / sqrt(m))."""
    X, y, Xt, yt = reg_data
    est = DPEBMRegressor(epsilon=600.0, y_bound=2.0, learning_rate=0.1, n_rounds=300, random_state=0).fit(X, y)
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
    3 sqrt(2 p (1 - p) / m), with the public bounds [-1, 1] of the features (private bounds from 2000 rows at
    eps 50 would bracket the data only to a factor sqrt(10): the public box isolates what is tested)."""
    X, y, Xt, yt = clf_data
    base = LogisticRegressionClassifier(C=1e4, fit_intercept=True).fit(X, y).score(Xt, yt)
    est = DPEBMClassifier(epsilon=50.0, learning_rate=0.1, n_rounds=100, max_leaves=3, feature_bound=1.0,
                          private_bounds=False, random_state=0).fit(X, y)
    assert est.score(Xt, yt) > base - 3 * math.sqrt(2 * base * (1 - base) / len(yt))
    assert base > 0.7


def test_classifier_labels_and_scores(clf_data):
    X, y, Xt, _ = clf_data
    est = DPEBMClassifier(**FAST, classes=["no", "yes"]).fit(X, np.where(y == 1, "yes", "no"))
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
        ({"feature_bound": 0.0}, "feature_bound"),
        ({"y_bound": -1.0}, "y_bound"),
        ({"n_rounds": 0}, "n_rounds"),
        ({"max_leaves": 0}, "max_leaves"),
        ({"max_bins": 2}, "max_bins"),
        ({"learning_rate": 0.0}, "learning_rate"),
        ({"bin_share": 1.0}, "bin_share"),
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
    X, y, _, _ = reg_data
    y = y if cls is DPEBMRegressor else (y > 0).astype(int)
    est = cls(epsilon=5.0, **FAST)
    assert clone(est).get_params() == est.get_params()
    scores = cross_val_score(make_pipeline(FunctionTransformer(), est), X, y, cv=3)
    assert scores.shape == (3,) and np.all(np.isfinite(scores))
    # scikit-learn estimator checks: tests/algorithms/test_registry.py
