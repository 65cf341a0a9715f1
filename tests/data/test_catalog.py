"""The real-data catalog: registry, sources, splits, and every mirror file against the papers' tables.

Tests that need the real data take the `mirror` fixture (tests/conftest.py: DPBENCH_DATA_DIR, else
../shared/data beside the repository) and skip with its reason when it is absent.
No test touches the network: DPBENCH_OFFLINE is set and openml's cache is an
empty temporary directory.
"""

import math

import numpy as np
import pandas as pd
import pytest
from sklearn.model_selection import train_test_split

from dpbench.config import dataset_shorthand
from dpbench.data import (
    catalog,
    check_spec,
    data_seed,
    dataset_task,
    expand_dataset_specs,
    get_spec,
    groups,
    load_dataset,
    openml_source,
)
from dpbench.data.base import MissingDataError
from dpbench.data.preprocess import Encoded


@pytest.fixture(autouse=True)
def offline(monkeypatch, tmp_path):
    monkeypatch.setenv("DPBENCH_OFFLINE", "1")
    monkeypatch.setattr(openml_source, "cache_dir", lambda: tmp_path / "empty-openml-cache")
    catalog._encoded.cache_clear()
    yield
    catalog._encoded.cache_clear()


def in_mirror(mirror, name):
    path = catalog.mirror_path(name, mirror)
    if not path.is_file():
        pytest.skip(f"{name} ({get_spec(name).title or name}) is not in the mirror {mirror}: nothing to compare")
    return path


# ------------------------------------------------------------------ registry


def test_registry_has_all_38_sets_with_their_table_numbers():
    reg = groups()["openml_all"]
    assert reg == [f"openml_{t}" for t in range(361072, 361105)]
    assert groups()["classification_all"] == ["cod-rna", "adult", "creditcard", "telco", "cardio"]
    assert len(reg) + len(groups()["classification_all"]) == 38
    for name in reg:
        spec = get_spec(name)
        assert spec.task == "regression" and spec.source.task_id == int(name.split("_")[1])
        p = spec.paper
        assert p["n"] > 0 and 0 < p["columns"] <= p["d"] and p["true_bound"] > 0
    for name in groups()["classification_all"]:
        p = get_spec(name).paper
        assert p["d"] > 0 and p["train"] > 0 and p["test"] > 0 and 0 < p["positive_pct"] < 100
    # spot checks against paper 000 Table II and paper 001 Table 2
    assert get_spec("openml_361097").paper["d"] == 735 and get_spec("openml_361097").paper["true_bound"] == 265.32
    assert get_spec("openml_361083").paper["n"] == 581835 and get_spec("openml_361101").paper["d"] == 31
    assert get_spec("telco").paper == {"d": 46, "train": 5634, "test": 1409, "positive_pct": 26.53}
    assert get_spec("creditcard").paper["positive_pct"] == 0.17


def test_slugs_are_unique_and_mark_the_categorical_variants():
    specs = [get_spec(n) for names in groups().values() for n in names]
    slugs = [s.slug or s.name for s in specs]
    assert len(set(slugs)) == len(slugs)
    cat = sorted(s.source.task_id for s in specs if (s.slug or "").endswith("_categorical"))
    assert cat == [361096, 361098, 361099, 361101, 361102]
    assert get_spec("openml_361072").slug == "cpu_act"


def test_the_shorthands_of_a_group_are_named_by_slug():
    assert dataset_shorthand("openml_361072") == "openml/cpu_act"
    assert dataset_shorthand("openml_361096") == "openml/diamonds_categorical"
    assert dataset_shorthand("cod-rna") == "classification/cod-rna"
    assert dataset_shorthand("openml_all") == "openml_all" and dataset_shorthand("synthetic") == "synthetic"


