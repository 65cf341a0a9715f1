"""A sweep's time estimate, made once (`estimate`): the runner's tasks in its order (the longest unit first: a
worker that gets a long unit late would finish alone), each with its estimate, which the progress bars count
as work and for the time left, and which announces a long task when it starts; `sweep --dry-run` prints the
sweep's wall time by part from the same call.

The estimates are wall seconds in a worker when the grid is worth calibrating (runner.calibration), else the
size measure (runner.cost_model.size: from the config alone; 0 for data missing here), and then the bars count
runs and trials and no task is announced.  What the numbers mean (the cost model, the simulated schedule) is in
runner.cost_model, how they are measured in runner.calibration: a reader following a sweep can skip both.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Mapping, Sequence

from dpbench import algorithms, tuning
from dpbench.data import dataset_label
from dpbench.runner import calibration, cost_model
from dpbench.runner.cost_model import FIGURE, FIRST_STUDY, PER_TASK, PER_TRIAL, WORKER_START, longest_first, makespan
from dpbench.runner.grid import RunSpec, Unit
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
    """A sweep's tasks in the runner's order with their estimates (module docstring): its chunks, and its
    studies (one run each, by study key) with their trials and the share of them still to run (a study's
    estimate is of that share).  A dry run's also: its wall time by part (`parts`, seconds; None when no dataset
    of the grid loads here), CPU seconds by algorithm and its longest task."""

    calibrated: bool  # the estimates are seconds (else the size measure)
    workers: int
    chunks: list[Unit]
    chunk_estimates: list[float]
    studies: dict[str, RunSpec]
    study_estimates: dict[str, float]
    trials: dict[str, int]
    trials_left: dict[str, float]
    parts: dict[str, float] | None = None
    cpu: dict[str, float] = dataclasses.field(default_factory=dict)
    longest: tuple[float, str] = (0.0, "")
    calibrated_on: str = ""

    def chunk_work(self) -> list[float]:
        """Each chunk's work on the progress bar: its seconds when calibrated, else its runs."""
        return [e if self.calibrated else len(c.runs) for c, e in zip(self.chunks, self.chunk_estimates, strict=True)]

    def study_work(self) -> dict[str, float]:
        """Each study's whole work on the tuning bar: seconds from its estimate of what is left when calibrated,
        else its trials."""
        return {k: e / self.trials_left[k] if self.calibrated and self.trials_left[k] > 0 else self.trials[k]
                for k, e in self.study_estimates.items()}

    def note(self, experiment: str, task: Unit | RunSpec, seconds: float) -> str | None:
        """The line a task (a chunk, or a study's run) estimated at `seconds` prints as it starts: calibrated and
        longer than LONG_SECONDS only."""
        if not self.calibrated:
            return None
        return announcement(experiment, chunk_label(task) if isinstance(task, Unit) else study_label(task), seconds)

    @property
    def eta_workers(self) -> int:
        """The workers a progress bar shares the calibrated work among for its time left (0: uncalibrated)."""
        return self.workers if self.calibrated else 0

    @property
    def seconds(self) -> float:
        return sum((self.parts or {}).values())

    def describe(self) -> str:
        if self.parts is None:
            return "time estimate: no dataset of the grid loads here"
        parts = ", ".join(f"{k} {_duration(v)}" for k, v in self.parts.items() if v >= 0.5)
        cpu = ", ".join(f"{a} {_duration(t)}" for a, t in sorted(self.cpu.items(), key=lambda kv: -kv[1]) if t >= 0.5)
        longest = (f"; the longest task ~{_duration(self.longest[0])} ({self.longest[1]})"
                   if self.longest[0] > LONG_SECONDS else "")
        return (f"time estimate: ~{_duration(self.seconds)} on {self.workers} worker(s) ({parts}); CPU time: "
                f"{cpu or '< 1 s'}{longest}; calibrated on {self.calibrated_on} (within ~2x when the machine's load "
                f"stays as it is now)")


