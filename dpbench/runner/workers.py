"""What runs in a worker: the chunk and study tasks, the per-worker cache of the last loaded unit, and the
check that stops a worker whose sweep is gone (runner.lock).

Each task pins BLAS to runner.blas_threads threads (processes x BLAS threads must not oversubscribe the
cores; the threading backend's tasks share one BLAS, which the sweep pins once).  A worker (a process, or a
thread of the threading backend) running consecutive chunks of one unit loads its data once.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import threading
import traceback
import uuid
from dataclasses import dataclass
from pathlib import Path

from threadpoolctl import threadpool_limits
from tqdm import std as tqdm_std
from tqdm.auto import tqdm

from dpbench import results
from dpbench.algorithms.shared_data import SharedData
from dpbench.data import MissingDataError, load_dataset
from dpbench.extend import load_imports
from dpbench.runner import lock
from dpbench.runner.fitting import fit_runs
from dpbench.runner.grid import RunSpec, Unit, even_cuts
from dpbench.runner.provenance import Provenance, base_row
from dpbench.tuning.study import StudyResult, run_study


@dataclass(frozen=True)
class TaskContext:
    """What every chunk task needs besides its runs (sent to the workers)."""

    sweep_dir: str
    prov: Provenance
    part_size: int
    blas_threads: int | None
    owner: lock.Owner
    imports: tuple[str, ...] = ()  # the config's user modules, imported by each worker before its first task
    studies_dir: str = ""  # the tuning studies' journals (run_sweep's studies_dir)


_loaded = threading.local()  # .unit: this worker's last loaded unit, (key, (data, shared statistics))
_parent: dict[int, int] = {}  # pid -> its parent at its first task (for a worker the sweep started: the sweep)


def _sweep_gone(ctx: TaskContext) -> bool:
    """True once the sweep that sent this task is gone; an orphaned worker of that sweep then exits."""
    if ctx.owner.alive():
        return False
    parent = _parent.get(os.getpid())
    if parent == ctx.owner.pid and os.getppid() != parent:
        os._exit(0)
    return True


def _started(ctx: TaskContext, note: str | None) -> None:
    """A task's start: the first in its process records the process's parent (_sweep_gone) and, in a worker
    process (not the sweep's own, whose tasks run beside its progress bars: the threading and sequential
    backends), gives tqdm a lock of its threads only.  tqdm's own (made by the first tqdm.write or bar of a
    process) holds a multiprocessing lock, which in a loky worker is a named semaphore in /dev/shm, unlinked at
    the process's exit: the command line's quick exit kills the idle workers, so it was left to the resource
    tracker ("leaked semaphore objects" on stderr).  It shares nothing across processes there anyway (each
    worker makes its own).  Then the task's `note` (a long task's estimate), above the bars in their process."""
    pid = os.getpid()
    if pid not in _parent:
        _parent[pid] = os.getppid()
        if (ctx.owner.pid, ctx.owner.host) != (pid, socket.gethostname()):
            tqdm_std.tqdm.set_lock(threading.RLock())  # every tqdm class's (tqdm.auto's too, a subclass)
    if note:  # one write (a loky worker's stderr is unbuffered: two workers' text and newline could interleave)
        tqdm.write(f"{note}\n", file=sys.stderr, end="")


def _load(unit: Unit, data_dir: str | None):
    """The unit's data and its shared statistics (train, test); kept for the next task, which is often the
    next chunk of the same unit.  Never shared across units."""
    key = (unit.runs[0].unit_key, data_dir)
    cached = getattr(_loaded, "unit", None)
    if cached is None or cached[0] != key:
        data = load_dataset(unit.dataset, split_seed=unit.data_seed, data_dir=data_dir, split=unit.split)
        cached = _loaded.unit = key, (data, (SharedData(data.X_train, data.y_train), SharedData(data.X_test)))
    return cached[1]


def forget() -> None:
    """Drop this thread's cached unit (the sweep process, once its sweep is over)."""
    _loaded.__dict__.pop("unit", None)


def _write(rows: list[dict], ctx: TaskContext) -> int:
    """Write rows as one part unless the sweep is gone (a re-run may be redoing them); returns rows written."""
    if _sweep_gone(ctx):
        return 0
    results.write_part(rows, ctx.sweep_dir, f"{rows[0]['run_id']}-{uuid.uuid4().hex[:8]}")
    return len(rows)


def _run_chunk(chunk: Unit, ctx: TaskContext) -> int:
    base = {r.run_id: {**base_row(r, ctx.prov), "attempt": chunk.attempts.get(r.run_id, 1)} for r in chunk.runs}
    try:
        data, shared = _load(chunk, ctx.prov.data_dir)
    except MissingDataError as exc:
        return _write([{**base[r.run_id], "status": "missing_data", "error": str(exc)} for r in chunk.runs], ctx)
    except Exception as exc:  # noqa: BLE001
        err = f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=3)}"[:2000]
        return _write([{**base[r.run_id], "status": "data_error", "error": err} for r in chunk.runs], ctx)
    if _sweep_gone(ctx):
        return 0
    rows = [{**base[r.run_id], **row} for r, row in zip(chunk.runs, fit_runs(chunk.runs, data, shared), strict=True)]
    written = 0
    for cut in even_cuts(len(rows), ctx.part_size):
        n = _write(rows[cut], ctx)
        if not n:
            break
        written += n
    return written


def run_chunk(chunk: Unit, ctx: TaskContext, note: str | None = None) -> int:
    """Fit one chunk of a unit's runs, in parts of about part_size runs (`even_cuts`), BLAS pinned; returns the runs
    written.  `note`: a line to print as it starts (a long task's estimate)."""
    _started(ctx, note)
    load_imports(ctx.imports)
    if ctx.blas_threads is None:
        return _run_chunk(chunk, ctx)
    with threadpool_limits(limits=ctx.blas_threads, user_api="blas"):
        return _run_chunk(chunk, ctx)


def run_study_task(run: RunSpec, ctx: TaskContext, note: str | None = None):
    """A tuned run's study on its unit (tuning.study), BLAS pinned; None if the data is missing (the run's
    chunk then records missing_data).  `note`: as run_chunk's."""
    _started(ctx, note)
    load_imports(ctx.imports)
    unit = Unit(dict(run.dataset), run.data_seed, run.split, [run])
    with threadpool_limits(limits=ctx.blas_threads, user_api="blas") if ctx.blas_threads else contextlib.nullcontext():
        try:
            data, _ = _load(unit, ctx.prov.data_dir)
        except MissingDataError:
            return None
        try:
            return run_study(run, data, Path(ctx.studies_dir), stop=lambda: _sweep_gone(ctx))
        except Exception as exc:  # noqa: BLE001 - the tuned runs record the failure
            return StudyResult({}, float("nan"), 0, error=f"{type(exc).__name__}: {exc}"[:500])
