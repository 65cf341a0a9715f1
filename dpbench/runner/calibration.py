"""Calibration of the cost model (runner.cost_model): CPU timings of each setting of a grid on the runner's own
path, its c0..c5 fitted to them, and the share of a CPU the sweep's workers get.  A module of its own because it
is how the estimate's numbers are measured, not what a sweep does: a reader following a sweep can skip it.

Calibrating costs seconds (SECONDS_PER_SETTING a setting, and PROBE_SECONDS), so the runner calibrates only a
grid large enough to pay for it: with progress on, and when the size measure (cost_model.size) at the least CPU
seconds a cell costs (SECONDS_PER_CELL), shared among the workers, says calibrating is at most CALIBRATION_SHARE
of the run (`worth_calibrating`).  Otherwise it orders its tasks by the size measure and announces none.
Algorithms other than batched BoostedAdaSSP cost up to ~100x more a cell, so a grid of them can skip
calibration though it would pay (paper001, robust_label); a small grid never pays for it.

A setting's c's (non-negative least squares) come from CPU timings of the runner's own path (`fit_runs`:
batching, predictions, scores) on 2 row counts (up to 16,000: the data must outgrow the caches) x 1 and K runs
x 1 and r rounds (r doubling from 8 until the rounds take ROUNDS_CPU_SECONDS or the runs need no more) of one
dataset of the grid (d0 columns: the d of most of the grid's work).  A tuned setting's K runs take K quantiles
of its tuning space (a study's batch has K different points).  The timings are of the algorithm's whole path:
a fit that falls back (a status other than ok) stops early, so a setting is timed at the largest epsilon of its
runs, on 4x more rows (up to the calibration set's) while none of its fits runs to the end, and at
CALIBRATION_EPSILON when none does on all of them.  DP-ROBGD's private histograms come out empty on most of a
calibration set, and timed there its studies were estimated at 1/50 of their time (the regression leaderboard's:
70 s for about an hour).  A grid whose runs fall back then takes less than its estimate.  CPU seconds become
wall seconds by the share of a CPU a process gets (measured while calibrating, and for n_jobs forked processes
at once: on a busy Linux machine a sweep's workers share their session's part).
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import os
import statistics
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np
from scipy.optimize import nnls
from threadpoolctl import threadpool_limits

from dpbench.algorithms.shared_data import SharedData
from dpbench.data import MissingDataError, dataset_label, load_dataset
from dpbench.runner.cost_model import (
    CostModel,
    Costs,
    Setting,
    available,
    run_rounds,
    setting_key,
    size,
    unit_shape,
    workers,
)
from dpbench.runner.fitting import fit_runs
from dpbench.runner.grid import RunSpec, group_units
from dpbench.tuning.study import study_key

CALIBRATION_ROWS = (2000, 16000)  # training rows of the calibration fits (at most the calibration set's; caches matter)
CALIBRATION_RUNS = 4  # K: runs of a calibrated batch
CALIBRATION_EPSILON = 1e4  # a setting whose fits fall back on all the calibration set's rows is timed at this epsilon
ROUNDS_CPU_SECONDS = 0.2  # calibration rounds double from 8 while they take less than this (CPU seconds), and
MAX_CALIBRATION_ROUNDS = 256  # the runs need more, up to this
BLOCK_SECONDS, BLOCKS = 0.02, 3  # a timing: the median of BLOCKS blocks of repeated calls, each >= BLOCK_SECONDS
PROBE_SECONDS = 0.5  # the workers' CPU share is measured for this long
# whether a sweep calibrates (`worth_calibrating`), from calibrations of 13 grids on the loaded build machine:
SECONDS_PER_CELL = 3e-11  # the least CPU seconds a run takes per `size` cell (fig1_fixed, fig1, fig5: 3.4-3.9e-11;
# grids of TukeyEM, DP-EBM, trees: 1e-9 to 3e-8)
SECONDS_PER_SETTING = 1.5  # calibrating a setting (0.5-2.6 s wall)
CALIBRATION_SHARE = 0.02  # the most of a sweep's run time its calibration may take


class Point(NamedTuple):
    """What a calibration timing fits: `runs` runs of `rounds` rounds each on `rows` training rows."""

    rows: int
    runs: int
    rounds: int


Timer = Callable[[Callable[[], object], Point], float]


def _block(fn, calls: int) -> float:
    start = time.process_time()
    for _ in range(calls):
        fn()
    return (time.process_time() - start) / calls


def median_cpu_seconds(fn: Callable[[], object], point: Point) -> float:
    """CPU seconds of one call of fn (what other processes take from this one is `Costs.share`): the median of
    BLOCKS blocks of enough calls to last BLOCK_SECONDS (one call when a call alone lasts that long)."""
    once = _block(fn, 1)
    if once >= BLOCKS * BLOCK_SECONDS:
        return once
    calls = max(1, math.ceil(BLOCK_SECONDS / max(once, 1e-6)))
    return statistics.median(_block(fn, calls) for _ in range(BLOCKS))


def _spin_share(seconds: float) -> float:
    """CPU seconds this process gets per second while it spins for `seconds` (wall)."""
    start, cpu, x = time.perf_counter(), time.process_time(), 0
    while time.perf_counter() - start < seconds:
        for i in range(10_000):
            x += i
    return (time.process_time() - cpu) / (time.perf_counter() - start)


def worker_share(processes: int, seconds: float = PROBE_SECONDS) -> float | None:
    """CPU seconds per second each of `processes` processes gets when they all compute at once, now (forked
    processes spinning for `seconds`): what the cores, and the machine's other users, leave a sweep's workers.
    (Linux's scheduler shares the CPU between sessions, so on a busy machine a sweep's workers share their
    session's part.)  None without fork."""
    if not hasattr(os, "fork"):
        return None
    pipes, pids = [], []
    for _ in range(processes):
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: spin, report, leave at once (no cleanup of the parent's state)
            try:
                os.write(write, f"{_spin_share(seconds):.6f}".encode())
            finally:
                os._exit(0)
        os.close(write)
        pipes.append(read)
        pids.append(pid)
    shares = []
    for read, pid in zip(pipes, pids, strict=True):
        shares.append(float(os.read(read, 64) or "nan"))
        os.close(read)
        os.waitpid(pid, 0)
    return float(np.nanmean(shares)) if np.isfinite(shares).any() else None


def workers_share(runner, share: float) -> float:
    """CPU seconds per second each of the runner's workers gets: measured (`worker_share`) for workers on this
    machine; `share` (this process's) for one worker or a remote Dask cluster."""
    local = workers(runner) > 1 and not (runner.backend == "dask" and runner.address)
    return (worker_share(workers(runner)) if local else None) or share


def worth_calibrating(runs: Sequence[RunSpec], runner) -> bool:
    """Whether the runner calibrates before sweeping `runs` (the module docstring): progress on, and calibrating
    their settings at most CALIBRATION_SHARE of their run time at SECONDS_PER_CELL."""
    if not runner.progress or not runs:
        return False
    studies = {study_key(r): r for r in runs if r.tuning_mode == "tuned"}
    cells = sum(size(u) for u in group_units(list(runs)))
    cells += sum(size(r) for r in studies.values())
    calibrating = SECONDS_PER_SETTING * len({setting_key(r) for r in runs}) + PROBE_SECONDS
    return calibrating <= CALIBRATION_SHARE * SECONDS_PER_CELL * cells / workers(runner)


def _calibration_runs(s: Setting, runs: int, rounds: int) -> list[RunSpec]:
    """`runs` runs of the setting at `rounds` rounds (a tuned setting's at quantiles of its space), as fixed runs;
    a privately selected setting's as selections whose candidates all have `rounds` rounds (n_rounds pinned: drawn
    from its range, they would cost what the calibration data's range gives, not what the runs' data's does)."""
    if s.run.tuning_mode != "private_selection":
        return [dataclasses.replace(s.run, params=s.params(runs, i, rounds), seed=i, tuning_mode="fixed", tuned=None)
                for i in range(runs)]
    tuning = dict(s.run.tuning)
    if s.has_rounds:
        tuning["pinned"] = sorted({*tuning.get("pinned", ()), "n_rounds"})
    return [dataclasses.replace(s.run, params=s.params(runs, i, rounds), seed=i, tuning=tuning, tuned=None)
            for i in range(runs)]


def _subset(data, rows: int):
    """The first `rows` training rows of a fixed permutation, and test rows in the same proportion."""
    order = np.random.default_rng(0).permutation(data.n_train)[:rows]
    test = max(1, round(rows * len(data.y_test) / max(1, data.n_train)))
    return dataclasses.replace(data, X_train=data.X_train[order], y_train=data.y_train[order],
                               X_test=data.X_test[:test], y_test=data.y_test[:test])


def _fit_path(runs: list[RunSpec], data) -> Callable[[], list[dict]]:
    return lambda: fit_runs(runs, data, (SharedData(data.X_train, data.y_train), SharedData(data.X_test)))


def _full_path(s: Setting, data, ks: tuple[int, ...], rounds: int) -> tuple[Setting, int, int]:
    """The setting as timed, and its two calibration row counts: CALIBRATION_ROWS (at most the data's training rows
    and a quarter of them), times 4 while none of its K fits of `rounds` rounds on the larger runs to the end; at
    CALIBRATION_EPSILON if none does on all the rows.  Its first fit warms the path up (imports, compiled kernels,
    caches) before anything is timed."""
    n1, n2 = (min(data.n_train, max(2, n)) for n in (min(CALIBRATION_ROWS[0], data.n_train // 4),
                                                      CALIBRATION_ROWS[1]))
    while not any(row["status"] == "ok"
                  for row in _fit_path(_calibration_runs(s, ks[-1], rounds), _subset(data, n2))()):
        if n2 < data.n_train:
            n1, n2 = min(4 * n1, data.n_train // 4), min(data.n_train, 4 * n2)
        elif s.run.epsilon < CALIBRATION_EPSILON:
            s = Setting(dataclasses.replace(s.run, epsilon=CALIBRATION_EPSILON))
        else:  # it falls back even there (or is not private): its fallback is what is timed
            break
    return s, n1, n2


def _calibrate_setting(s: Setting, data, d0: int, timer: Timer, target_rounds: float) -> CostModel:
    """Time the setting at the design points of the module docstring (rounds up to the most its runs need,
    `target_rounds`) and fit c0..c5."""
    ks = (1, CALIBRATION_RUNS) if s.key is not None else (1,)
    s, n1, n2 = _full_path(s, data, ks, min(8, max(1, int(target_rounds))) if s.has_rounds else 1)
    parts = {n: _subset(data, n) for n in (n1, n2)}

    def time_at(rows: int, k: int, r: int) -> float:
        return timer(_fit_path(_calibration_runs(s, k, r), parts[rows]), Point(rows, k, r))

    points = {(n, k, 1): time_at(n, k, 1) for n in (n1, n2) for k in ks}
    if s.has_rounds:  # rounds enough to time their cost precisely (or as many as the runs need)
        r, top = 8, (n2, ks[-1])
        while ((t := time_at(*top, r)) - points[(*top, 1)] < ROUNDS_CPU_SECONDS and r < target_rounds
               and 2 * r <= MAX_CALIBRATION_ROUNDS):
            r *= 2
        points[(*top, r)] = t
        points.update({(n, k, r): time_at(n, k, r) for n in (n1, n2) for k in ks if (n, k) != top})
    A = np.array([CostModel.features(n, 1.0, k, k * r, r) for n, k, r in points])
    b = np.array(list(points.values()))
    scale = np.where(A.max(axis=0) > 0, A.max(axis=0), 1.0)
    c, _ = nnls(A / scale, b)
    return CostModel(tuple(float(v) for v in c / scale), d0)


def _calibration_data(runs: Sequence[RunSpec], data_dir):
    """(a run of, the data of) the dataset the grid is calibrated on, or None when none loads: of the units whose
    d is nearest the median d of the grid's data (weighted by n x d: the d of most of the work), the smallest."""
    units = {r.unit_key: r for r in runs if available(r.dataset, data_dir)}
    shapes = {k: unit_shape(r.dataset) or (math.inf, 1) for k, r in units.items()}
    known = sorted((d, n * d) for n, d in shapes.values() if math.isfinite(n))
    weights = np.cumsum([w for _, w in known])
    median = known[int(np.searchsorted(weights, weights[-1] / 2))][0] if known else 1
    for key in sorted(units, key=lambda k: (abs(math.log(shapes[k][1] / median)), math.prod(shapes[k]))):
        run = units[key]
        try:
            return run, load_dataset(run.dataset, split_seed=run.data_seed, data_dir=data_dir, split=run.split)
        except (MissingDataError, OSError, ValueError):
            continue
    return None


def calibrate(runs: Sequence[RunSpec], data_dir, blas_threads: int | None = 1, timer: Timer | None = None,
              share: float | None = None) -> Costs | None:
    """Calibrated costs of the settings of `runs` (None when no dataset of the grid loads here).  `timer`:
    default median_cpu_seconds; `share`: CPU seconds this process gets per second (default: measured while
    calibrating)."""
    timer = timer or median_cpu_seconds
    start, cpu = time.perf_counter(), time.process_time()
    found = _calibration_data(runs, data_dir)
    if found is None:
        return None
    unit, data = found
    shape = unit_shape(unit.dataset)
    d0 = shape[1] if shape else data.d
    settings: dict[str, Setting] = {}
    target: dict[str, float] = defaultdict(lambda: 1.0)  # the most rounds a run of each setting needs
    with threadpool_limits(limits=blas_threads, user_api="blas") if blas_threads else contextlib.nullcontext():
        for r in runs:
            key = setting_key(r)
            if key not in settings or r.epsilon > settings[key].run.epsilon:  # a fit goes furthest at the largest
                settings[key] = Setting(dataclasses.replace(r, dataset=unit.dataset))
            target[key] = max(target[key], run_rounds(r))
        for key, s in settings.items():
            s.model = _calibrate_setting(s, data, d0, timer, target[key])
    wall = time.perf_counter() - start
    share = share or min(max(0.01, (time.process_time() - cpu) / max(wall, 1e-9)), float(os.cpu_count() or 1))
    return Costs(settings, d0, dataset_label(unit.dataset), wall, share, data_dir)
