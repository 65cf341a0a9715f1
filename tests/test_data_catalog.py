"""The real-data catalog: registry, sources, splits, and every mirror file against the papers' tables.

Tests that need the real data read the mirror named by DPBENCH_DATA_DIR, else
../shared/data beside the repository, and skip with a reason when it is absent.
No test touches the network: DPBENCH_OFFLINE is set and openml's cache is an
empty temporary directory.
"""

import math

import numpy as np
import pandas as pd
import pytest
from omegaconf import OmegaConf
from sklearn.model_selection import train_test_split

from dpbench.config import CONF_DIR
from dpbench.data import catalog, dataset_task, expand_dataset_specs, load_dataset, openml_source
from dpbench.data.base import MissingDataError
from dpbench.data.preprocess import Encoded

MIRROR = catalog.default_data_dir()
HAVE_MIRROR = MIRROR is not None and MIRROR.is_dir()
NO_MIRROR = "no data mirror (set DPBENCH_DATA_DIR or provide ../shared/data)"
needs_mirror = pytest.mark.skipif(not HAVE_MIRROR, reason=NO_MIRROR)


@pytest.fixture(autouse=True)
def offline(monkeypatch, tmp_path):
    monkeypatch.setenv("DPBENCH_OFFLINE", "1")
    monkeypatch.setattr(openml_source, "cache_dir", lambda: tmp_path / "empty-openml-cache")
    catalog._encoded.cache_clear()
    yield
    catalog._encoded.cache_clear()


def in_mirror(name):
    if not HAVE_MIRROR:
        pytest.skip(NO_MIRROR)
    path = catalog.mirror_path(name, MIRROR)
    if not path.is_file():
        pytest.skip(f"{name} ({catalog.info(name).title}) is not in the mirror {MIRROR}: nothing to compare")
    return path


# ------------------------------------------------------------------ registry


def test_registry_has_all_38_sets_with_their_table_numbers():
    reg = catalog.GROUPS["openml_all"]
    assert reg == [f"openml_{t}" for t in range(361072, 361105)]
    assert catalog.GROUPS["classification_all"] == ["cod-rna", "adult", "creditcard", "telco", "cardio"]
    assert len(catalog.INFOS) == 38
    for name in reg:
        i = catalog.info(name)
        assert i.task == "regression" and i.task_id == int(name.split("_")[1])
        assert i.n > 0 and 0 < i.n_columns <= i.d and i.true_bound > 0
    for name in catalog.GROUPS["classification_all"]:
        i = catalog.info(name)
        assert i.p > 0 and i.n_train > 0 and i.n_test > 0 and 0 < i.positive_pct < 100
    # spot checks against paper 000 Table II and paper 001 Table 2
    assert catalog.info("openml_361097").d == 735 and catalog.info("openml_361097").true_bound == 265.32
    assert catalog.info("openml_361083").n == 581835 and catalog.info("openml_361101").d == 31
    assert (catalog.info("telco").p, catalog.info("telco").n_train, catalog.info("telco").n_test) == (46, 5634, 1409)
    assert catalog.info("creditcard").positive_pct == 0.17


def test_slugs_are_unique_and_mark_the_categorical_variants():
    slugs = [i.slug for i in catalog.INFOS.values()]
    assert len(set(slugs)) == len(slugs)
    cat = sorted(i.task_id for i in catalog.INFOS.values() if i.slug.endswith("_categorical"))
    assert cat == [361096, 361098, 361099, 361101, 361102]
    assert catalog.info("openml_361072").slug == "cpu_act"


def test_every_dataset_and_group_has_a_hydra_config():
    for i in catalog.INFOS.values():
        sub = "openml" if i.task == "regression" else "classification"
        path = CONF_DIR / "dataset" / sub / f"{i.slug}.yaml"
        assert path.read_text().startswith("# @package _global_"), path
        assert OmegaConf.to_container(OmegaConf.load(path)) == {"datasets": [i.name]}
    for group in catalog.GROUPS:
        assert OmegaConf.to_container(OmegaConf.load(CONF_DIR / "dataset" / f"{group}.yaml")) == {"datasets": [group]}


def test_task_of_and_unknown_names():
    assert catalog.task_of("openml_361072") == "regression"
    assert catalog.task_of("adult") == "classification"
    assert dataset_task("cod-rna") == "classification"
    assert [s["name"] for s in expand_dataset_specs(["classification_all"])] == catalog.GROUPS["classification_all"]
    with pytest.raises(ValueError, match="unknown dataset 'openml_1'.*openml_361072.*cardio"):
        catalog.task_of("openml_1")
    with pytest.raises(ValueError, match="unknown dataset"):
        catalog.load_real("nope")