def test_task_of_and_unknown_names():
    assert dataset_task("openml_361072") == "regression"
    assert dataset_task("adult") == "classification"
    assert dataset_task({"name": "synthetic", "task": "classification"}) == "classification"
    assert [s["name"] for s in expand_dataset_specs(["classification_all"])] == groups()["classification_all"]
    with pytest.raises(ValueError, match="unknown dataset 'openml_1'.*cardio.*openml_361072"):
        dataset_task("openml_1")
    with pytest.raises(ValueError, match="unknown dataset"):
        expand_dataset_specs(["nope"])
    with pytest.raises(ValueError, match="unknown dataset"):
        catalog.load("nope")


def test_spec_options_are_checked_before_anything_is_loaded():
    check_spec({"name": "cod-rna", "split": "paper"})
    check_spec({"name": "synthetic", "outlier": "model", "d": 3})
    for spec, match in [({"name": "telco", "split": "random"}, "split must be one of"),
                        ({"name": "telco", "outlier": "x"}, "unknown option.*valid: split"),
                        ({"name": "synthetic", "outlier": "labels"}, "outlier must be one of"),
                        ({"name": "synthetic", "rows": 5}, "unknown option.*valid: outlier")]:
        with pytest.raises(ValueError, match=match):
            check_spec(spec)


def test_data_seed_generated_data_per_seed_real_data_fixed_unless_per_seed():
    assert data_seed({"name": "synthetic"}, 3) == 3
    assert data_seed("openml_361072", 3) == 42 and data_seed("openml_361072", 3, "per_seed") == 3


def test_bad_split_arguments(tmp_path):
    with pytest.raises(ValueError, match="split must be one of"):
        catalog.load("openml_361072", split="random")
    enc = Encoded(X=np.zeros((10, 1)), y=np.arange(10.0), feature_names=("a",), feature_types=("continuous",))
    with pytest.raises(ValueError, match="only for cod-rna"):
        catalog.split_rows(get_spec("openml_361072"), enc, "paper")
    with pytest.raises(ValueError, match="split_seed"):
        catalog.split_rows(get_spec("openml_361072"), enc, "per_seed", -1)


def test_split_policy_all_trains_on_every_row_in_every_mode():
    """Paper 003 fits and scores on all rows: its datasets declare split 'all' (every row trains, no test part)."""
    enc = Encoded(X=np.zeros((10, 1)), y=np.arange(10.0), feature_names=("a",), feature_types=("continuous",))
    for mode, seed in (("fixed", 42), ("per_seed", 3)):
        train, test = catalog.split_rows(get_spec("paper003_synthetic"), enc, mode, seed)
        assert train.tolist() == list(range(10)) and test.size == 0
    data = load_dataset({"name": "paper003_synthetic", "n": 300, "d": 2}, split_seed=0, split="per_seed")
    assert (data.n_train, data.n_test) == (300, 0) and data.X_test.shape == (0, 2)


# ------------------------------------------------------------------ data directory


def test_resolve_data_dir_env_overrides_config_then_the_shared_mirror(monkeypatch, tmp_path):
    monkeypatch.delenv(catalog.DATA_DIR_ENV, raising=False)
    monkeypatch.setattr(catalog, "REPO_MIRROR", tmp_path / "shared")
    assert catalog.resolve_data_dir(None) is None
    (tmp_path / "shared").mkdir()
    assert catalog.resolve_data_dir(None) == tmp_path / "shared"
    assert catalog.resolve_data_dir(str(tmp_path)) == tmp_path
    monkeypatch.setenv(catalog.DATA_DIR_ENV, str(tmp_path / "env"))
    assert catalog.resolve_data_dir(str(tmp_path)) == tmp_path / "env"


def test_loading_uses_the_directory_it_is_given_not_the_environment(monkeypatch, tmp_path, mirror):
    """The sweep resolves the directory once; a worker whose environment names another one must not use it."""
    in_mirror(mirror, "openml_361093")
    monkeypatch.setenv(catalog.DATA_DIR_ENV, str(tmp_path / "elsewhere"))
    assert load_dataset("openml_361093", data_dir=str(mirror)).source.startswith(f"mirror {mirror}")
    with pytest.raises(MissingDataError, match="no data directory"):
        load_dataset("openml_361093")


