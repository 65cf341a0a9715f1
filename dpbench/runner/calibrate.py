"""Time estimates of a sweep: `sweep --dry-run` prints one; the runner orders its tasks by them (the longest unit
first) and says when a long task starts.

Calibrating costs seconds (SECONDS_PER_SETTING a setting, and PROBE_SECONDS), so the runner calibrates only a
grid large enough to pay for it: with progress on, and when the size measure (`size`: training rows x columns x
rounds of every run, and x trials x seeds of every study, from the config alone) at the least CPU seconds a
cell costs (SECONDS_PER_CELL), shared among the workers, says calibrating is at most CALIBRATION_SHARE of the
run (`worth_calibrating`).  Otherwise it orders its tasks by the size measure and announces none.  Algorithms
other than batched BoostedAdaSSP cost up to ~100x more a cell, so a grid of them can skip calibration though
it would pay (paper001, robust_label); a small grid never pays for it.

A batch group (runs of one unit fitted together by `fit_batch`, or a run alone) of k runs of r_1..r_k rounds
(r = 1 without `n_rounds`) on n rows x d columns costs, in CPU seconds, with q = d / d0:

    c0 + sqrt(q) (c1 k + c2 sum r) + n q (c3 + c4 max r + c5 sum r)

c0: the group's fixed cost; c1, c2: each run's set-up and per-round work (accounting, noise, solves: from
Python overheads flat in d to d^3, hence sqrt(q)); c3: statistics shared by the group (features, X^T X); c4: a
pass over the rows per round, shared by the runs still going; c5: each run's per-round products.  A setting's
c's (non-negative least squares) come from CPU timings of the runner's own path (`fit_runs`: batching,
predictions, scores) on 2 row counts (up to 16,000: the data must outgrow the caches) x 1 and K runs x 1 and
r rounds (r doubling from 8 until the rounds take ROUNDS_CPU_SECONDS or the runs need no more) of one dataset
of the grid (d0 columns: the d of most of the grid's work).  A tuned setting's K runs take K quantiles of its
tuning space (a study's batch has K different points), a tuned run its range's mean rounds (the range its
study searches on its dataset: DP-EBM's capped by the features), a study's batch of trials the expected order
statistics of their rounds.  CPU seconds become wall seconds by the share of a CPU
a process gets (measured while calibrating, and for n_jobs forked processes at once: on a busy Linux machine a
sweep's workers share their session's part).  Fixed costs are proportional to this command's measured start-up
(imports and config): the sweep's own start, its workers' (fresh processes importing dpbench), each worker's
first study (Optuna), a study's per-trial bookkeeping (sampler, journal) and the figure.  The runner's order is
simulated on its workers: studies first, then the chunks.  The threading backend's workers are threads of
the sweep's process: as processes, without the workers' start-up.  A study with finished trials in its journal
costs its data load and its trials still to run (`trials_left`).  Not modelled: fits that end early on a failed
release (DP-AMBSSGD's empty threshold histogram), TPE's preference for some rounds over others, caches beyond
the calibration size, solves that grow as d^3 far beyond d0 (paper 000's d = 735 task), TukeyEM's cost per row
at n ~ n_models, and the GIL under the threading backend (fits that spend their time in Python, not in numpy,
share one core there and take longer than estimated).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import heapq
import json
import math
import os
import statistics
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NamedTuple

import numpy as np
from scipy.optimize import nnls
from threadpoolctl import threadpool_limits

from dpbench import algorithms, tuning
from dpbench.algorithms.shared_data import SharedData
from dpbench.data import MissingDataError, dataset_label, get_spec, load_dataset
from dpbench.data.catalog import availability
from dpbench.runner.fitting import fit_runs
from dpbench.runner.grid import RunSpec, Unit, canonical_json, chunk_units, group_units
from dpbench.tuning.spaces import bounded_space
from dpbench.tuning.study import finished_trials, study_key

CALIBRATION_ROWS = (2000, 16000)  # training rows of the calibration fits (at most the calibration set's; caches matter)
CALIBRATION_RUNS = 4  # K: runs of a calibrated batch
ROUNDS_CPU_SECONDS = 0.2  # calibration rounds double from 8 while they take less than this (CPU seconds), and
MAX_CALIBRATION_ROUNDS = 256  # the runs need more, up to this
BLOCK_SECONDS, BLOCKS = 0.02, 3  # a timing: the median of BLOCKS blocks of repeated calls, each >= BLOCK_SECONDS
PROBE_SECONDS = 0.5  # the workers' CPU share is measured for this long
LONG_SECONDS = 120.0  # a task estimated longer is announced when it starts
# fixed costs, per second of this command's start-up (measured on the 2-core build machine)
WORKER_START, FIRST_STUDY, PER_TRIAL, PER_TASK, FIGURE = 0.65, 0.05, 0.004, 0.005, 0.9
LOAD_PER_CELL = 6e-8  # CPU seconds to load (read and encode, or draw) one number of a unit's data (build machine)
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


def workers(runner) -> int:
    """The processes a sweep with `runner` (dpbench.config.RunnerConfig) runs its tasks in at once."""
    return runner.n_jobs if runner.backend != "sequential" and runner.n_jobs > 1 else 1


def workers_share(runner, share: float) -> float:
    """CPU seconds per second each of the runner's workers gets: measured (`worker_share`) for workers on this
    machine; `share` (this process's) for one worker or a remote Dask cluster."""
    local = workers(runner) > 1 and not (runner.backend == "dask" and runner.address)
    return (worker_share(workers(runner)) if local else None) or share


def unit_shape(dataset: dict) -> tuple[float, int] | None:
    """(training rows, columns) from the registry (a generator's options and defaults, a real set's reported
    n and d; 80% of n trains), without loading."""
    spec = get_spec(dataset["name"])
    if spec.generated:
        options = {**spec.source.options(), **dataset}
        return (float(options["n_train"]), int(options["d"])) if "n_train" in options and "d" in options else None
    paper = spec.paper
    if "d" not in paper or not ("train" in paper or "n" in paper):
        return None
    return float(paper["train"] if "train" in paper else 0.8 * paper["n"]), int(paper["d"])


def _available(dataset: dict, data_dir) -> bool:
    return availability(dataset["name"], Path(data_dir).expanduser() if data_dir else None)[0] != "missing"


def loads_here(task: Unit | RunSpec, data_dir) -> bool:
    """Whether a chunk's (or a study's run's) dataset is available (mirror, OpenML cache or generated)."""
    return _available((task.runs[0] if isinstance(task, Unit) else task).dataset, data_dir)


@dataclasses.dataclass(frozen=True)
class CostModel:
    """A setting's c0..c5 (module docstring) on the calibration set of d0 columns."""

    c: tuple[float, ...]
    d0: int

    @staticmethod
    def features(rows: float, q: float, runs: int, sum_rounds: float, max_rounds: float) -> np.ndarray:
        return np.array([1.0, q**0.5 * runs, q**0.5 * sum_rounds, rows * q, rows * q * max_rounds,
                         rows * q * sum_rounds])

    def seconds(self, rows: float, d: int, rounds: Sequence[float]) -> float:
        """One batch group of len(rounds) runs on rows x d."""
        f = self.features(rows, d / self.d0, len(rounds), float(sum(rounds)), float(max(rounds)))
        return float(np.dot(self.c, f))


def _quantile(space: dict, q: float):
    """The q-quantile of a tuning range (dpbench.algorithms.spaces; ints rounded, categoricals by position)."""
    if space["type"] == "categorical":
        choices = list(space["choices"])
        return choices[min(len(choices) - 1, int(q * len(choices)))]
    low, high = float(space["low"]), float(space["high"])
    value = math.exp(math.log(low) + q * (math.log(high) - math.log(low))) if space.get("log") else low + q * (
        high - low)
    return int(round(value)) if space["type"] == "int" else value


@functools.lru_cache(maxsize=256)
def _expected_rounds(space_json: str, trials: int) -> tuple[float, ...]:
    space = json.loads(space_json)
    rng = np.random.default_rng(0)  # draws as Optuna's samplers start: uniform (in log space when log), rounded
    low, high = space["low"] - 0.5, space["high"] + 0.5
    log = bool(space.get("log"))
    u = rng.uniform(*((math.log(low), math.log(high)) if log else (low, high)), size=(4096, trials))
    draws = np.clip(np.round(np.exp(u) if log else u), space["low"], space["high"])
    return tuple(np.sort(draws, axis=1).mean(axis=0))


def expected_rounds(space: dict, trials: int) -> list[float]:
    """The expected order statistics of `trials` draws of n_rounds from its tuning range (int; the rounds of a
    batch of trials), [its mean] for one."""
    return list(_expected_rounds(canonical_json(space), trials))


def tuned_rounds(run: RunSpec) -> dict | None:
    """The n_rounds range a tuned run's study searches (int, not pinned; DP-EBM's capped by its dataset's
    features, as the study does: tuning.spaces.bounded_space), else None."""
    if run.tuning_mode != "tuned":
        return None
    space, shape = tuning.search_space(algorithms.get_spec(run.algorithm), run.tuning), unit_shape(run.dataset)
    rounds = (bounded_space(run.algorithm, space, shape[1]) if shape else space).get("n_rounds", {})
    return rounds if rounds.get("type") == "int" else None


def run_rounds(run: RunSpec) -> float:
    """A run's rounds: its own (1 without n_rounds), or a tuned run's expected (its range's mean)."""
    space = tuned_rounds(run)
    return expected_rounds(space, 1)[0] if space is not None else float(run.params.get("n_rounds", 1))


def size(task: Unit | RunSpec) -> float:
    """A task's size from the config alone (nothing loaded or fitted; 0 for a dataset of unknown shape): training
    rows x columns x rounds summed over a chunk's runs, or over the trials x seeds of a study (its tuned run)."""
    runs = task.runs if isinstance(task, Unit) else [task]
    shape = unit_shape(runs[0].dataset)
    if shape is None:
        return 0.0
    n, d = shape
    if isinstance(task, Unit):
        return n * d * sum(run_rounds(r) for r in runs)
    trials = tuning.study_trials(algorithms.get_spec(task.algorithm), task.tuning)
    return n * d * run_rounds(task) * trials * task.tuning["seeds"]


def trials_left(run: RunSpec, studies_dir) -> float:
    """The share of a tuned run's study still to run: its trials not yet finished in `studies_dir`'s journal (1
    with no directory).  A resumed sweep reuses the finished trials, so its estimates count only the rest."""
    if studies_dir is None:
        return 1.0
    trials = tuning.study_trials(algorithms.get_spec(run.algorithm), run.tuning)
    return max(0, trials - finished_trials(studies_dir, run)) / trials if trials else 0.0


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


class Setting:
    """A calibrated (algorithm, parameters, tuned or not) and how its runs batch: their rounds and groups."""

    def __init__(self, run: RunSpec):
        self.algorithm, self.run, self.model = run.algorithm, run, None
        tuned = run.tuning_mode == "tuned"
        self.space = tuning.search_space(algorithms.get_spec(run.algorithm), run.tuning) if tuned else {}
        self.has_rounds = "n_rounds" in run.params
        self.target_rounds = 1.0  # the most rounds a run of this setting needs (calibrate's)
        self.key, other = (self.estimator(1, 0, r).batch_key() for r in (1, 2))
        self.key_has_rounds = self.key != other  # DP-GD batches only runs of equal rounds

    def params(self, runs: int, i: int, rounds: int) -> dict:
        """Run i of `runs`: a tuned setting's (i + 1/2) / runs quantile of its space, at `rounds` rounds."""
        params = {**self.run.params, **{n: _quantile(s, (i + 0.5) / runs) for n, s in self.space.items()}}
        return {**params, "n_rounds": rounds} if self.has_rounds else params

    def calibration_runs(self, runs: int, rounds: int) -> list[RunSpec]:
        mode = "private_selection" if self.run.tuning_mode == "private_selection" else "fixed"
        return [dataclasses.replace(self.run, params=self.params(runs, i, rounds), seed=i, tuning_mode=mode, tuned=None)
                for i in range(runs)]

    def estimator(self, runs: int, i: int, rounds: int):
        return algorithms.make(self.algorithm, **self.params(runs, i, rounds))

    def group(self, rounds: float):
        """The key of the batch group a run of these rounds joins (None: fitted alone)."""
        if self.key is None:
            return None
        return (self.key, rounds) if self.key_has_rounds else self.key


def setting_key(run: RunSpec) -> str:
    params = {k: v for k, v in run.params.items() if k != "n_rounds"}
    return canonical_json([run.algorithm, params, run.tuning_mode == "tuned" and dict(run.tuning),
                           run.tuning_mode == "private_selection" and dict(run.tuning)])


def _subset(data, rows: int):
    """The first `rows` training rows of a fixed permutation, and test rows in the same proportion."""
    order = np.random.default_rng(0).permutation(data.n_train)[:rows]
    test = max(1, round(rows * len(data.y_test) / max(1, data.n_train)))
    return dataclasses.replace(data, X_train=data.X_train[order], y_train=data.y_train[order],
                               X_test=data.X_test[:test], y_test=data.y_test[:test])


def _fit_path(runs: list[RunSpec], data) -> Callable[[], object]:
    return lambda: fit_runs(runs, data, (SharedData(data.X_train, data.y_train), SharedData(data.X_test)))


def _calibrate_setting(s: Setting, data, d0: int, timer: Timer) -> CostModel:
    """Time the setting at the design points of the module docstring and fit c0..c5."""
    n1, n2 = (min(data.n_train, max(2, n)) for n in (min(CALIBRATION_ROWS[0], data.n_train // 4),
                                                      CALIBRATION_ROWS[1]))
    parts = {n: _subset(data, n) for n in (n1, n2)}
    ks = (1, CALIBRATION_RUNS) if s.key is not None else (1,)

    def time_at(rows: int, k: int, r: int) -> float:
        return timer(_fit_path(s.calibration_runs(k, r), parts[rows]), Point(rows, k, r))

    _fit_path(s.calibration_runs(1, 1), parts[n1])()  # warm-up: imports, caches
    points = {(n, k, 1): time_at(n, k, 1) for n in (n1, n2) for k in ks}
    if s.has_rounds:  # rounds enough to time their cost precisely (or as many as the runs need)
        r, top = 8, (n2, ks[-1])
        while ((t := time_at(*top, r)) - points[(*top, 1)] < ROUNDS_CPU_SECONDS and r < s.target_rounds
               and 2 * r <= MAX_CALIBRATION_ROUNDS):
            r *= 2
        points[(*top, r)] = t
        points.update({(n, k, r): time_at(n, k, r) for n in (n1, n2) for k in ks if (n, k) != top})
    A = np.array([CostModel.features(n, 1.0, k, k * r, r) for n, k, r in points])
    b = np.array(list(points.values()))
    scale = np.where(A.max(axis=0) > 0, A.max(axis=0), 1.0)
    c, _ = nnls(A / scale, b)
    return CostModel(tuple(float(v) for v in c / scale), d0)


@dataclasses.dataclass
class Costs:
    """Calibrated settings of a grid and the estimates of its tasks, in CPU seconds (wall seconds: divided by
    the share of a CPU the process that runs them gets)."""

    settings: dict[str, Setting]
    d0: int
    calibrated_on: str
    seconds: float  # what calibrating took
    share: float  # CPU seconds per second this process got while calibrating (< 1 on a busy machine)
    data_dir: str | None = None

    def _shape(self, dataset: dict):
        return unit_shape(dataset) if _available(dataset, self.data_dir) else None

    def chunk_parts(self, chunk: Unit) -> dict[str, float]:
        """A chunk's seconds by algorithm (fits and scores) and "loading data" (its unit's); nothing when its
        data is missing."""
        shape = self._shape(chunk.dataset)
        if shape is None:
            return {}
        n, d = shape
        groups: dict = defaultdict(list)
        for i, r in enumerate(chunk.runs):
            s = self.settings[setting_key(r)]
            rounds = run_rounds(r)
            key = s.group(rounds)
            groups[("alone", i) if key is None else key].append((s, rounds))
        parts = defaultdict(float, {"loading data": LOAD_PER_CELL * n * d * 1.25})
        for g in groups.values():
            parts[g[0][0].algorithm] += g[0][0].model.seconds(n, d, [r for _, r in g])
        return dict(parts)

    def chunk(self, chunk: Unit) -> float:
        return sum(self.chunk_parts(chunk).values())

    def study(self, run: RunSpec, left: float = 1.0) -> tuple[float, int]:
        """(a study's data load, and the fits and validation scores of its `left` share of trials still to run;
        its trials)."""
        shape, s = self._shape(run.dataset), self.settings[setting_key(run)]
        trials = tuning.study_trials(algorithms.get_spec(run.algorithm), run.tuning)
        if shape is None:
            return 0.0, 0
        n, d = shape
        n_fit = n * (1 - run.tuning["validation_fraction"])
        batch, seeds = run.tuning["batch_trials"], run.tuning["seeds"]
        fits = 0.0
        batches = [batch] * (trials // batch) + ([trials % batch] if trials % batch else [])
        space = tuned_rounds(run)
        for count in batches:
            rounds = expected_rounds(space, count) if space else [run_rounds(run)] * count
            groups: dict = defaultdict(list)  # the batch's fits grouped as `batch_groups` does
            for i, r in enumerate(rounds):
                for j in range(seeds):
                    key = s.group(r)
                    groups[("alone", i, j) if key is None else key].append(r)
            fits += sum(s.model.seconds(n_fit, d, g) for g in groups.values())
        return LOAD_PER_CELL * n * d * 1.25 + left * fits, trials


def _calibration_data(runs: Sequence[RunSpec], data_dir):
    """(a run of, the data of) the dataset the grid is calibrated on, or None when none loads: of the units whose
    d is nearest the median d of the grid's data (weighted by n x d: the d of most of the work), the smallest."""
    units = {r.unit_key: r for r in runs if _available(r.dataset, data_dir)}
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
    settings = {}
    with threadpool_limits(limits=blas_threads, user_api="blas") if blas_threads else contextlib.nullcontext():
        for r in runs:
            key = setting_key(r)
            if key not in settings:
                settings[key] = Setting(dataclasses.replace(r, dataset=unit.dataset))
            settings[key].target_rounds = max(settings[key].target_rounds, run_rounds(r))
        for s in settings.values():
            s.model = _calibrate_setting(s, data, d0, timer)
    wall = time.perf_counter() - start
    share = share or min(max(0.01, (time.process_time() - cpu) / max(wall, 1e-9)), float(os.cpu_count() or 1))
    return Costs(settings, d0, dataset_label(unit.dataset), wall, share, data_dir)


def longest_first(tasks: list, unit_of: Callable, seconds: Callable) -> list:
    """The runner's order: units by their total `seconds` (calibrated, or the size measure), longest first (a
    worker that gets a long unit late would finish alone), a unit's tasks together, longest first."""
    total: dict = defaultdict(float)
    for t in tasks:
        total[unit_of(t)] += seconds(t)
    return sorted(tasks, key=lambda t: (-total[unit_of(t)], unit_of(t), -seconds(t)))


def makespan(seconds: Sequence[float], workers: int) -> float:
    """Wall seconds of tasks handed in this order to the first free of `workers` workers (joblib, batch_size 1)."""
    free = [0.0] * max(1, workers)
    for s in seconds:
        heapq.heappush(free, heapq.heappop(free) + s)
    return max(free)


def chunk_label(chunk: Unit) -> str:
    names = ", ".join(dict.fromkeys(r.algorithm for r in chunk.runs))
    return f"{names} on {dataset_label(chunk.dataset)} ({len(chunk.runs)} runs)"


def study_label(run: RunSpec) -> str:
    return f"tuning {run.algorithm} on {dataset_label(run.dataset)} (eps {run.epsilon:g})"


def announcement(experiment: str, label: str, seconds: float) -> str | None:
    """The line a task estimated longer than LONG_SECONDS prints when it starts (None for a shorter one)."""
    return f"{experiment}: {label}, ~{_duration(seconds)} estimated" if seconds > LONG_SECONDS else None


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.1f} min" if seconds < 5400 else f"{seconds / 3600:.1f} h"


@dataclasses.dataclass
class Estimate:
    """A sweep's wall time by part (seconds), CPU seconds by algorithm, and its longest task."""

    parts: dict[str, float]
    cpu: dict[str, float]
    workers: int
    longest: tuple[float, str]
    calibrated_on: str

    @property
    def seconds(self) -> float:
        return sum(self.parts.values())

    def describe(self) -> str:
        parts = ", ".join(f"{k} {_duration(v)}" for k, v in self.parts.items() if v >= 0.5)
        cpu = ", ".join(f"{a} {_duration(t)}" for a, t in sorted(self.cpu.items(), key=lambda kv: -kv[1]) if t >= 0.5)
        longest = (f"; the longest task ~{_duration(self.longest[0])} ({self.longest[1]})"
                   if self.longest[0] > LONG_SECONDS else "")
        return (f"time estimate: ~{_duration(self.seconds)} on {self.workers} worker(s) ({parts}); CPU time: "
                f"{cpu or '< 1 s'}{longest}; calibrated on {self.calibrated_on} (within ~2x when the machine's load "
                f"stays as it is now)")


def estimate(runs: Sequence[RunSpec], runner, data_dir, startup: float, timer: Timer | None = None,
             share: float | None = None, studies_dir=None) -> Estimate | None:
    """The wall time of sweeping `runs` (the runs still to do) with `runner` (dpbench.config.RunnerConfig);
    `startup`: seconds this command took to start (the fixed costs are proportional to it); `share`: CPU
    seconds per second a process gets (default: measured; a worker's by `worker_share`); `studies_dir`: where
    the studies' journals are (their finished trials are not counted).  None when no dataset of the grid
    loads here."""
    costs = calibrate(runs, data_dir, runner.blas_threads, timer, share)
    if costs is None:
        return None
    n_workers, calibrates = workers(runner), worth_calibrating(runs, runner)  # the sweep's order: calibrated or size
    processes = n_workers > 1 and runner.backend != "threading"  # worker processes start and import dpbench
    per_worker = share or workers_share(runner, costs.share)
    slower = max(1.0, costs.share / per_worker)  # a worker vs this process (start-up was timed alone)
    cpu: dict[str, float] = defaultdict(float)
    studies = {study_key(r): r for r in runs if r.tuning_mode == "tuned"}
    study_seconds = {}
    for k, r in studies.items():
        left = trials_left(r, studies_dir)
        fits, trials = costs.study(r, left)
        study_seconds[k] = fits / per_worker + (trials * left * PER_TRIAL + PER_TASK) * startup * slower
        cpu[r.algorithm] += fits
    keys = longest_first(sorted(studies, key=lambda k: studies[k].unit_key), lambda k: studies[k].unit_key,
                         study_seconds.get if calibrates else lambda k: size(studies[k]))
    tune = [study_seconds[k] for k in keys]
    for i in range(min(n_workers if processes else 1, len(tune))):  # a process's first study imports Optuna
        tune[i] += FIRST_STUDY * startup * slower
    chunks = chunk_units(group_units(list(runs)), runner.chunk_runs)
    chunk_seconds = {}
    for c in chunks:
        parts = costs.chunk_parts(c)
        chunk_seconds[id(c)] = sum(parts.values()) / per_worker + PER_TASK * startup * slower
        for name, seconds in parts.items():
            cpu[name] += seconds
    chunks = longest_first(chunks, lambda c: c.runs[0].unit_key,
                           (lambda c: chunk_seconds[id(c)]) if calibrates else size)
    labels = [(study_seconds[k], study_label(studies[k])) for k in keys]
    labels += [(chunk_seconds[id(c)], chunk_label(c)) for c in chunks]
    probe = PROBE_SECONDS if n_workers > 1 and share is None else 0.0  # the runner measures its workers too
    parts = {"start-up": startup, "calibration": costs.seconds + probe if calibrates else 0.0,
             "workers' start-up": WORKER_START * startup * slower if processes else 0.0,
             "tuning": makespan(tune, n_workers), "fits": makespan([chunk_seconds[id(c)] for c in chunks], n_workers),
             "figure": FIGURE * startup}
    return Estimate(parts, dict(cpu), n_workers, max(labels, default=(0.0, "")), costs.calibrated_on)
