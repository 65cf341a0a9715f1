"""Scale-out and robustness of the runner: a real Dask cluster, chunks, BLAS pinning, retries, corrupt
parts, the sweep lock and unwritable results directories."""

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import asdict

import pandas as pd
import pytest
from threadpoolctl import threadpool_info

from dpbench import results
from dpbench.config import RunnerConfig, compose, to_container
from dpbench.runner import lock, sweep, workers
from dpbench.runner.grid import chunk_units, expand, group_units
from dpbench.runner.sweep import run_sweep
from tests.runner.test_sweep import ROOT, SEQUENTIAL, _cli, small_experiment

SEQ_COLS = ["status", "attempt", "test_mse", "random_state"]
SAME = ["run_id", "status", "seed", "random_state", "attempt", "test_mse", "train_mse", "test_r2", "spent_epsilon"]


def _rows(path) -> pd.DataFrame:
    return results.load(path)[SAME].sort_values("run_id").reset_index(drop=True)


# A LocalCluster of 2 worker processes, a sweep on it through runner=dask; prints the summary and the worker pids.
DASK_SWEEP = """
import json, os, sys
import distributed
from dpbench.runner.sweep import run_sweep

exp, out_dir = json.loads(sys.argv[1]), sys.argv[2]
with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
    with distributed.Client(cluster) as client:
        client.wait_for_workers(2, timeout=60)
        worker_pids = sorted(set(client.run(os.getpid).values()))
    runner = {"backend": "dask", "address": cluster.scheduler_address, "chunk_runs": 2, "part_size": 1,
              "progress": False}
    out = run_sweep(exp, runner, out_dir)
print(json.dumps({"out": out, "worker_pids": worker_pids, "pid": os.getpid()}))
"""


def test_dask_cluster_gives_the_local_runners_rows(tmp_path):
    """runner=dask on a real LocalCluster (2 worker processes), chunks of 2 runs: the same rows as one process.
    The cluster runs in a process of its own: one that lost its workers and waits forever fails this test at the
    timeout (its process group is killed), not the whole test run."""
    exp = small_experiment()
    run_sweep(exp, SEQUENTIAL, tmp_path / "local")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen([sys.executable, "-c", DASK_SWEEP, json.dumps(exp), str(tmp_path / "dask")], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=300)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail("the Dask sweep did not finish in 300 s (a cluster that lost its workers?)")
    assert proc.returncode == 0, stderr
    report = json.loads(stdout.strip().splitlines()[-1])
    assert report["out"]["ran"] == 10 and report["out"]["chunks"] == 6  # 2 units of 5 runs -> 3 chunks each
    assert len(report["worker_pids"]) == 2 and report["pid"] not in report["worker_pids"]
    pd.testing.assert_frame_equal(_rows(tmp_path / "local"), _rows(tmp_path / "dask"))
    assert len(list(results.parts_dir(tmp_path / "dask").glob("part-*.parquet"))) == 10


# A sweep on 2 loky workers, then each worker's modules (joblib reuses the sweep's workers: same backend, n_jobs).
LOKY_MODULES = """
import json, sys
import joblib
from dpbench.runner.sweep import run_sweep

exp, out_dir = json.loads(sys.argv[1]), sys.argv[2]
out = run_sweep(exp, {"backend": "loky", "n_jobs": 2, "chunk_runs": 1, "progress": False}, out_dir)
probe = "(__import__('os').getpid(), sorted(__import__('sys').modules))"  # run by eval, a builtin: imports nothing
with joblib.parallel_config(backend="loky", n_jobs=2):
    modules = dict(joblib.Parallel()(joblib.delayed(eval)(probe) for _ in range(8)))
print(json.dumps({"out": out, "modules": modules}))
"""
NOT_IN_WORKERS = {"matplotlib", "hydra", "omegaconf", "optuna", "openml"}  # the figure, the config, studies, downloads


