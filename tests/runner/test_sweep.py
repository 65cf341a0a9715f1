"""Grid expansion, execution, resume, failures and the result format."""

import json
import math
import os
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpbench import results
from dpbench.runner import lock
from dpbench.runner.grid import expand, group_units
from dpbench.runner.sweep import run_sweep

ROOT = Path(__file__).resolve().parents[2]
SYNTH = {"name": "synthetic", "outlier": "label", "fraction": 0.05, "n_train": 2000, "n_test": 500, "d": 4}


def small_experiment(**overrides):
    exp = {
        "name": "unit",
        "algorithms": [{"name": "boosted_adassp", "params": {"n_rounds": 5}}, {"name": "adassp"}, {"name": "ols"}],
        "datasets": [SYNTH],
        "epsilons": [0.5, 2.0],
        "deltas": [1e-6],
        "seeds": [0, 1],
        "tuning_mode": "fixed",
        "split": "fixed",
    }
    exp.update(overrides)
    return exp


SEQUENTIAL = {"backend": "sequential", "n_jobs": 1, "part_size": 3, "progress": False}


def test_expand_counts_and_identity():
    runs = expand(small_experiment())
    # 2 private algorithms x 2 eps x 1 delta x 2 seeds + ols x 2 seeds
    assert len(runs) == 2 * 2 * 2 + 2
    assert len({r.run_id for r in runs}) == len(runs)
    assert all(math.isnan(r.epsilon) for r in runs if r.algorithm == "ols")
    # synthetic data: one unit per seed, all algorithms share it
    assert len(group_units(runs)) == 2
    # identity -> seed is deterministic and distinct across runs
    again = expand(small_experiment())
    assert [r.random_state for r in runs] == [r.random_state for r in again]
    assert len({r.random_state for r in runs}) == len(runs)


def test_grid_over_hyperparameters():
    exp = small_experiment(algorithms=[{"name": "adassp", "grid": {"x_bound": [0.1, 1.0, 10.0]}}])
    runs = expand(exp)
    assert sorted({r.params["x_bound"] for r in runs}) == [0.1, 1.0, 10.0]
    assert len(runs) == 3 * 2 * 2


@pytest.mark.parametrize(
    "overrides,match",
    [
        ({"algorithms": [{"name": "adasp"}]}, "unknown algorithm 'adasp'.*boosted_adassp"),
        ({"algorithms": [{"name": "adassp", "params": {"xbound": 1}}]}, "unknown parameter.*xbound"),
        ({"algorithms": [{"name": "adassp", "parms": {}}]}, "keys name, params, grid"),
        ({"epsilons": [0.0]}, "epsilons"),
        ({"deltas": [1.5]}, "deltas"),
        ({"seeds": []}, "seeds"),
        ({"split": "random"}, "split"),
        ({"datasets": [{"name": "synthetic", "outlier": "labels"}]}, None),
    ],
)
def test_bad_experiments_fail_clearly(overrides, match, tmp_path):
    if match is None:  # bad dataset options surface when the unit loads: recorded, not raised
        out = run_sweep(small_experiment(**overrides), SEQUENTIAL, tmp_path)
        df = results.load(tmp_path)
        assert out["ran"] == len(df) and (df["status"] == "data_error").all()
        assert df["error"].str.contains("outlier must be one of").all()
        return
    with pytest.raises(ValueError, match=match):
        expand(small_experiment(**overrides))


def test_sweep_writes_resumes_and_loads(tmp_path):
    exp = small_experiment()
    first = run_sweep(exp, SEQUENTIAL, tmp_path)
    assert first == {"runs": 10, "skipped": 0, "ran": 10, "retried": 0, "units": 2, "chunks": 2}
    df = results.load(tmp_path)
    assert len(df) == 10 and df["run_id"].is_unique
    assert (df["status"] == "ok").all()
    for col in ["algorithm", "dataset", "n_train", "n_test", "d", "epsilon", "delta", "tuning_mode", "seed",
                "test_mse", "train_mse", "test_r2", "fit_seconds", "status", "dpbench_version", "git_commit",
                "config_hash", "numpy_version", "scipy_version", "param_x_bound", "param_fit_intercept"]:
        assert col in df.columns, col
    assert (df["n_train"] == 2000).all() and (df["d"] == 4).all()
    private = df[df["private"]]
    np.testing.assert_allclose(private["spent_epsilon"], private["epsilon"], rtol=1e-9)
    assert df[df["algorithm"] == "ols"]["spent_epsilon"].isna().all()
    # parts: 5 runs per unit with part_size 3 -> 2 parts per unit (3 + 2: even cuts, runner.grid.even_cuts)
    assert len(list(results.parts_dir(tmp_path).glob("part-*.parquet"))) == 4
    second = run_sweep(exp, SEQUENTIAL, tmp_path)
    assert second["ran"] == 0 and second["skipped"] == 10
    assert len(results.load(tmp_path)) == 10