# ------------------------------------------------------------------ missing data


@pytest.mark.parametrize("name", ["openml_361075", "openml_361072", "creditcard", "telco"])
def test_missing_dataset_raises_one_clear_line(name, tmp_path):
    status, reason = catalog.availability(name, tmp_path)
    assert status == "missing" and str(tmp_path) in reason
    with pytest.raises(MissingDataError) as err:
        load_dataset(name, data_dir=tmp_path)
    msg = str(err.value)
    assert "\n" not in msg
    assert name in msg and str(catalog.mirror_path(name, tmp_path)) in msg
    assert "python -m dpbench data import" in msg
    assert ("--from-openml" if dataset_task(name) == "regression" else "--from-raw") in msg


def test_missing_without_any_data_dir():
    assert catalog.availability("cardio", None) == ("missing", "no data directory (DPBENCH_DATA_DIR / data.dir unset)")
    with pytest.raises(MissingDataError, match="no data directory.*DPBENCH_OFFLINE is set"):
        load_dataset("openml_361072")


# ------------------------------------------------------------------ the mirror against paper 000 Table II


@pytest.mark.parametrize("name", groups()["openml_all"])
def test_regression_task_matches_table_ii(name, mirror):
    path = in_mirror(mirror, name)
    p = get_spec(name).paper
    assert catalog.availability(name, mirror) == ("mirror", str(path))
    enc, source = catalog.encoded(name, mirror)
    assert str(path) in source
    raw = pd.read_parquet(path)
    assert raw.shape[1] - 1 == p["columns"] == enc.n_columns
    assert enc.X.shape == (p["n"], p["d"]) and enc.X.dtype == np.float64
    assert f"{np.abs(enc.y).max():.6f}" == f"{p['true_bound']:.6f}"
    # feature types come from the schema: one 'nominal' column per level of each category column
    cats = [c for c in raw.columns[:-1] if isinstance(raw[c].dtype, pd.CategoricalDtype)]
    n_nominal = sum(raw[c].nunique() for c in cats)
    assert enc.feature_types == ("nominal",) * n_nominal + ("continuous",) * (p["columns"] - len(cats))
    ds = catalog.load(name, mirror)
    assert ds.n_test == math.ceil(0.2 * p["n"]) and ds.n_train == p["n"] - ds.n_test and ds.d == p["d"]


# ------------------------------------------------------------------ the mirror against paper 001 Table 2


def truncated_pct(y):
    """Table 2 prints the % of positives truncated to 2 decimals (cardio 49.9696 -> 49.96, telco 26.535 -> 26.53)."""
    return math.floor(np.mean(y) * 1e4 + 1e-6) / 100


@pytest.mark.parametrize("name", ["adult", "creditcard", "telco", "cardio"])
def test_classification_set_matches_table_2(name, mirror):
    in_mirror(mirror, name)
    p = get_spec(name).paper
    ds = catalog.load(name, mirror)
    assert (ds.d, ds.n_train, ds.n_test) == (p["d"], p["train"], p["test"])
    assert truncated_pct(ds.y_train) == p["positive_pct"]
    assert set(np.unique(ds.y_train)) == {0.0, 1.0} and ds.X_train.dtype == np.float64