def estimate(runs: Sequence[RunSpec], chunks: list[Unit], runner, data_dir, studies_dir=None,
             startup: float | None = None, timer: calibration.Timer | None = None,
             share: float | None = None, done_studies: Mapping[str, int] | None = None) -> Estimate:
    """The estimate of sweeping `runs` (the runs still to do) cut into `chunks`, with `runner`
    (dpbench.config.RunnerConfig); `studies_dir`: the studies' journals (their finished trials are not counted);
    `done_studies`: study key -> trials an earlier sweep will have finished by then (`reproduce` plans Figs 1-5,
    which share their BoostedAdaSSP studies, before any runs: a study's trials are counted in the first part that
    runs them; a later part asking for more trials of it counts the rest).
    A sweep calibrates only when calibration.worth_calibrating, and a calibration that fails leaves it the size
    measure (an estimate orders and announces tasks; it never stops a sweep).  A dry run (`startup`: seconds
    the command took to start; the fixed costs are proportional to it) always calibrates and simulates the
    sweep's order on its workers (`parts`).  `timer`: calibration.calibrate's; `share`: CPU seconds per second a
    process gets (default: measured; a worker's by calibration.workers_share)."""
    dry, calibrates = startup is not None, calibration.worth_calibrating(runs, runner)
    costs = None
    if calibrates or dry:
        try:
            costs = calibration.calibrate(runs, data_dir, runner.blas_threads, timer, share)
        except Exception:  # noqa: BLE001 - see the docstring
            if dry:
                raise
    seconds, startup, n_workers = calibrates and costs is not None, startup or 0.0, cost_model.workers(runner)
    per_worker = (share or calibration.workers_share(runner, costs.share)) if costs else 1.0
    slower = max(1.0, costs.share / per_worker) if costs else 1.0  # a worker vs this process (start-up: timed alone)
    parts_of = {id(c): costs.chunk_parts(c) for c in chunks} if costs else {}
    chunk_seconds = {i: sum(p.values()) / per_worker + PER_TASK * startup * slower for i, p in parts_of.items()}

    def here(task: Unit | RunSpec, left: float = 1.0) -> float:  # the size measure, 0 for data missing here
        return left * cost_model.size(task) if cost_model.loads_here(task, data_dir) else 0.0

    chunk_estimates = {id(c): chunk_seconds[id(c)] if seconds else here(c) for c in chunks}
    ordered = longest_first(chunks, lambda c: c.runs[0].unit_key, lambda c: chunk_estimates[id(c)])
    studies: dict[str, RunSpec] = {}
    for c in ordered:
        for r in c.runs:
            if r.tuning_mode == "tuned":
                studies.setdefault(study_key(r), r)
    keys = sorted(studies, key=lambda k: studies[k].unit_key)  # a worker's consecutive studies share its data
    trials = {k: tuning.study_trials(algorithms.get_spec(studies[k].algorithm), studies[k].tuning) for k in keys}
    done = done_studies or {}
    left = {k: min(cost_model.trials_left(studies[k], studies_dir), max(0, trials[k] - done.get(k, 0)) / trials[k])
            if trials[k] else 0.0 for k in keys}
    cpu: dict[str, float] = defaultdict(float)
    study_seconds = {}
    for k in keys if costs else ():
        fits, n_trials = costs.study(studies[k], left[k], cost_model.rounds_scale(studies[k], studies_dir))
        study_seconds[k] = fits / per_worker + (n_trials * left[k] * PER_TRIAL + PER_TASK) * startup * slower
        cpu[studies[k].algorithm] += fits
    for p in parts_of.values():
        for name, s in p.items():
            cpu[name] += s
    study_estimates = {k: study_seconds[k] if seconds else here(studies[k], left[k]) for k in keys}
    keys = longest_first(keys, lambda k: studies[k].unit_key, study_estimates.get)
    found = Estimate(seconds, n_workers, ordered, [chunk_estimates[id(c)] for c in ordered],
                     {k: studies[k] for k in keys}, {k: study_estimates[k] for k in keys}, trials, left)
    if dry and costs is not None:
        processes = n_workers > 1 and runner.backend != "threading"  # worker processes start and import dpbench
        tune = [study_seconds[k] for k in keys]
        for i in range(min(n_workers if processes else 1, len(tune))):  # a process's first study imports Optuna
            tune[i] += FIRST_STUDY * startup * slower
        labels = [(study_seconds[k], study_label(studies[k])) for k in keys]
        labels += [(chunk_seconds[id(c)], chunk_label(c)) for c in ordered]
        probe = calibration.PROBE_SECONDS if n_workers > 1 and share is None else 0.0  # the sweep measures its workers
        found.parts = {"start-up": startup, "calibration": costs.seconds + probe if calibrates else 0.0,
                       "workers' start-up": WORKER_START * startup * slower if processes else 0.0,
                       "tuning": makespan(tune, n_workers),
                       "fits": makespan([chunk_seconds[id(c)] for c in ordered], n_workers),
                       "figure": FIGURE * startup}
        found.cpu, found.longest, found.calibrated_on = dict(cpu), max(labels, default=(0.0, "")), costs.calibrated_on
    return found