def test_loky_workers_import_what_a_fit_needs_only(tmp_path):
    """A loky worker pays for its imports at every sweep's start: it loads the fitting stack (numpy, scikit-learn,
    pandas and pyarrow for the parts), not plotting, Hydra, Optuna (no tuned run here) or openml."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", LOKY_MODULES, json.dumps(small_experiment()), str(tmp_path)],
                          capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["out"]["ran"] == 10
    ran = [set(m) for m in report["modules"].values() if "dpbench.runner.workers" in m]  # workers that ran chunks
    assert ran and all({"sklearn", "pyarrow"} <= m for m in ran)
    assert [sorted({m.split(".")[0] for m in mods} & NOT_IN_WORKERS) for mods in ran] == [[]] * len(ran)


def test_unreachable_scheduler_is_one_line(tmp_path, monkeypatch):
    """A scheduler that does not answer is a one-line error, after runner.connect_timeout (handed to the Dask
    client: how long it takes is measured in scripts/bench.py, not asserted here)."""
    import dask.distributed

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    runner = {"backend": "dask", "address": f"tcp://127.0.0.1:{port}", "connect_timeout": 2, "progress": False}
    with pytest.raises(ValueError, match=f"cannot reach the Dask scheduler at runner.address='tcp://127.0.0.1:{port}'"):
        run_sweep(small_experiment(), runner, tmp_path)
    assert not (tmp_path / lock.LOCK).exists()  # the lock is released on the way out
    asked = []

    def client(address, timeout=None, **kw):
        asked.append((address, timeout))
        raise OSError(f"Timed out trying to connect to {address} after {timeout} s")

    with monkeypatch.context() as m:
        m.setattr(dask.distributed, "Client", client)
        default = {k: v for k, v in runner.items() if k != "connect_timeout"}  # 5 s
        for conf, timeout in [(runner, 2.0), (default, 5.0)]:
            with pytest.raises(ValueError, match=f"after {timeout} s"):
                run_sweep(small_experiment(), conf, tmp_path)
    assert asked == [(runner["address"], 2.0), (runner["address"], 5.0)]
    p = _cli("sweep", "+experiment=quickstart", f"results_dir={tmp_path}", "runner=dask",
             f"runner.address=tcp://127.0.0.1:{port}", "runner.connect_timeout=2")
    out, err = p.communicate(timeout=120)
    assert p.returncode == 2, err
    assert err.strip().count("\n") == 0 and "cannot reach the Dask scheduler" in err, err


def test_chunks_load_once_per_unit_and_progress_per_chunk(tmp_path, monkeypatch):
    loads, updates = [], []
    real_load = workers.load_dataset
    monkeypatch.setattr(workers, "load_dataset", lambda *a, **k: loads.append(a) or real_load(*a, **k))

    class Bar:
        def __init__(self, total, *args):
            self.total, self.n, self.runs = total, 0, 0

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def show(self, n, counts):  # uncalibrated: the work is runs
            runs = int(counts.split("/")[0])
            if runs:
                updates.append(runs - self.runs)
            self.n, self.runs = n, runs

    monkeypatch.setattr(sweep, "WorkBar", Bar)
    out = run_sweep(small_experiment(), {**SEQUENTIAL, "chunk_runs": 2}, tmp_path)
    assert out["chunks"] == 6 and len(loads) == 2  # consecutive chunks of a unit reuse its data
    assert sorted(updates) == [1, 1, 2, 2, 2, 2]  # per chunk, not per unit
    assert sum(updates) == out["ran"] == 10
    units = group_units(expand(small_experiment()), attempts={expand(small_experiment())[0].run_id: 3})
    chunks = chunk_units(units, 2)
    assert [len(c.runs) for c in chunks] == [2, 2, 1, 2, 2, 1]
    # len / chunk_runs chunks, rounded, of sizes within one: no small remainder (a unit of 5 is one chunk of 4 or 6)
    assert [len(c.runs) for c in chunk_units(units, 4)] == [5, 5] and len(chunk_units(units, 6)) == 2
    assert [len(c.runs) for c in chunk_units(units, 3)] == [3, 2, 3, 2]
    assert sum(len(c.attempts) for c in chunks) == 1
    with pytest.raises(ValueError, match="chunk_runs"):
        run_sweep(small_experiment(), {**SEQUENTIAL, "chunk_runs": 0}, tmp_path)


def test_runner_settings_are_declared_once_in_the_config_schema():
    """Keys a run_sweep caller leaves out, and the packaged runner=local, take RunnerConfig's defaults; a misspelt
    key is an error, not a silent default."""
    assert sweep.settings({"backend": "sequential"}) == RunnerConfig(backend="sequential")
    assert to_container(compose(["runner=local"]))["runner"] == asdict(RunnerConfig())
    with pytest.raises(ValueError, match=r"unknown runner key\(s\) \['n_job'\]"):
        sweep.settings({"n_job": 1})


THREADS = {**SEQUENTIAL, "backend": "threading", "n_jobs": 2, "chunk_runs": 1}  # concurrent tasks in this process


@pytest.mark.parametrize("runner", [SEQUENTIAL, THREADS], ids=["sequential", "threading"])
def test_blas_is_pinned_inside_each_task(runner, tmp_path, monkeypatch):
    if not [p for p in threadpool_info() if p["user_api"] == "blas"]:
        pytest.skip("no BLAS library loaded")
    seen, calls, both_inside = [], iter(range(10**6)), threading.Barrier(2, timeout=60)
    real_fit = workers.fit_runs

    def fit(runs, data, shared):
        if runner is THREADS and next(calls) < 2:  # the first two tasks at once
            both_inside.wait()
        seen.extend(p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas")
        return real_fit(runs, data, shared)

    monkeypatch.setattr(workers, "fit_runs", fit)
    before = [p["num_threads"] for p in threadpool_info()]
    run_sweep(small_experiment(seeds=[0, 1]), runner, tmp_path)
    assert seen and set(seen) == {1}
    assert [p["num_threads"] for p in threadpool_info()] == before  # restored after the task
    with pytest.raises(ValueError, match="blas_threads"):
        run_sweep(small_experiment(), {**SEQUENTIAL, "blas_threads": 0}, tmp_path)


def test_rerun_retries_harness_failures_and_keeps_results(tmp_path, monkeypatch):
    runs = expand(small_experiment())
    crash, outcome = {runs[0].run_id, runs[7].run_id}, {runs[3].run_id}
    real_fit = workers.fit_runs

    def flaky(runs, data, shared):
        rows = real_fit(runs, data, shared)
        for run, row in zip(runs, rows, strict=True):
            if run.run_id in crash:
                row.update(status="error", error="MemoryError: simulated")
            if run.run_id in outcome:
                row.update(status="ptr_failed")
        return rows

    monkeypatch.setattr(workers, "fit_runs", flaky)
    run_sweep(small_experiment(), SEQUENTIAL, tmp_path)
    first = results.load(tmp_path).set_index("run_id")
    monkeypatch.setattr(workers, "fit_runs", real_fit)
    out = run_sweep(small_experiment(), SEQUENTIAL, tmp_path)
    assert out == {"runs": 10, "skipped": 8, "ran": 2, "retried": 2, "units": 2, "chunks": 2}
    df = results.load(tmp_path).set_index("run_id")
    assert len(df) == 10 and (df.loc[sorted(crash), "status"] == "ok").all()
    assert (df.loc[sorted(crash), "attempt"] == 2).all()
    assert df.loc[runs[3].run_id, "status"] == "ptr_failed"  # an algorithm outcome is a result: kept
    kept = sorted(set(df.index) - crash)
    pd.testing.assert_frame_equal(df.loc[kept, SEQ_COLS], first.loc[kept, SEQ_COLS])
    assert len(results.load(tmp_path, all_attempts=True)) == 12  # superseded rows stay on disk
    assert run_sweep(small_experiment(), SEQUENTIAL, tmp_path)["ran"] == 0


def test_missing_data_is_retried_on_rerun(tmp_path):
    exp = small_experiment(datasets=["openml_361075"], algorithms=[{"name": "ols"}])
    no_mirror = str(tmp_path / "no-mirror-here")
    run_sweep(exp, SEQUENTIAL, tmp_path / "out", data_dir=no_mirror)
    out = run_sweep(exp, SEQUENTIAL, tmp_path / "out", data_dir=no_mirror)
    assert out["retried"] == out["ran"] == 2
    df = results.load(tmp_path / "out")
    assert len(df) == 2 and (df["status"] == "missing_data").all() and (df["attempt"] == 2).all()
    assert (df["error"].str.count("\n") == 0).all()


def test_corrupt_part_is_set_aside_and_its_runs_redone(tmp_path):
    run_sweep(small_experiment(), SEQUENTIAL, tmp_path)
    parts = sorted(results.parts_dir(tmp_path).glob("part-*.parquet"))
    lost = len(pd.read_parquet(parts[0]))
    parts[0].write_bytes(b"PAR1 not really")
    with pytest.warns(results.CorruptPartWarning, match="skipped"):  # a reader changes nothing on disk
        assert len(results.load(tmp_path)) == 10 - lost
    assert parts[0].exists()
    lost += len(pd.read_parquet(parts[1]))
    parts[1].write_bytes(b"")  # corrupt another one: the sweep sets both aside and redoes their runs
    with pytest.warns(results.CorruptPartWarning, match="moved to .*corrupt"):
        out = run_sweep(small_experiment(), SEQUENTIAL, tmp_path)
    assert out["ran"] == lost and out["retried"] == 0
    assert len(results.load(tmp_path)) == 10 and len(list((results.parts_dir(tmp_path) / "corrupt").iterdir())) == 2


def test_a_live_sweep_holds_the_directory(tmp_path):
    exp = small_experiment(seeds=[0])
    tmp_path.joinpath(lock.LOCK).write_text(json.dumps({"token": "x", "host": socket.gethostname(),
                                                        "pid": os.getpid()}))
    with pytest.raises(ValueError, match=f"pid {os.getpid()}.* still writing"):
        run_sweep(exp, SEQUENTIAL, tmp_path)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    tmp_path.joinpath(lock.LOCK).write_text(json.dumps({"token": "x", "host": socket.gethostname(),
                                                        "pid": dead.pid}))
    assert run_sweep(exp, SEQUENTIAL, tmp_path)["ran"] == 5  # a dead sweep's lock is taken over
    assert not tmp_path.joinpath(lock.LOCK).exists()
    owner = lock.acquire(tmp_path)
    assert owner.alive()
    tmp_path.joinpath(lock.LOCK).unlink()
    assert not owner.alive()  # a worker whose sweep lost its lock stops writing


def test_a_killed_sweeps_time_is_logged_by_the_next(tmp_path):
    """A sweep killed outright cannot log its wall time: the next sweep in its directory logs it, from the dead
    lock's start to its last heartbeat."""
    from dpbench.reproduction import SWEEP_LOG

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    path, started = tmp_path / lock.LOCK, time.time() - 100
    path.write_text(json.dumps({"token": "x", "host": socket.gethostname(), "pid": dead.pid, "started": started}))
    os.utime(path, (started + 60, started + 60))  # its last heartbeat, 60 s after it took the lock
    assert run_sweep(small_experiment(seeds=[0]), SEQUENTIAL, tmp_path)["ran"] == 5
    (line,) = [json.loads(x) for x in (tmp_path / SWEEP_LOG).read_text().splitlines()]  # (the CLI logs its own)
    assert line["ran"] is None and line["killed"] and line["seconds"] == pytest.approx(60, abs=1e-3)