def test_cod_rna_official_split_and_the_papers(mirror):
    """Table 2's 271,617 train + 271,617 test is cod-rna.t used twice; LIBSVM's split is 59,535 + 271,617."""
    in_mirror(mirror, "cod-rna")
    p = get_spec("cod-rna").paper
    official = catalog.load("cod-rna", mirror)
    assert (official.d, official.n_train, official.n_test) == (8, 59535, 271617)
    paper = catalog.load("cod-rna", mirror, split="paper")
    assert (paper.d, paper.n_train, paper.n_test) == (p["d"], p["train"], p["test"])
    assert truncated_pct(paper.y_train) == p["positive_pct"] == truncated_pct(official.y_train)
    np.testing.assert_array_equal(paper.X_train, paper.X_test)
    np.testing.assert_array_equal(paper.X_test, official.X_test)
    # per_seed does not re-split LIBSVM sets
    np.testing.assert_array_equal(catalog.load("cod-rna", mirror, 3, "per_seed").X_train, official.X_train)
    assert load_dataset({"name": "cod-rna", "split": "paper"}, data_dir=mirror).n_train == 271617


def test_adult_features_are_all_indicators(mirror):
    in_mirror(mirror, "adult")
    ds = catalog.load("adult", mirror)
    assert set(ds.feature_types) == {"nominal"} and set(np.unique(ds.X_train)) <= {0.0, 1.0}


def test_telco_and_cardio_encoding(mirror):
    in_mirror(mirror, "telco")
    in_mirror(mirror, "cardio")
    telco = catalog.load("telco", mirror)
    assert "SeniorCitizen=1" in telco.feature_names and "customerID" not in " ".join(telco.feature_names)
    assert telco.feature_types.count("continuous") == 3  # tenure, MonthlyCharges, TotalCharges
    total = np.r_[telco.X_train, telco.X_test][:, telco.feature_names.index("TotalCharges")]
    assert np.isfinite(total).all() and (total == 0).sum() == 11  # the 11 blank TotalCharges (tenure 0)
    cardio = catalog.load("cardio", mirror)
    assert [n for n, t in zip(cardio.feature_names, cardio.feature_types, strict=True) if t == "continuous"] == [
        "age",
        "height",
        "weight",
        "ap_hi",
        "ap_lo",
    ]
    assert "cholesterol=3" in cardio.feature_names and "id" not in cardio.feature_names


# ------------------------------------------------------------------ splits and caching


def test_fixed_split_is_the_authors_and_ignores_the_seed(mirror):
    in_mirror(mirror, "openml_361072")
    raw = pd.read_parquet(catalog.mirror_path("openml_361072", mirror))
    X_tr, X_te, y_tr, y_te = train_test_split(
        raw.iloc[:, :-1].to_numpy(float), raw.iloc[:, -1].to_numpy(float), test_size=0.2, random_state=42
    )
    a = catalog.load("openml_361072", mirror, split_seed=0)
    b = catalog.load("openml_361072", mirror, split_seed=7)
    np.testing.assert_array_equal(a.X_train, X_tr)  # numeric set: same columns, same row order
    np.testing.assert_array_equal(a.y_test, y_te)
    np.testing.assert_array_equal(a.X_test, b.X_test)
    c = catalog.load("openml_361072", mirror, split_seed=7, split="per_seed")
    assert not np.array_equal(a.y_test, c.y_test)
    np.testing.assert_array_equal(catalog.load("openml_361072", mirror, 42, "per_seed").X_test, a.X_test)


def test_kaggle_splits_are_stratified(mirror):
    in_mirror(mirror, "telco")
    y = catalog.encoded("telco", mirror)[0].y
    for seed in (0, 1, 2):
        ds = catalog.load("telco", mirror, seed, "per_seed")
        assert abs(ds.y_test.sum() - 0.2 * y.sum()) <= 1  # stratification keeps the positives to within one row


def test_encoding_is_cached_and_loaded_arrays_are_private(mirror):
    in_mirror(mirror, "openml_361093")
    enc1, _ = catalog.encoded("openml_361093", mirror)
    enc2, _ = catalog.encoded("openml_361093", mirror)
    assert enc1 is enc2 and not enc1.X.flags.writeable
    ds = catalog.load("openml_361093", mirror)
    ds.X_train[:] = -1.0  # a caller may scribble on its copy
    assert not np.array_equal(catalog.load("openml_361093", mirror).X_train, ds.X_train)