@pytest.mark.parametrize("backend", ["loky", "threading"])
def test_results_do_not_depend_on_n_jobs(backend, tmp_path):
    exp = small_experiment()
    run_sweep(exp, SEQUENTIAL, tmp_path / "a")
    runner = {"backend": backend, "n_jobs": 2, "part_size": 2, "chunk_runs": 2, "progress": False}
    run_sweep(exp, runner, tmp_path / "b")
    a = results.load(tmp_path / "a").set_index("run_id").sort_index()
    b = results.load(tmp_path / "b").set_index("run_id").sort_index()
    pd.testing.assert_series_equal(a["test_mse"], b["test_mse"])
    pd.testing.assert_series_equal(a["random_state"], b["random_state"])


def test_a_failing_run_is_recorded_and_the_sweep_goes_on(tmp_path):
    exp = small_experiment(algorithms=[{"name": "adassp", "params": {"x_bound": -1.0}}, {"name": "ols"}])
    run_sweep(exp, SEQUENTIAL, tmp_path)
    df = results.load(tmp_path)
    bad = df[df["algorithm"] == "adassp"]
    assert (bad["status"] == "error").all()
    assert bad["error"].str.contains("'x_bound' parameter of AdaSSPRegressor must be").all()
    assert (df[df["algorithm"] == "ols"]["status"] == "ok").all()


def test_missing_dataset_is_a_status(tmp_path):
    exp = small_experiment(datasets=["openml_361075"], algorithms=[{"name": "ols"}])
    run_sweep(exp, SEQUENTIAL, tmp_path, data_dir=str(tmp_path / "no-mirror-here"))
    df = results.load(tmp_path)
    assert (df["status"] == "missing_data").all()
    assert df["error"].str.contains("361075").all()


def test_stale_temporary_parts_are_ignored_and_removed(tmp_path):
    parts = results.parts_dir(tmp_path)
    parts.mkdir(parents=True)
    (parts / ".part-x-123.parquet.tmp").write_bytes(b"half a file")
    run_sweep(small_experiment(seeds=[0]), SEQUENTIAL, tmp_path)
    assert not list(parts.glob("*.tmp"))
    assert len(results.load(tmp_path)) == 5


def _cli(*args, env=None, **kw):
    env = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
    kw = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True, **kw}
    return subprocess.Popen([sys.executable, "-m", "dpbench", *args], cwd=ROOT, env=env, **kw)


# Loaded by every Python process of the sweep under test (sitecustomize on its PYTHONPATH): each chunk's start
# and end and each part written are logged ("start <pid>", "end <pid>", "<pid> <part>"); the first worker to have
# written KILL_AT parts records the sweep's child processes, SIGKILLs the sweep (its pid is in sweep.lock), waits
# until it is dead, logs "kill" and goes on with its chunk.
KILL_HOOK = """
import json, os, signal
from pathlib import Path
from dpbench import results
from dpbench.runner import lock, workers

LOG, KILL_AT = Path(os.environ["KILL_HOOK_LOG"]), int(os.environ["KILL_HOOK_AT"])
real_write, real_chunk, mine = results.write_part, workers._run_chunk, []

def log(line):
    with open(LOG, "a") as fh:
        fh.write(line + "\\n")

def run_chunk(chunk, ctx):
    log(f"start {os.getpid()}")
    try:
        return real_chunk(chunk, ctx)
    finally:
        log(f"end {os.getpid()}")

def write_part(rows, sweep_dir, stem):
    path = real_write(rows, sweep_dir, stem)
    mine.append(path)
    log(f"{os.getpid()} {path.name}")
    if len(mine) == KILL_AT:
        try:
            fd = os.open(LOG.with_suffix(".pids"), os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return path
        sweep = json.loads((Path(sweep_dir) / lock.LOCK).read_text())["pid"]
        children = [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit() and
                    (p / "stat").exists() and int((p / "stat").read_text().rsplit(")", 1)[1].split()[1]) == sweep]
        os.write(fd, json.dumps({"children": children, "killer": os.getpid()}).encode())
        os.close(fd)
        os.kill(sweep, signal.SIGKILL)
        while lock.pid_alive(sweep):
            pass
        log("kill")
    return path

results.write_part, workers._run_chunk = write_part, run_chunk
"""


