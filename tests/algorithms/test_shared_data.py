"""Batched fits (shared per-unit work, runs as matrix columns) equal the single-run estimators with the same seed."""

import itertools

import numpy as np
import pytest

from dpbench import algorithms
from dpbench.algorithms import kernels
from dpbench.algorithms import shared_data as shared_module
from dpbench.algorithms.base import clip_rows
from dpbench.algorithms.shared_data import SharedData


@pytest.fixture(autouse=True)
def small_blocks(monkeypatch):
    monkeypatch.setattr(shared_module, "BLOCK_FLOATS", 4000)  # several row blocks even on small data


@pytest.fixture(autouse=True, params=["numpy", pytest.param("numba", marks=pytest.mark.skipif(
    not kernels.numba_available(), reason="numba not installed (the `fast` extra)"))])
def kernel(request):
    """Every test here under both elementwise backends (`kernels`): numpy's passes and numba's fused loop."""
    with kernels.use(request.param):
        yield request.param


def data(task, n=3000, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * rng.uniform(0.2, 2.0, size=(n, 1))
    score = X @ rng.normal(size=d) + 0.5 * rng.normal(size=n)
    return X, ((score > 0).astype(int) if task == "classification" else 2 * score)


def settings(name):
    """Runs that may share a batch: budgets, bounds, schedules, ratios and seeds vary."""
    if name in ("boosted_adassp", "boosted_adassp_clf"):
        grid = itertools.product([0.3, 5.0], [0.5, 2.0], ["constant", "1/t", "1/sqrt(t)"], [(1, 1, 1), (1, 3, 0.5)])
        return [dict(epsilon=e, y_bound=yb, lr_schedule=s, budget_ratio=b, learning_rate=0.7, n_rounds=25)
                for e, yb, s, b in grid]
    if name == "dpgd":
        grid = itertools.product([0.3, 5.0], [0.5, 3.0], ["constant", "1/sqrt(t)"])
        return [dict(epsilon=e, grad_bound=c, lr_schedule=s, n_rounds=20, learning_rate=0.5) for e, c, s in grid]
    grid = itertools.product([0.3, 5.0], [0.5, 2.0], [0.7, 1.5])
    return [dict(epsilon=e, y_bound=yb, x_bound=xb) for e, yb, xb in grid]


CASES = [("boosted_adassp", {}), ("boosted_adassp", {"fit_intercept": True, "x_bound": 2.0}),
         ("boosted_adassp_clf", {"loss": "squared"}), ("boosted_adassp_clf", {"loss": "logistic"}),
         ("boosted_adassp_clf", {"loss": "hinge", "fit_intercept": True}),
         ("adassp", {}), ("ssp", {"fit_intercept": True}), ("dpgd", {}), ("dpgd", {"fit_intercept": True})]


@pytest.mark.parametrize("name, common", CASES)
def test_batched_fit_equals_single_runs(name, common):
    spec = algorithms.get_spec(name)
    X, y = data(spec.task)
    runs = [{**common, **s, "random_state": 100 + i} for i, s in enumerate(settings(name))]
    single = [algorithms.make(name, **p).fit(X, y) for p in runs]
    batch = [algorithms.make(name, **p) for p in runs]
    keys = {e.batch_key() for e in batch}
    assert len(keys) == 1 and None not in keys  # one batch
    spec.estimator.fit_batch(batch, X, y, SharedData(X, y))
    for a, b in zip(single, batch, strict=True):
        np.testing.assert_allclose(b.theta_, a.theta_, rtol=1e-9, atol=1e-12 * np.abs(a.theta_).max())
        assert b.privacy_ledger_.entries == a.privacy_ledger_.entries
        np.testing.assert_allclose(b.predict(X[:50]), a.predict(X[:50]), rtol=1e-9, atol=1e-9)
        if spec.task == "classification":
            np.testing.assert_array_equal(b.classes_, a.classes_)


def test_runs_that_cannot_share_a_batch_have_different_keys():
    a, b = algorithms.make("boosted_adassp", n_rounds=10), algorithms.make("boosted_adassp", fit_intercept=True)
    assert a.batch_key() != b.batch_key()
    losses = {algorithms.make("boosted_adassp_clf", loss=loss).batch_key() for loss in ("squared", "hinge")}
    assert len(losses) == 2
    assert algorithms.make("tukey").batch_key() is None  # fits alone, through the same interface
    for name in ("adassp", "ssp", "dpgd"):  # the feature map's intercept column must be shared
        assert algorithms.make(name).batch_key() != algorithms.make(name, fit_intercept=True).batch_key()


def test_shared_statistics_are_computed_once():
    X, y = data("regression")
    shared = SharedData(X, y)
    g = shared.gram(True, 1.0)
    assert shared.gram(True, 1.0) is g and shared.features(True, 1.0) is shared.features(True, 1.0)
    Phi = np.hstack([X, np.ones((len(X), 1))])
    Phi = Phi * np.minimum(1, 1.0 / np.linalg.norm(Phi, axis=1))[:, None]
    np.testing.assert_allclose(g, Phi.T @ Phi, rtol=1e-12)
    raw = np.hstack([X, np.ones((len(X), 1))])
    np.testing.assert_array_equal(shared.features(True, 1.0), clip_rows(raw, 1.0))  # the estimator's own map


def test_batched_boosting_with_one_clip_bound_for_all_runs():
    X, y = data("regression")
    runs = [dict(epsilon=e, random_state=i, n_rounds=15) for i, e in enumerate([0.2, 1.0, 4.0, 1.0])]
    single = [algorithms.make("boosted_adassp", **p).fit(X, y) for p in runs]
    batch = algorithms.get_spec("boosted_adassp").estimator.fit_batch(
        [algorithms.make("boosted_adassp", **p) for p in runs], X, y)
    for a, b in zip(single, batch, strict=True):
        np.testing.assert_allclose(b.theta_, a.theta_, rtol=1e-9, atol=1e-12 * np.abs(a.theta_).max())


BOOSTING_TRIALS = [("boosted_adassp", {}), ("boosted_adassp", {"fit_intercept": True}),
                   ("boosted_adassp_clf", {"loss": "squared"}), ("boosted_adassp_clf", {"loss": "logistic"}),
                   ("boosted_adassp_clf", {"loss": "hinge", "fit_intercept": True})]


@pytest.mark.parametrize("name, common", BOOSTING_TRIALS)
def test_boosting_trials_with_different_bounds_and_rounds_share_one_batch(name, common):
    """A tuning study's trials (clip bounds, rounds, step sizes differ) form one batch: the products run on the
    unclipped X with each run's row scale (on the clipped copy once the runs left share a bound), and each run
    equals its single fit with the same seed."""
    spec = algorithms.get_spec(name)
    X, y = data(spec.task)
    grid = itertools.product([0.3, 1.5, 4.0, 1e5], [0.5, 3.0], [5, 20, 50])
    runs = [{**common, "x_bound": xb, "y_bound": yb, "n_rounds": t, "learning_rate": 0.6,
             "lr_schedule": ("constant", "1/sqrt(t)")[i % 2], "epsilon": (1.0, 4.0)[i % 3 == 0],
             "random_state": 200 + i} for i, (xb, yb, t) in enumerate(grid)]
    runs += [{**runs[1], "n_rounds": 60, "random_state": 300 + i} for i in range(2)]  # rounds 51-60: one x_bound
    single = [algorithms.make(name, **p).fit(X, y) for p in runs]
    batch = [algorithms.make(name, **p) for p in runs]
    assert len({e.batch_key() for e in batch}) == 1
    spec.estimator.fit_batch(batch, X, y, SharedData(X, y))
    for a, b in zip(single, batch, strict=True):
        np.testing.assert_allclose(b.theta_, a.theta_, rtol=1e-9, atol=1e-12 * np.abs(a.theta_).max())
        assert b.privacy_ledger_.entries == a.privacy_ledger_.entries


def test_the_cache_keeps_a_bounded_number_of_feature_maps():
    from dpbench.algorithms.shared_data import MAX_FEATURE_MAPS

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(50, 3)), rng.normal(size=50)
    shared = SharedData(X, y)
    first = shared.features(False, 0.5)
    for bound in np.linspace(1, 2, 3 * MAX_FEATURE_MAPS):
        shared.gram(False, float(bound))
        np.testing.assert_allclose(shared.xty(False, float(bound), 1.0),
                                   clip_rows(X, bound).T @ np.clip(y, -1, 1))
    assert len(shared._maps) == MAX_FEATURE_MAPS
    assert shared.features(False, 0.5) is not first  # evicted and recomputed, equal
    np.testing.assert_array_equal(shared.features(False, 0.5), first)


