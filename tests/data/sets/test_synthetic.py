"""The paper 000 synthetic model and its outlier settings; the corruptions against Sec. V's eqs. (9)-(12)."""

import math

import numpy as np
import pytest

from dpbench.data import dataset_label, label_options, load_dataset
from dpbench.data.sets.synthetic import NOISE_STD


def make_synthetic(seed=0, **options):
    return load_dataset({"name": "synthetic", **options}, split_seed=seed)


def test_clean_model_shapes_and_noise():
    ds = make_synthetic(outlier="none", fraction=0.0, n_train=50_000, n_test=1000, d=10, seed=3)
    assert ds.X_train.shape == (50_000, 10) and ds.X_test.shape == (1000, 10)
    # OLS residual std ~ sqrt(0.1): the sample sd of 50k residuals has relative SE ~ 0.3%
    w = np.linalg.lstsq(ds.X_train, ds.y_train, rcond=None)[0]
    resid = ds.y_train - ds.X_train @ w
    assert resid.std() == pytest.approx(NOISE_STD, rel=0.02)
    assert np.abs(ds.X_train.mean(0)).max() < 5 / np.sqrt(50_000)


@pytest.mark.parametrize("outlier", ["label", "feature", "model"])
def test_outliers_only_in_training(outlier):
    clean = make_synthetic(outlier="none", fraction=0.0, n_train=20_000, n_test=5000, seed=1)
    dirty = make_synthetic(outlier=outlier, fraction=0.1, n_train=20_000, n_test=5000, seed=1)
    np.testing.assert_array_equal(clean.X_test, dirty.X_test)
    np.testing.assert_array_equal(clean.y_test, dirty.y_test)
    changed = np.any(clean.X_train != dirty.X_train, axis=1) | (clean.y_train != dirty.y_train)
    assert changed.sum() == 2000
    rows = np.flatnonzero(changed)
    if outlier == "feature":
        np.testing.assert_allclose(dirty.X_train[rows], 10 * clean.X_train[rows])
        np.testing.assert_array_equal(dirty.y_train, clean.y_train)
    if outlier == "model":
        # x_out ~ N(5, I): 2000 x 10 draws, mean within 5 SE of 5
        assert dirty.X_train[rows].mean() == pytest.approx(5.0, abs=5 / np.sqrt(20_000))
    if outlier == "label":
        np.testing.assert_array_equal(dirty.X_train, clean.X_train)
        w = np.linalg.lstsq(clean.X_train, clean.y_train, rcond=None)[0]
        ratio = np.linalg.lstsq(dirty.X_train[rows] @ w[:, None], dirty.y_train[rows], rcond=None)[0][0]
        assert ratio == pytest.approx(10, rel=0.01)


def test_seeded_and_classification():
    a = make_synthetic(seed=5)
    b = make_synthetic(seed=5)
    np.testing.assert_array_equal(a.X_train, b.X_train)
    assert not np.array_equal(make_synthetic(seed=6).X_train, a.X_train)
    c = make_synthetic(task="classification", seed=5)
    assert set(np.unique(c.y_train)) == {0.0, 1.0} and c.task == "classification"
    assert (a.name, c.name) == ("synthetic_label_p0.05_n10000_d10", "synthetic_label_p0.05_n10000_d10_clf")


@pytest.mark.parametrize("kw,match", [({"outlier": "x"}, "outlier"), ({"fraction": 2}, "fraction"),
                                      ({"n_train": 0}, "n_train"), ({"task": "ranking"}, "task")])
def test_bad_options(kw, match):
    with pytest.raises(ValueError, match=match):
        make_synthetic(**kw)


@pytest.mark.parametrize("options", [
    {"outlier": "label", "fraction": 0.05, "n_train": 10_000, "d": 10, "task": "regression"},
    {"outlier": "model", "fraction": 1e-05, "n_train": 3, "d": 1, "task": "classification"},
    {"outlier": "none", "fraction": 0.0, "n_train": 1_000_000, "d": 735, "task": "regression"},
])
def test_the_registry_reads_a_settings_options_back_from_its_results_name(options):
    """Figures (sample_curve) take the corruption and its fraction from the registry, which inverts the name the
    generator's `label` wrote (n_test is not in the name); another name is not read as synthetic."""
    name = dataset_label({"name": "synthetic", "n_test": 7, **options})
    assert label_options(name) == {"name": "synthetic", **options}
    assert label_options("openml_361072") == {"name": "openml_361072"}
    with pytest.raises(ValueError, match="not the results name"):
        label_options("synthetic_label_p0.05")


# ---- the corruptions against paper 000 Sec. V, eqs. (9)-(12) --------------------------------------------------

def _pair(outlier, n=40_000, p=0.1, seed=2):
    clean = load_dataset({"name": "synthetic", "outlier": "none", "fraction": 0.0, "n_train": n, "n_test": 2000},
                         split_seed=seed)
    dirty = load_dataset({"name": "synthetic", "outlier": outlier, "fraction": p, "n_train": n, "n_test": 2000},
                         split_seed=seed)
    w = np.linalg.lstsq(clean.X_train, clean.y_train, rcond=None)[0]
    rows = np.flatnonzero(np.any(clean.X_train != dirty.X_train, axis=1) | (clean.y_train != dirty.y_train))
    return clean, dirty, w, rows


def test_label_corruption_is_eq10_noise_not_scaled():
    clean, dirty, w, rows = _pair("label")
    resid = dirty.y_train[rows] - 10 * dirty.X_train[rows] @ w  # y_out = 10 x^T w + z, z ~ N(0, 0.1)
    # sd of 4000 residuals has relative SE 1/sqrt(2 * 4000) ~ 1.1%; w's error adds ~10 * sqrt(0.1 d / n) ~ 0.05
    assert math.hypot(resid.std(), 0) == pytest.approx(NOISE_STD, rel=0.12)
    np.testing.assert_array_equal(dirty.X_test, clean.X_test)


def test_model_corruption_is_eq12():
    clean, dirty, w, rows = _pair("model")
    Xo, yo = dirty.X_train[rows], dirty.y_train[rows]
    w_out = np.linalg.lstsq(Xo, yo, rcond=None)[0]  # y_out = x_out^T (w + 5) + z, x_out ~ N(5, I)
    # OLS on 4000 rows: SE of each coefficient ~ sqrt(0.1 / 4000) = 0.005 (x_out centred has unit variance)
    np.testing.assert_allclose(w_out, w + 5, atol=0.05)
    assert (yo - Xo @ w_out).std() == pytest.approx(NOISE_STD, rel=0.05)
    assert len(rows) == 4000 and np.array_equal(dirty.y_test, clean.y_test)


def test_feature_corruption_scales_after_labels():
    clean, dirty, w, rows = _pair("feature")
    np.testing.assert_allclose(dirty.X_train[rows], 10 * clean.X_train[rows])
    np.testing.assert_array_equal(dirty.y_train, clean.y_train)  # labels drawn from the clean x