def test_a_live_sweep_beats_on_its_lock(tmp_path):
    owner = lock.acquire(tmp_path)
    os.utime(owner.path, (1.0, 1.0))
    halt = lock.heartbeat(owner, every=0.01)
    stop = time.monotonic() + 30  # a hang guard only
    while os.stat(owner.path).st_mtime == 1.0 and time.monotonic() < stop:
        time.sleep(0.01)
    halt()
    assert os.stat(owner.path).st_mtime > 1.0  # touched while it ran
    os.utime(owner.path, (1.0, 1.0))
    time.sleep(0.1)
    assert os.stat(owner.path).st_mtime == 1.0  # and no more once halted
    assert owner.dead_seconds is None  # no dead sweep's lock was here before


def test_results_dir_that_is_a_file_is_one_line(tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("")
    for target in (afile, afile / "sub"):
        with pytest.raises(ValueError, match="cannot write results to"):
            run_sweep(small_experiment(), SEQUENTIAL, target)
    p = _cli("sweep", "+experiment=quickstart", f"results_dir={afile}")
    _, err = p.communicate(timeout=120)
    assert p.returncode == 2 and err.strip().count("\n") == 0 and "cannot write results to" in err, err


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")
def test_unwritable_results_dir_is_one_line(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        with pytest.raises(ValueError, match="cannot write results to .*Permission denied"):
            run_sweep(small_experiment(), SEQUENTIAL, ro)
    finally:
        ro.chmod(0o700)
