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


def _executor_pids() -> set[int]:
    """The worker processes of joblib's reusable loky executor (loky's own record of them)."""
    from joblib.externals.loky import reusable_executor

    return set(reusable_executor._executor._processes)


def _sweep_pids(runner) -> set[int]:
    """The processes a task of a sweep with these settings runs in (run_sweep's joblib set-up)."""
    with backends.parallel(runner):
        return set(joblib.Parallel(return_as="generator_unordered", batch_size=1)(
            joblib.delayed(_pid)(0.3) for _ in range(6)))


def test_the_sweep_runs_on_the_started_workers():
    runner = settings({"n_jobs": 2, "backend": "loky"})
    started = prestart.start(dataclasses.asdict(runner))
    workers = _executor_pids()
    pids = _sweep_pids(runner)
    ready = started.finish()
    assert len(workers) == 2 and pids <= workers and {pid for pid, _ in started.ready} <= workers
    assert ready is not None and ready <= time.time()


def test_a_failed_command_does_not_wait_for_them():
    """finish(ok=False) returns at once, the workers finishing their start meanwhile; a later sweep reuses them."""
    runner = settings({"n_jobs": 2, "backend": "loky"})
    started = prestart.start(dataclasses.asdict(runner))
    workers = _executor_pids()
    assert started.finish(ok=False) is None
    started._drain.join()
    assert started.ready and _sweep_pids(runner) <= workers and _executor_pids() == workers


def test_only_loky_with_more_than_one_worker():
    assert prestart.workers({"backend": "loky", "n_jobs": 2}) == 2
    assert prestart.workers({"backend": "loky", "n_jobs": -1}) == (os.cpu_count() if os.cpu_count() > 1 else 0)
    for runner in ({"backend": "loky", "n_jobs": 1}, {"backend": "threading", "n_jobs": 2},
                   {"backend": "dask", "n_jobs": 2}, {"backend": "loky", "n_jobs": True}):
        assert prestart.workers(runner) == 0 and prestart.start(runner) is None