def test_killed_sweep_resumes_without_loss_or_duplicates(tmp_path):
    """A real sweep with two loky workers is SIGKILLed by one of its workers right after that worker's third
    part (each worker holds a unit of 11 runs, one part per run): the killer writes none of its remaining parts,
    the other worker at most the one it had begun, every part is whole, and the re-run completes the sweep."""
    hook, log = tmp_path / "hook", tmp_path / "parts.log"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(KILL_HOOK)
    args = ["sweep", "+experiment=quickstart", f"results_dir={tmp_path}", "seeds=[0,1,2,3,4,5]", "runner.n_jobs=2",
            "runner.backend=loky", "runner.chunk_runs=64", "runner.part_size=1", "runner.progress=false",
            "datasets=[{name: synthetic, outlier: label, fraction: 0.05, n_train: 2000, n_test: 500, d: 10}]"]
    env = {"PYTHONPATH": os.pathsep.join([str(hook), os.environ.get("PYTHONPATH", "")]),
           "KILL_HOOK_LOG": str(log), "KILL_HOOK_AT": "3"}
    proc = _cli(*args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # its workers may outlive it
    assert proc.wait(timeout=300) == -signal.SIGKILL
    pids = json.loads(log.with_suffix(".pids").read_text())

    def parts_logged():
        """The (pid, part) lines of the log, after checking what each process wrote after the kill."""
        lines = log.read_text().splitlines()
        logged = [line.split() for line in lines if line != "kill" and line.split()[0] not in ("start", "end")]
        late = [pid for pid, _ in (line.split() for line in lines[lines.index("kill") + 1:]) if pid.isdigit()]
        assert sum(pid == str(pids["killer"]) for pid, _ in logged) == 3  # 8 runs of its unit left: none written
        assert all(late.count(p) <= 1 for p in set(late))  # any other worker: only the part it had begun
        return logged

    def in_a_chunk():
        """Workers that began a chunk and neither finished it (they stop at their next check) nor exited.  A chunk
        begun after the kill writes nothing (its checks see the sweep dead); idle workers write nothing."""
        words = [line.split() for line in log.read_text().splitlines()]
        begun = {w[1]: words.count(["start", w[1]]) - words.count(["end", w[1]]) for w in words if w[0] == "start"}
        return [int(p) for p, n in begun.items() if n and lock.pid_alive(int(p))]

    try:
        stop = time.monotonic() + 120  # a hang guard only: a worker in a chunk stops at its next check
        while in_a_chunk():
            parts_logged()
            assert time.monotonic() < stop, f"workers {in_a_chunk()} of the killed sweep did not stop"
            time.sleep(0.01)
    finally:  # idle workers of the dead sweep would linger until loky's idle timeout
        for pid in pids["children"]:
            if lock.pid_alive(pid):
                os.kill(pid, signal.SIGTERM)
    logged = parts_logged()
    parts = tmp_path / "quickstart" / "parts"
    assert sorted(p.name for p in parts.iterdir()) == sorted(name for _, name in logged)  # no stray temporary
    with warnings.catch_warnings():
        warnings.simplefilter("error", results.CorruptPartWarning)
        before = results.load(tmp_path / "quickstart")
    total = 6 * 11
    assert len(before) == len(logged) < total and before["run_id"].is_unique
    done = _cli(*args)
    out, err = done.communicate(timeout=300)
    assert done.returncode == 0, err
    assert f"this sweep tried {total - len(before)} (0 of them retries), {len(before)} were already finished" in out
    killed, resumed = [json.loads(x) for x in (tmp_path / "quickstart" / "sweeps.jsonl").read_text().splitlines()]
    assert killed["killed"] and killed["ran"] is None and killed["seconds"] >= 0  # logged by the re-run
    assert resumed["ran"] == total - len(before) and "killed" not in resumed
    after = results.load(tmp_path / "quickstart").set_index("run_id")
    assert len(after) == total and len(results.load(tmp_path / "quickstart", all_attempts=True)) == total
    assert (after["status"] == "ok").all()
    pd.testing.assert_series_equal(before.set_index("run_id")["test_mse"], after.loc[before["run_id"], "test_mse"])
    assert len(list((tmp_path / "quickstart").glob("quickstart*.png"))) == 1  # a sub-grid's: named by its hash


def test_cli_help_and_config_errors(tmp_path):
    out, _ = _cli("--help").communicate(timeout=60)
    for cmd in ["sweep", "plot", "report", "data", "audit"]:
        assert cmd in out
    p = _cli("sweep", "+experiment=no_such_experiment", f"results_dir={tmp_path}")
    _, err = p.communicate(timeout=60)
    assert p.returncode == 2 and "no_such_experiment" in err and "quickstart" in err
    assert "Traceback" not in err
    p = _cli("sweep", "+experiment=quickstart", "epsilonz=[1]", f"results_dir={tmp_path}")
    _, err = p.communicate(timeout=60)
    assert p.returncode == 2 and "epsilonz" in err and "Traceback" not in err
    p = _cli("sweep", "+experiment=quickstart", "epsilons=[-1]", f"results_dir={tmp_path}")
    _, err = p.communicate(timeout=60)
    assert p.returncode == 2 and "epsilons must be numbers" in err and "Traceback" not in err


def test_batched_runs_give_the_rows_of_runs_fitted_alone(tmp_path):
    """chunk_runs=1 fits every run alone; the default batches a unit's runs (shared statistics, one product per
    round): every metric, status and ledger total must agree to rounding."""
    exp = small_experiment(algorithms=[{"name": "boosted_adassp", "params": {"n_rounds": 5}}, {"name": "adassp"},
                                       {"name": "dpgd", "params": {"n_rounds": 3}}, {"name": "ols"},
                                       {"name": "boosted_adassp_clf", "params": {"n_rounds": 4}}],
                           datasets=[SYNTH, {**SYNTH, "task": "classification"}], seeds=[0, 1, 2])
    run_sweep(exp, {**SEQUENTIAL, "chunk_runs": 1}, tmp_path / "alone")
    run_sweep(exp, SEQUENTIAL, tmp_path / "batched")
    alone = results.load(tmp_path / "alone").set_index("run_id").sort_index()
    batched = results.load(tmp_path / "batched").set_index("run_id").sort_index()
    assert (alone["batch_runs"] == 1).all() and batched["batch_runs"].max() >= 2  # synthetic: a unit per seed
    pd.testing.assert_series_equal(alone["status"], batched["status"])
    for col in ["test_mse", "train_r2", "test_f1", "test_auroc", "spent_epsilon"]:
        np.testing.assert_allclose(batched[col].to_numpy(float), alone[col].to_numpy(float), rtol=1e-9, atol=1e-12)


def test_rows_say_whether_the_released_model_is_the_zero_model(tmp_path):
    """`zero_model` is read from the coefficients: DP-ROBGD on 200 rows gets an empty norm histogram (the zero
    model), OLS does not; DP-EBM with a public label box trains a model without coefficients (None), and without
    one, its label range not found on 200 rows, releases the zero model."""
    from dpbench.runner.sweep import run_sweep

    data = {"name": "synthetic", "task": "regression", "n_train": 200, "n_test": 100, "d": 3}
    exp = {"name": "z", "algorithms": ["robgd", "ols", {"name": "dp_ebm", "params": {"n_rounds": 5, "y_bound": 10.0}},
                                       {"name": "dp_ebm", "params": {"n_rounds": 5}}],
           "datasets": [data], "epsilons": [1.0], "deltas": [1e-6], "seeds": [0], "tuning_mode": "fixed",
           "split": "fixed"}
    run_sweep(exp, {"n_jobs": 1, "backend": "sequential", "progress": False}, tmp_path / "z")
    df = results.load(tmp_path / "z")
    ebm = df[df["algorithm"] == "dp_ebm"].set_index("param_y_bound")
    df = df.set_index("algorithm")
    assert df.loc["robgd", "status"] == "norm_histogram_empty" and df.loc["robgd", "zero_model"] == True  # noqa: E712
    assert df.loc["ols", "zero_model"] == False and pd.isna(ebm.loc[10.0, "zero_model"])  # noqa: E712
    assert ebm.loc[1e10, "status"] == "label_range_not_found" and ebm.loc[1e10, "zero_model"] == True  # noqa: E712