@pytest.mark.parametrize("x_bounds", [[1e-5, 0.3, 1.5, 4.0, 1e5], [0.3]])
@pytest.mark.parametrize("name, fit_intercept", [("adassp", False), ("adassp", True), ("ssp", False), ("ssp", True)])
def test_ssp_trials_with_different_bounds_share_one_batch(name, fit_intercept, x_bounds):
    """A tuning study's AdaSSP/SSP trials (every run its own x_bound and y_bound, seeds sharing them) form one
    batch: the statistics of all the bounds come from one pass (SharedData.clipped_statistics; one x_bound: its
    clipped copy), and each run equals its single fit with the same seed."""
    X, y = data("regression")
    grid = itertools.product(x_bounds, [0.5, 3.0], range(2))
    runs = [{"x_bound": xb, "y_bound": yb, "epsilon": (1.0, 4.0)[i % 3 == 0], "fit_intercept": fit_intercept,
             "random_state": 400 + i} for i, (xb, yb, _) in enumerate(grid)]
    single = [algorithms.make(name, **p).fit(X, y) for p in runs]
    batch = [algorithms.make(name, **p) for p in runs]
    assert len({e.batch_key() for e in batch}) == 1
    algorithms.get_spec(name).estimator.fit_batch(batch, X, y, SharedData(X, y))
    for a, b in zip(single, batch, strict=True):
        np.testing.assert_allclose(b.theta_, a.theta_, rtol=1e-9, atol=1e-12 * np.abs(a.theta_).max())
        assert b.privacy_ledger_.entries == a.privacy_ledger_.entries


