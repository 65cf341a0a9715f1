"""The openml path (real openml 0.15 code) against a fake openml cache in tmp_path, with its network calls disabled."""

import numpy as np
import openml
import pandas as pd
import pytest
import requests

from dpbench.cli.data import main
from dpbench.data import catalog, mirror, openml_source
from dpbench.data.base import MissingDataError

TASK, DID = 361075, 990001
NAME = f"openml_{TASK}"


def no_network(*args, **kwargs):
    raise AssertionError("a test tried to reach OpenML")


@pytest.fixture(autouse=True)
def isolated(monkeypatch, tmp_path):
    monkeypatch.setenv("DPBENCH_OFFLINE", "1")
    monkeypatch.setattr(openml.config, "_root_cache_directory", tmp_path / "openml-root")
    for fn in ("_send_request", "_download_minio_file", "_download_minio_bucket", "_download_text_file"):
        monkeypatch.setattr(openml._api_calls, fn, no_network)
    monkeypatch.setattr(openml_source, "_unreachable", [])
    catalog._encoded.cache_clear()
    yield
    catalog._encoded.cache_clear()


def fake_frame(n=40):
    rng = np.random.default_rng(3)
    return pd.DataFrame(
        {
            "x1": rng.normal(size=n),
            "kind": pd.Categorical(rng.choice(["b", "a", "c"], n)),
            "x2": rng.integers(0, 9, n).astype(float),
            "target": rng.normal(size=n) * 5,
        }
    )


@pytest.fixture
def cached_task(tmp_path):
    """What openml leaves in its cache after get_task + get_data: task.xml, description.xml, the parquet file."""
    root = openml_source.cache_dir()
    (root / "tasks" / str(TASK)).mkdir(parents=True)
    (root / "tasks" / str(TASK) / "task.xml").write_text(f"""<oml:task xmlns:oml="http://openml.org/openml">
<oml:task_id>{TASK}</oml:task_id><oml:task_type_id>2</oml:task_type_id>
<oml:task_type>Supervised Regression</oml:task_type>
<oml:input name="source_data"><oml:data_set><oml:data_set_id>{DID}</oml:data_set_id>
<oml:target_feature>target</oml:target_feature></oml:data_set></oml:input>
<oml:input name="estimation_procedure"><oml:estimation_procedure><oml:id>1</oml:id><oml:type>crossvalidation</oml:type>
<oml:data_splits_url>https://example.invalid/splits</oml:data_splits_url>
<oml:parameter name="number_repeats">1</oml:parameter><oml:parameter name="number_folds">10</oml:parameter>
</oml:estimation_procedure></oml:input></oml:task>""")
    ddir = root / "datasets" / str(DID)
    ddir.mkdir(parents=True)
    (ddir / "description.xml").write_text(f"""<oml:data_set_description xmlns:oml="http://openml.org/openml">
<oml:id>{DID}</oml:id><oml:name>fake</oml:name><oml:version>1</oml:version><oml:format>arff</oml:format>
<oml:url>https://example.invalid/data.arff</oml:url><oml:parquet_url>https://example.invalid/data.pq</oml:parquet_url>
<oml:default_target_attribute>target</oml:default_target_attribute></oml:data_set_description>""")
    frame = fake_frame()
    frame.to_parquet(ddir / f"dataset_{DID}.pq")
    return frame


def test_cache_is_found_without_network(cached_task, tmp_path):
    expected = openml_source.cache_dir() / "datasets" / str(DID) / f"dataset_{DID}.pq"
    assert openml_source.cached_data_file(TASK) == expected
    assert catalog.availability(NAME, tmp_path / "empty-mirror")[0] == "openml_cache"
    assert catalog.availability("openml_361076", None)[0] == "missing"


def test_load_from_the_openml_cache(cached_task):
    frame = openml_source.fetch_frame(TASK)
    assert list(frame.columns) == ["x1", "kind", "x2", "target"]  # mirror layout: target last
    assert isinstance(frame["kind"].dtype, pd.CategoricalDtype)
    ds = catalog.load(NAME, None)
    assert "OpenML task 361075 (openml cache" in ds.source
    assert ds.feature_names == ["kind=a", "kind=b", "kind=c", "x1", "x2"]
    assert ds.feature_types == ["nominal"] * 3 + ["continuous"] * 2
    assert (ds.n_train, ds.n_test) == (32, 8)
    np.testing.assert_array_equal(np.sort(np.r_[ds.y_train, ds.y_test]), np.sort(cached_task["target"].to_numpy()))


def test_offline_and_not_cached_is_missing(tmp_path):
    with pytest.raises(MissingDataError, match="not in the openml cache .* DPBENCH_OFFLINE is set") as err:
        catalog.load(NAME, tmp_path)
    assert "\n" not in str(err.value) and "--from-openml --datasets openml_361075" in str(err.value)


def test_unreachable_openml_is_missing_and_not_retried(monkeypatch, tmp_path):
    monkeypatch.setenv("DPBENCH_OFFLINE", "0")
    calls = []

    def refused(task_id):
        calls.append(task_id)
        raise requests.exceptions.ConnectionError("Name or service not known")

    monkeypatch.setattr(openml_source, "fetch_frame", refused)
    with pytest.raises(MissingDataError, match="openml could not provide it .*ConnectionError"):
        catalog.load(NAME, tmp_path)
    with pytest.raises(MissingDataError, match="OpenML was unreachable"):
        catalog.load("openml_361083", tmp_path)
    assert calls == [TASK]


def test_import_from_openml_writes_a_mirror(cached_task, capsys, tmp_path):
    out = tmp_path / "mirror"
    code = main(["import", "--from-openml", "--datasets", NAME, "openml_361083", "--out", str(out)])
    lines = capsys.readouterr().out.splitlines()
    assert code == 1  # openml_361083 was asked for and is not cached
    assert lines[0].startswith(f"wrote    {NAME}") and lines[1].startswith("skipped  openml_361083")
    written = pd.read_parquet(out / "openml" / f"{TASK}.parquet")
    assert list(written.columns) == list(cached_task.columns) and written["kind"].dtype == "category"
    row = mirror.read_manifest(out / "openml").iloc[0]
    assert row["task_id"] == str(TASK) and row["categorical_columns"] == "kind" and row["d_after_onehot"] == "5"
    assert row["sha256"] == mirror.sha256(out / "openml" / f"{TASK}.parquet")
    # the mirror copy loads to the same dataset as the openml cache
    a, b = catalog.load(NAME, out), catalog.load(NAME, None)
    assert a.source.startswith("mirror") and b.source.startswith("OpenML")
    np.testing.assert_array_equal(a.X_train, b.X_train)
    np.testing.assert_array_equal(a.y_test, b.y_test)
    # verify: manifest fine, Table II not (fake data)
    assert main(["verify", "--data-dir", str(out)]) == 1
    line = next(x for x in capsys.readouterr().out.splitlines() if NAME in x)
    assert line.startswith("MISMATCH") and "n 40 != paper 7797" in line and "manifest" not in line