def test_bad_split_arguments(tmp_path):
    with pytest.raises(ValueError, match="split must be one of"):
        catalog.load_real("openml_361072", split="random")
    enc = Encoded(X=np.zeros((10, 1)), y=np.arange(10.0), feature_names=("a",), feature_types=("continuous",))
    with pytest.raises(ValueError, match="only for cod-rna"):
        catalog.split_rows("openml_361072", enc, "paper")
    with pytest.raises(ValueError, match="split_seed"):
        catalog.split_rows("openml_361072", enc, "per_seed", -1)


# ------------------------------------------------------------------ data directory


def test_resolve_data_dir_env_overrides_config(monkeypatch, tmp_path):
    monkeypatch.delenv(catalog.DATA_DIR_ENV, raising=False)
    assert catalog.resolve_data_dir(None) is None
    assert catalog.resolve_data_dir(str(tmp_path)) == tmp_path
    monkeypatch.setenv(catalog.DATA_DIR_ENV, str(tmp_path / "env"))
    assert catalog.resolve_data_dir(str(tmp_path)) == tmp_path / "env"
    assert catalog.default_data_dir() == tmp_path / "env"


# ------------------------------------------------------------------ missing data


@pytest.mark.parametrize("name", ["openml_361075", "openml_361072", "creditcard", "telco"])
def test_missing_dataset_raises_one_clear_line(name, tmp_path, monkeypatch):
    monkeypatch.setenv(catalog.DATA_DIR_ENV, str(tmp_path))
    status, reason = catalog.availability(name)
    assert status == "missing" and str(tmp_path) in reason
    with pytest.raises(MissingDataError) as err:
        catalog.load_real(name)
    msg = str(err.value)
    assert "\n" not in msg
    assert name in msg and str(catalog.mirror_path(name, tmp_path)) in msg
    assert "python -m dpbench data import" in msg
    assert ("--from-openml" if catalog.task_of(name) == "regression" else "--from-raw") in msg


def test_missing_without_any_data_dir(monkeypatch):
    monkeypatch.delenv(catalog.DATA_DIR_ENV, raising=False)
    assert catalog.availability("cardio") == ("missing", "no data directory (DPBENCH_DATA_DIR / data.dir unset)")
    with pytest.raises(MissingDataError, match="no data directory.*DPBENCH_OFFLINE is set"):
        load_dataset("openml_361072")


# ------------------------------------------------------------------ the mirror against paper 000 Table II


@pytest.mark.parametrize("name", catalog.GROUPS["openml_all"])
def test_regression_task_matches_table_ii(name):
    path = in_mirror(name)
    i = catalog.info(name)
    assert catalog.availability_at(name, MIRROR) == ("mirror", str(path))
    enc, source = catalog.encoded_at(name, MIRROR)
    assert str(path) in source
    raw = pd.read_parquet(path)
    assert raw.shape[1] - 1 == i.n_columns
    assert enc.X.shape == (i.n, i.d) and enc.X.dtype == np.float64
    assert f"{np.abs(enc.y).max():.6f}" == f"{i.true_bound:.6f}"
    # feature types come from the schema: one 'nominal' column per level of each category column
    cats = [c for c in raw.columns[:-1] if isinstance(raw[c].dtype, pd.CategoricalDtype)]
    n_nominal = sum(raw[c].nunique() for c in cats)
    assert enc.feature_types == ("nominal",) * n_nominal + ("continuous",) * (i.n_columns - len(cats))
    ds = catalog.load_at(name, MIRROR)
    assert ds.n_test == math.ceil(0.2 * i.n) and ds.n_train == i.n - ds.n_test and ds.d == i.d


# ------------------------------------------------------------------ the mirror against paper 001 Table 2


def truncated_pct(y):
    """Table 2 prints the % of positives truncated to 2 decimals (cardio 49.9696 -> 49.96, telco 26.535 -> 26.53)."""
    return math.floor(np.mean(y) * 1e4 + 1e-6) / 100


@pytest.mark.parametrize("name", ["adult", "creditcard", "telco", "cardio"])
def test_classification_set_matches_table_2(name):
    in_mirror(name)
    i = catalog.info(name)
    ds = catalog.load_at(name, MIRROR)
    assert (ds.d, ds.n_train, ds.n_test) == (i.p, i.n_train, i.n_test)
    assert truncated_pct(ds.y_train) == i.positive_pct
    assert set(np.unique(ds.y_train)) == {0.0, 1.0} and ds.X_train.dtype == np.float64


