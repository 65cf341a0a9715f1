"""Starting a sweep's worker processes while its command line is still validating the config.

A loky worker's start-up is mostly imports (scikit-learn with SciPy and pandas: about 1.5 s of CPU), which it
would otherwise do on its first task, after the sweep process has validated the config (importing much the same
itself) and set the runner up: in series, on 2 cores.  `start` has joblib start its reusable executor's workers
at once, each importing what a chunk task needs (`_ready`), and returns without waiting for them; the sweep's own
joblib.Parallel then reuses them, as joblib reuses its executor for every call with the same arguments (the loky
backend and the same n_jobs: `runner.backends.parallel`).  Only for the loky backend with more than one worker:
the other backends start no processes (threading, sequential) or their own (dask, multiprocessing).
"""

from __future__ import annotations

import os
import time
import warnings
from collections.abc import Mapping


def _ready() -> tuple[int, float]:
    """In a worker: import what a chunk task needs (unpickling one imports dpbench.runner.sweep; writing its part,
    pyarrow's parquet writer); the worker's pid and the time it is done."""
    import pyarrow.parquet  # noqa: F401

    import dpbench.runner.sweep  # noqa: F401

    return os.getpid(), time.time()


class Prestart:
    """The workers being started: joblib's generator of their `_ready` answers, consumed by `finish`."""

    def __init__(self, n_jobs: int):
        import joblib

        self._answers = joblib.Parallel(n_jobs=n_jobs, backend="loky", return_as="generator_unordered")(
            joblib.delayed(_ready)() for _ in range(n_jobs))
        self.ready: list[tuple[int, float]] = []

    def finish(self, ok: bool = True) -> float | None:
        """Once the sweep is done with them (`ok`): the time the last worker was ready (None if they failed to
        start: the sweep then started its own).  Not `ok` (the command failed before its sweep ran): stop the
        workers now.  A generator joblib drops unfinished would stop them at a moment of its choosing, possibly
        while the sweep uses them: `finish` is called once, in a `finally`."""
        answers, self._answers = self._answers, None
        if answers is None:
            return None
        if not ok:
            with warnings.catch_warnings():  # joblib's note that the answers were not used
                warnings.simplefilter("ignore", UserWarning)
                answers.close()  # joblib aborts its tasks: the executor's workers are killed
            return None
        try:
            self.ready = list(answers)
        except Exception:  # noqa: BLE001 - a head start only (e.g. the sweep's abort already stopped them)
            return None
        return max(t for _, t in self.ready) if self.ready else None


def workers(runner: Mapping) -> int:
    """How many loky processes a sweep with these runner settings starts (0: none of its own)."""
    n_jobs = runner.get("n_jobs")
    if runner.get("backend") != "loky" or isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or n_jobs == 0:
        return 0
    import joblib

    n = joblib.effective_n_jobs(n_jobs)  # negative: joblib counts back from the CPUs
    return n if n > 1 else 0


def start(runner: Mapping) -> Prestart | None:
    """Start the workers of a sweep with these runner settings (runner.backend loky, runner.n_jobs giving more
    than one worker); None when it starts none of its own."""
    n = workers(runner)
    return Prestart(n) if n else None
