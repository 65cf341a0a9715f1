"""Time estimates of a sweep: `sweep --dry-run` prints one (`estimate`); the runner orders its tasks by them (the
longest unit first) and says when a long task starts (`announcement`).  What the numbers mean (the cost model,
the simulated schedule) is in runner.cost_model, how they are measured in runner.calibration.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Sequence

from dpbench.data import dataset_label
from dpbench.runner import calibration
from dpbench.runner.cost_model import (
    FIGURE,
    FIRST_STUDY,
    PER_TASK,
    PER_TRIAL,
    WORKER_START,
    longest_first,
    makespan,
    size,
    trials_left,
    workers,
)
from dpbench.runner.grid import RunSpec, Unit, chunk_units, group_units
from dpbench.tuning.study import study_key

LONG_SECONDS = 120.0  # a task estimated longer is announced when it starts


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


def estimate(runs: Sequence[RunSpec], runner, data_dir, startup: float, timer: calibration.Timer | None = None,
             share: float | None = None, studies_dir=None) -> Estimate | None:
    """The wall time of sweeping `runs` (the runs still to do) with `runner` (dpbench.config.RunnerConfig);
    `startup`: seconds this command took to start (the fixed costs are proportional to it); `share`: CPU
    seconds per second a process gets (default: measured; a worker's by `worker_share`); `studies_dir`: where
    the studies' journals are (their finished trials are not counted).  None when no dataset of the grid
    loads here."""
    costs = calibration.calibrate(runs, data_dir, runner.blas_threads, timer, share)
    if costs is None:
        return None
    n_workers, calibrates = workers(runner), calibration.worth_calibrating(runs, runner)  # the sweep's order
    processes = n_workers > 1 and runner.backend != "threading"  # worker processes start and import dpbench
    per_worker = share or calibration.workers_share(runner, costs.share)
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
    probe = calibration.PROBE_SECONDS if n_workers > 1 and share is None else 0.0  # the runner measures its workers
    parts = {"start-up": startup, "calibration": costs.seconds + probe if calibrates else 0.0,
             "workers' start-up": WORKER_START * startup * slower if processes else 0.0,
             "tuning": makespan(tune, n_workers), "fits": makespan([chunk_seconds[id(c)] for c in chunks], n_workers),
             "figure": FIGURE * startup}
    return Estimate(parts, dict(cpu), n_workers, max(labels, default=(0.0, "")), costs.calibrated_on)