def test_cod_rna_official_split_and_the_papers(monkeypatch):
    """Table 2's 271,617 train + 271,617 test is cod-rna.t used twice; LIBSVM's split is 59,535 + 271,617."""
    in_mirror("cod-rna")
    i = catalog.info("cod-rna")
    official = catalog.load_at("cod-rna", MIRROR)
    assert (official.d, official.n_train, official.n_test) == (8, 59535, 271617)
    paper = catalog.load_at("cod-rna", MIRROR, split="paper")
    assert (paper.d, paper.n_train, paper.n_test) == (i.p, i.n_train, i.n_test)
    assert truncated_pct(paper.y_train) == i.positive_pct == truncated_pct(official.y_train)
    np.testing.assert_array_equal(paper.X_train, paper.X_test)
    np.testing.assert_array_equal(paper.X_test, official.X_test)
    # per_seed does not re-split LIBSVM sets
    np.testing.assert_array_equal(catalog.load_at("cod-rna", MIRROR, 3, "per_seed").X_train, official.X_train)
    monkeypatch.setenv(catalog.DATA_DIR_ENV, str(MIRROR))
    assert load_dataset({"name": "cod-rna", "split": "paper"}).n_train == 271617


def test_adult_features_are_all_indicators():
    in_mirror("adult")
    ds = catalog.load_at("adult", MIRROR)
    assert set(ds.feature_types) == {"nominal"} and set(np.unique(ds.X_train)) <= {0.0, 1.0}


def test_telco_and_cardio_encoding():
    in_mirror("telco")
    in_mirror("cardio")
    telco = catalog.load_at("telco", MIRROR)
    assert "SeniorCitizen=1" in telco.feature_names and "customerID" not in " ".join(telco.feature_names)
    assert telco.feature_types.count("continuous") == 3  # tenure, MonthlyCharges, TotalCharges
    total = np.r_[telco.X_train, telco.X_test][:, telco.feature_names.index("TotalCharges")]
    assert np.isfinite(total).all() and (total == 0).sum() == 11  # the 11 blank TotalCharges (tenure 0)
    cardio = catalog.load_at("cardio", MIRROR)
    assert [n for n, t in zip(cardio.feature_names, cardio.feature_types, strict=True) if t == "continuous"] == [
        "age",
        "height",
        "weight",
        "ap_hi",
        "ap_lo",
    ]
    assert "cholesterol=3" in cardio.feature_names and "id" not in cardio.feature_names


# ------------------------------------------------------------------ splits and caching


def test_fixed_split_is_the_authors_and_ignores_the_seed():
    in_mirror("openml_361072")
    raw = pd.read_parquet(catalog.mirror_path("openml_361072", MIRROR))
    X_tr, X_te, y_tr, y_te = train_test_split(
        raw.iloc[:, :-1].to_numpy(float), raw.iloc[:, -1].to_numpy(float), test_size=0.2, random_state=42
    )
    a = catalog.load_at("openml_361072", MIRROR, split_seed=0)
    b = catalog.load_at("openml_361072", MIRROR, split_seed=7)
    np.testing.assert_array_equal(a.X_train, X_tr)  # numeric set: same columns, same row order
    np.testing.assert_array_equal(a.y_test, y_te)
    np.testing.assert_array_equal(a.X_test, b.X_test)
    c = catalog.load_at("openml_361072", MIRROR, split_seed=7, split="per_seed")
    assert not np.array_equal(a.y_test, c.y_test)
    np.testing.assert_array_equal(catalog.load_at("openml_361072", MIRROR, 42, "per_seed").X_test, a.X_test)


def test_kaggle_splits_are_stratified():
    in_mirror("telco")
    y = catalog.encoded_at("telco", MIRROR)[0].y
    for seed in (0, 1, 2):
        ds = catalog.load_at("telco", MIRROR, seed, "per_seed")
        assert abs(ds.y_test.sum() - 0.2 * y.sum()) <= 1  # stratification keeps the positives to within one row


def test_encoding_is_cached_and_loaded_arrays_are_private():
    in_mirror("openml_361093")
    enc1, _ = catalog.encoded_at("openml_361093", MIRROR)
    enc2, _ = catalog.encoded_at("openml_361093", MIRROR)
    assert enc1 is enc2 and not enc1.X.flags.writeable
    ds = catalog.load_at("openml_361093", MIRROR)
    ds.X_train[:] = -1.0  # a caller may scribble on its copy
    assert not np.array_equal(catalog.load_at("openml_361093", MIRROR).X_train, ds.X_train)