@pytest.mark.parametrize("fit_intercept", [False, True])
def test_clipped_statistics_equal_each_clipped_copys(fit_intercept):
    """Gram matrices and X^T clip(y) of many bounds at once (rows grouped by norm between the bounds) equal
    those of each bound's clipped copy, including a zero row and bounds equal to a row's norm."""
    X, y = data("regression", n=500)
    X[7] = 0.0
    norms = SharedData(X).row_norms(fit_intercept, None)
    x_bounds = [1e-5, 0.3, float(norms[3]), float(norms[11]), 2.0, 1e5]
    pairs = [(xb, yb) for xb in x_bounds for yb in (0.5, 3.0)] + [(0.3, 0.5)]  # a repeated pair
    shared = SharedData(X, y)
    shared.clipped_statistics(fit_intercept, pairs)
    for xb, yb in pairs:
        alone = SharedData(X, y)
        np.testing.assert_allclose(shared.gram(fit_intercept, xb), alone.gram(fit_intercept, xb), rtol=1e-12,
                                   atol=1e-14 * xb**2)
        np.testing.assert_allclose(shared.xty(fit_intercept, xb, yb), alone.xty(fit_intercept, xb, yb), rtol=1e-12,
                                   atol=1e-14 * xb * yb)
    assert not shared._maps.keys() - {(fit_intercept, None)}  # no clipped copy was made


