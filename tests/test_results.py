"""The result format on its own (dpbench/results.py): parts written whole under their final name, read back in
the schema's columns, the newest attempt of each run, unreadable parts set aside, the finished-run set a resumed
sweep skips."""

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from dpbench import results


def row(run_id: str, status: str = "ok", attempt: int | None = 1, **kw) -> dict:
    r = {"run_id": run_id, "algorithm": "adassp", "params": json.dumps({"x_bound": 1.0, "rounds": 3}),
         "status": status, "test_mse": 0.5, **kw}
    return r if attempt is None else {**r, "attempt": attempt}


def test_a_part_is_written_whole_in_the_schema(tmp_path):
    path = results.write_part([row("a", test_mse=0.25), row("b", unknown_key=1)], tmp_path, "x")
    assert path == tmp_path / "parts" / "part-x.parquet"
    assert [p.name for p in (tmp_path / "parts").iterdir()] == ["part-x.parquet"]  # no temporary left
    df = pd.read_parquet(path)
    assert list(df.columns) == results.result_columns()  # every column, in order; unknown keys dropped
    assert df["run_id"].tolist() == ["a", "b"] and df["test_mse"].tolist() == [0.25, 0.5]
    assert df["epsilon"].isna().all() and df["fit_seconds"].isna().all()  # absent values are missing, not 0


def test_load_every_sweep_of_a_results_directory(tmp_path):
    """`load("results")`: every experiment at once, each run's newest row per sweep directory (the same run may
    be in two experiments' directories: both rows stay, told apart by `experiment`)."""
    results.write_part([row("a", experiment="fig1"), row("b", experiment="fig1")], tmp_path / "fig1", "1")
    results.write_part([row("a", experiment="fig1", attempt=2)], tmp_path / "fig1", "2")
    results.write_part([row("a", experiment="fig2", test_mse=0.75)], tmp_path / "fig2", "1")
    (tmp_path / "analysis_only").mkdir()  # an analysis' folder without parts is not a sweep
    df = results.load(tmp_path)
    rows = sorted(zip(df["experiment"], df["run_id"], df["attempt"], strict=True))
    assert rows == [("fig1", "a", 2), ("fig1", "b", 1), ("fig2", "a", 1)]
    assert (df["param_x_bound"] == 1.0).all()
    assert len(results.load(tmp_path, all_attempts=True)) == 4


def test_load_a_sweep_its_parts_or_one_part(tmp_path):
    results.write_part([row("a"), row("b")], tmp_path, "1")
    results.write_part([row("c", x=1)], tmp_path, "2")
    for where in (tmp_path, tmp_path / "parts", tmp_path / "parts" / "part-2.parquet"):
        df = results.load(where)
        assert sorted(df["run_id"]) == (["c"] if where.is_file() else ["a", "b", "c"])
        assert (df["param_x_bound"] == 1.0).all() and (df["param_rounds"] == 3).all()
    assert "param_x_bound" not in results.load(tmp_path, expand_params=False)
    with pytest.raises(FileNotFoundError, match="no result parts"):
        results.load(tmp_path / "elsewhere")


def test_the_newest_attempt_of_each_run_counts(tmp_path):
    results.write_part([row("a", attempt=None, status="error"), row("b")], tmp_path, "old")  # before attempts: 1
    results.write_part([row("a", attempt=2, test_mse=0.1)], tmp_path, "new")
    df = results.load(tmp_path).set_index("run_id")
    assert df.loc["a", "attempt"] == 2 and df.loc["a", "test_mse"] == 0.1 and df.loc["a", "status"] == "ok"
    assert len(results.load(tmp_path, all_attempts=True)) == 3  # superseded rows stay on disk
    states = results.run_states(tmp_path)
    assert states.to_dict("index") == {"a": {"status": "ok", "attempt": 2}, "b": {"status": "ok", "attempt": 1}}


def test_finished_runs_are_those_whose_newest_row_is_a_result(tmp_path):
    rows = [row("ok"), row("ptr", status="ptr_failed"), row("err", status="error"), row("miss", status="missing_data"),
            row("data", status="data_error"), row("retried", status="error")]
    results.write_part(rows, tmp_path, "1")
    results.write_part([row("retried", attempt=2)], tmp_path, "2")
    assert results.finished_run_ids(tmp_path) == {"ok", "ptr", "retried"}  # an algorithm's outcome is a result
    assert results.has_metrics(results.load(tmp_path)).tolist() == [True, True, False, False, False, True]
    assert results.finished_run_ids(tmp_path / "empty") == set()


def test_a_corrupt_part_is_skipped_by_readers_and_set_aside_by_a_sweep(tmp_path):
    results.write_part([row("a")], tmp_path, "good")
    results.write_part([row("b"), row("c")], tmp_path, "bad")
    bad = tmp_path / "parts" / "part-bad.parquet"
    bad.write_bytes(bad.read_bytes()[: len(bad.read_bytes()) // 2])  # a truncated file
    with pytest.warns(results.CorruptPartWarning, match="part-bad.parquet skipped .*next sweep .* moves it"):
        assert results.finished_run_ids(tmp_path) == {"a"}
    assert bad.exists() and not (tmp_path / "parts" / "corrupt").exists()  # a reader changes nothing
    with pytest.warns(results.CorruptPartWarning, match="part-bad.parquet moved to .*corrupt"):
        assert results.set_aside_corrupt(tmp_path) == [tmp_path / "parts" / "corrupt" / "part-bad.parquet"]
    assert not bad.exists()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # set aside once: later reads do not see it
        assert results.load(tmp_path)["run_id"].tolist() == ["a"]
        assert results.set_aside_corrupt(tmp_path) == []


def test_stale_temporaries_are_removed_and_never_read(tmp_path):
    results.write_part([row("a")], tmp_path, "1")
    parts = tmp_path / "parts"
    (parts / f".part-2-0123abcd{results.TMP_SUFFIX}").write_bytes(b"half a part")
    assert results.load(tmp_path)["run_id"].tolist() == ["a"]  # not read, no warning
    assert results.remove_stale_temporaries(tmp_path) == 1
    assert sorted(p.name for p in parts.iterdir()) == ["part-1.parquet"]
    assert results.remove_stale_temporaries(tmp_path) == 0


def test_types_survive_the_round_trip(tmp_path):
    results.write_part([row("a", epsilon=0.5, seed=3, private=True, spent_epsilon=np.float64(0.5))], tmp_path, "1")
    got = results.load(tmp_path).iloc[0]
    assert got["epsilon"] == 0.5 and got["seed"] == 3 and bool(got["private"]) is True
    assert got["params"] == json.dumps({"x_bound": 1.0, "rounds": 3})
