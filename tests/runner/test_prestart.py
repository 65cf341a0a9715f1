"""A sweep's workers started early (runner.prestart) are the ones its tasks run on: joblib reuses its executor."""

import dataclasses
import os
import time

import joblib

from dpbench.runner import backends, prestart
from dpbench.runner.sweep import settings


def _pid(seconds: float) -> int:
    time.sleep(seconds)
    return os.getpid()


def _sweep_pids(runner) -> set[int]:
    """The processes a task of a sweep with these settings runs in (run_sweep's joblib set-up)."""
    with backends.parallel(runner):
        return set(joblib.Parallel(return_as="generator_unordered", batch_size=1)(
            joblib.delayed(_pid)(0.3) for _ in range(6)))


def test_the_sweep_runs_on_the_started_workers():
    runner = settings({"n_jobs": 2, "backend": "loky"})
    started = prestart.start(dataclasses.asdict(runner))
    pids = _sweep_pids(runner)
    ready = started.finish()
    started_pids = {pid for pid, _ in started.ready}
    assert len(started_pids) == 2 and pids <= started_pids  # no process of its own (a loaded machine may leave one
    # worker importing while the other runs every task)
    assert ready is not None and ready <= time.time()


def test_a_failed_command_stops_them():
    runner = settings({"n_jobs": 2, "backend": "loky"})
    started = prestart.start(dataclasses.asdict(runner))
    first = _sweep_pids(runner)
    assert started.finish(ok=False) is None
    assert not first & _sweep_pids(runner)  # killed: the next sweep starts its own


def test_only_loky_with_more_than_one_worker():
    assert prestart.workers({"backend": "loky", "n_jobs": 2}) == 2
    assert prestart.workers({"backend": "loky", "n_jobs": -1}) == (os.cpu_count() if os.cpu_count() > 1 else 0)
    for runner in ({"backend": "loky", "n_jobs": 1}, {"backend": "threading", "n_jobs": 2},
                   {"backend": "dask", "n_jobs": 2}, {"backend": "loky", "n_jobs": True}):
        assert prestart.workers(runner) == 0 and prestart.start(runner) is None