@pytest.mark.parametrize("fit_intercept", [False, True])
def test_dpgd_trials_with_different_bounds_and_rounds_share_one_batch(fit_intercept):
    """DP-GD's trials (gradient bounds, rounds, schedules, step sizes differ) form one batch: runs leave the
    (rows x runs) products after their last round, and each run equals its single fit with the same seed."""
    X, y = data("regression")
    grid = itertools.product([1e-3, 0.5, 3.0, 1e4], [1, 7, 20], ["constant", "1/t", "1/sqrt(t)"])
    runs = [{"grad_bound": c, "n_rounds": t, "lr_schedule": s, "learning_rate": (0.3, 1.0)[i % 2],
             "epsilon": (1.0, 4.0)[i % 3 == 0], "fit_intercept": fit_intercept, "random_state": 500 + i}
            for i, (c, t, s) in enumerate(grid)]
    single = [algorithms.make("dpgd", **p).fit(X, y) for p in runs]
    batch = [algorithms.make("dpgd", **p) for p in runs]
    assert len({e.batch_key() for e in batch}) == 1
    algorithms.get_spec("dpgd").estimator.fit_batch(batch, X, y, SharedData(X, y))
    for a, b in zip(single, batch, strict=True):
        np.testing.assert_allclose(b.theta_, a.theta_, rtol=1e-9, atol=1e-12 * np.abs(a.theta_).max())
        assert b.privacy_ledger_.entries == a.privacy_ledger_.entries
        assert b.record_count_ == a.record_count_


@pytest.mark.parametrize("name, common", [("boosted_adassp", {}),
                                          ("boosted_adassp_clf", {"loss": "logistic", "fit_intercept": True})])
def test_float32_products_batch_equals_float32_fits(name, common):
    """products='float32' (X theta, g, X^T g in float32, row blocks summed in float64): the batch equals each
    fit alone with that option, and the float64 fit, to 1e-5 of max|theta| (float32 rounds to 6e-8 per
    product; measured ~1e-7 here); ledgers are unchanged; and float32 was used (it differs from float64)."""
    spec = algorithms.get_spec(name)
    X, y = data(spec.task)
    grid = itertools.product([0.3, 1.5, 4.0, 1e5], [0.5, 3.0], [5, 20])
    runs = [{**common, "x_bound": xb, "y_bound": yb, "n_rounds": t, "learning_rate": 0.6, "random_state": 400 + i}
            for i, (xb, yb, t) in enumerate(grid)]
    exact = [algorithms.make(name, **p).fit(X, y) for p in runs]
    single = [algorithms.make(name, **p).fit(X, y, products="float32") for p in runs]
    batch = [algorithms.make(name, **p) for p in runs]
    spec.estimator.fit_batch(batch, X, y, SharedData(X, y), products="float32")
    for a, b, c in zip(exact, single, batch, strict=True):
        scale = np.abs(a.theta_).max()
        np.testing.assert_allclose(c.theta_, b.theta_, rtol=0, atol=1e-5 * scale)
        np.testing.assert_allclose(b.theta_, a.theta_, rtol=0, atol=1e-5 * scale)
        assert b.privacy_ledger_.entries == c.privacy_ledger_.entries == a.privacy_ledger_.entries
    assert max(np.abs(c.theta_ - a.theta_).max() for a, c in zip(exact, batch, strict=True)) > 1e-12


def test_products_is_checked():
    X, y = data("regression", n=50)
    with pytest.raises(ValueError, match="products must be one of"):
        algorithms.make("boosted_adassp").fit(X, y, products="float16")
    with pytest.raises(ValueError, match="products must be one of"):
        algorithms.get_spec("boosted_adassp").estimator.fit_batch([algorithms.make("boosted_adassp")], X, y,
                                                                  products="half")


def test_batched_boosting_rows_of_norm_zero_and_huge():
    """Rows of norm 0 (never clipped) and of norm ~1e200 (clipped by every bound; a finite value is in the
    data domain) sorted to the ends of the row order: each run still equals its fit alone."""
    X, y = data("regression", n=400)
    X[:7] = 0.0
    X[7:10] *= 1e200
    runs = [dict(x_bound=xb, y_bound=yb, n_rounds=t, random_state=i)
            for i, (xb, yb, t) in enumerate(itertools.product([0.05, 1.0, 30.0], [0.5, 4.0], [3, 9]))]
    single = [algorithms.make("boosted_adassp", **p).fit(X, y) for p in runs]
    batch = algorithms.get_spec("boosted_adassp").estimator.fit_batch(
        [algorithms.make("boosted_adassp", **p) for p in runs], X, y, SharedData(X, y))
    for a, b in zip(single, batch, strict=True):
        assert np.all(np.isfinite(b.theta_))
        np.testing.assert_allclose(b.theta_, a.theta_, rtol=1e-9, atol=1e-12 * np.abs(a.theta_).max())
