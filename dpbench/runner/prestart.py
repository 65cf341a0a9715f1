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
import threading
import time
from collections.abc import Mapping


def _ready() -> tuple[int, float]:
    """In a worker: import what a chunk task needs (unpickling one imports dpbench.runner.sweep; writing its part,
    pyarrow's parquet writer); the worker's pid and the time it is done."""
    import pyarrow.parquet  # noqa: F401

    import dpbench.runner.sweep  # noqa: F401

    return os.getpid(), time.time()


_draining: list[threading.Thread] = []  # the threads collecting the answers of prestarts a failed command left


def drained(timeout: float) -> bool:
    """Wait, up to `timeout` seconds in all, for the threads collecting the answers of prestarts whose command
    failed (Prestart.finish); True when none is left.  The command line's quick exit asks once it has killed the
    workers, which ends their joblib call: that call then cleans its temporary folder (deletes it, unregisters it
    from loky's resource tracker and its atexit handler), which must be done before the atexit handlers run,
    or both clean it at once (a KeyError of the resource tracker on stderr)."""
    deadline = time.monotonic() + timeout
    for thread in list(_draining):
        thread.join(max(0.0, deadline - time.monotonic()))
    _draining[:] = [t for t in _draining if t.is_alive()]
    return not _draining


class Prestart:
    """The workers being started: joblib's generator of their `_ready` answers, consumed by `finish`."""

    def __init__(self, n_jobs: int):
        import joblib

        self._answers = joblib.Parallel(n_jobs=n_jobs, backend="loky", return_as="generator_unordered")(
            joblib.delayed(_ready)() for _ in range(n_jobs))
        self.ready: list[tuple[int, float]] = []
        self._drain: threading.Thread | None = None

    def finish(self, ok: bool = True) -> float | None:
        """Once the command is done with the workers: the time the last was ready (None if they failed to start:
        the sweep then started its own).  Not `ok` (the command failed before its sweep ran): return at once,
        a daemon thread collecting their answers (they stay, idle, for a later sweep of this process; the command
        line's quick exit stops them, then waits for the thread: `drained`).  Called once, in a `finally`: a
        generator joblib drops unfinished aborts its tasks by killing the executor's workers, possibly while a
        sweep uses them (and loky's manager thread can trip over the items it drops)."""
        answers, self._answers = self._answers, None
        if answers is None:
            return None
        if not ok:
            self._drain = threading.Thread(target=self._collect, args=(answers,), name="dpbench-prestart",
                                           daemon=True)
            _draining[:] = [*(t for t in _draining if t.is_alive()), self._drain]
            self._drain.start()
            return None
        self._collect(answers)
        return max(t for _, t in self.ready) if self.ready else None

    def _collect(self, answers) -> None:
        try:
            self.ready = list(answers)
        except Exception:  # noqa: BLE001 - a head start only (e.g. the sweep's abort or the exit stopped them)
            self.ready = []


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
