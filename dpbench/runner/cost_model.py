"""The cost model behind a sweep's time estimate (runner.estimate): a task's size from the config alone, the CPU
seconds of a batch group from a setting's calibrated c0..c5 (runner.calibration measures them), and the
runner's order simulated on its workers.  A module of its own because it says what an estimate means; a reader
following a sweep from its config to the fits can skip it.

The size measure (`size`): training rows x columns x rounds of every run of a chunk, and x trials x seeds of
every study, from the config alone (nothing loaded or fitted).  Without calibration the runner orders its tasks
by it.

A batch group (runs of one unit fitted together by `fit_batch`, or a run alone) of k runs of r_1..r_k rounds
(r = 1 without `n_rounds`) on n rows x d columns costs, in CPU seconds, with q = d / d0:

    c0 + sqrt(q) (c1 k + c2 sum r) + n q (c3 + c4 max r + c5 sum r)

c0: the group's fixed cost; c1, c2: each run's set-up and per-round work (accounting, noise, solves: from
Python overheads flat in d to d^3, hence sqrt(q)); c3: statistics shared by the group (features, X^T X); c4: a
pass over the rows per round, shared by the runs still going; c5: each run's per-round products.  A tuned run
costs its range's mean rounds (the range its study searches on its dataset: DP-EBM's capped by the features; a
privately selected run's candidates are drawn from the same range, and its calibration pins them to its rounds), a
study's batch of trials the expected order statistics of their rounds.  A study with finished trials in its
journal costs its data load and its trials still to run (`trials_left`).

The schedule: CPU seconds become wall seconds by the share of a CPU a worker gets; fixed costs are
proportional to the command's measured start-up (imports and config): the sweep's own start, its workers'
(fresh processes importing dpbench), each worker's first study (Optuna), a study's per-trial bookkeeping
(sampler, journal) and the figure.  The runner's order (`longest_first`) is simulated on its workers
(`makespan`): studies first, then the chunks.  The threading backend's workers are threads of the sweep's
process: as processes, without the workers' start-up.  Not modelled: fits that end early on a failed release
(DP-AMBSSGD's empty threshold histogram), TPE's preference for some rounds over others, caches beyond the
calibration size, solves that grow as d^3 far beyond d0 (paper 000's d = 735 task), TukeyEM's cost per row at
n ~ n_models, and the GIL under the threading backend (fits that spend their time in Python, not in numpy,
share one core there and take longer than estimated).
"""

from __future__ import annotations

import dataclasses
import functools
import heapq
import json
import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from dpbench import algorithms, tuning
from dpbench.data import get_spec
from dpbench.data.catalog import availability
from dpbench.runner.grid import RunSpec, Unit, canonical_json
from dpbench.tuning.spaces import bounded_space
from dpbench.tuning.study import chosen_rounds, finished_trials

# fixed costs, per second of the command's start-up (measured on the 2-core build machine)
WORKER_START, FIRST_STUDY, PER_TRIAL, PER_TASK, FIGURE = 0.65, 0.05, 0.004, 0.005, 0.9
LOAD_PER_CELL = 6e-8  # CPU seconds to load (read and encode, or draw) one number of a unit's data (build machine)


def workers(runner) -> int:
    """The processes a sweep with `runner` (dpbench.config.RunnerConfig) runs its tasks in at once."""
    return runner.n_jobs if runner.backend != "sequential" and runner.n_jobs > 1 else 1


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


def available(dataset: dict, data_dir) -> bool:
    """Whether a dataset is available here (mirror, OpenML cache or generated)."""
    return availability(dataset["name"], Path(data_dir).expanduser() if data_dir else None)[0] != "missing"


def loads_here(task: Unit | RunSpec, data_dir) -> bool:
    """Whether a chunk's (or a study's run's) dataset is available."""
    return available((task.runs[0] if isinstance(task, Unit) else task).dataset, data_dir)


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


def searched_rounds(run: RunSpec) -> dict | None:
    """The n_rounds range a tuned run's study searches, or a privately selected run's candidates are drawn from
    (int, not pinned; DP-EBM's capped by its dataset's features, as both do: tuning.spaces.bounded_space), else
    None."""
    if run.tuning_mode not in ("tuned", "private_selection"):
        return None
    space, shape = tuning.search_space(algorithms.get_spec(run.algorithm), run.tuning), unit_shape(run.dataset)
    rounds = (bounded_space(run.algorithm, space, shape[1]) if shape else space).get("n_rounds", {})
    return rounds if rounds.get("type") == "int" else None


def run_rounds(run: RunSpec) -> float:
    """A run's rounds: its own (1 without n_rounds), or a tuned or privately selected run's expected (its range's
    mean: a selection's K candidates cost K fits of that many rounds)."""
    space = searched_rounds(run)
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


def rounds_scale(run: RunSpec, studies_dir) -> float:
    """What a resumed study's trials left cost in rounds, over its range's mean: the mean rounds of its finished
    trials that TPE chose (`tuning.study.chosen_rounds`), 1 until one has finished.  TPE moves where the
    validation score is best: over the studies of the reference results and the leaderboards, the mean rounds of
    50 trials was 0.34x (DP-XGBoost) to 3.1x (the DP-EBM classifier) the range's mean, the median per algorithm,
    so a study is estimated from its range until its own trials show the way."""
    space = searched_rounds(run) if run.tuning_mode == "tuned" and studies_dir is not None else None
    chosen = chosen_rounds(studies_dir, run) if space else []
    return float(np.mean(chosen)) / expected_rounds(space, 1)[0] if chosen else 1.0


def setting_key(run: RunSpec) -> str:
    """What a run's costs depend on besides its data and rounds: its algorithm, other parameters and tuning."""
    params = {k: v for k, v in run.params.items() if k != "n_rounds"}
    return canonical_json([run.algorithm, params, run.tuning_mode == "tuned" and dict(run.tuning),
                           run.tuning_mode == "private_selection" and dict(run.tuning)])


class Setting:
    """An (algorithm, parameters, tuned or not) (`setting_key`), how its runs batch (their rounds and groups),
    and its cost model once calibrated."""

    def __init__(self, run: RunSpec):
        self.algorithm, self.run, self.model = run.algorithm, run, None
        tuned = run.tuning_mode == "tuned"
        self.space = tuning.search_space(algorithms.get_spec(run.algorithm), run.tuning) if tuned else {}
        self.has_rounds = "n_rounds" in run.params
        self.key, other = (self.estimator(1, 0, r).batch_key() for r in (1, 2))
        self.key_has_rounds = self.key != other  # DP-GD batches only runs of equal rounds

    def params(self, runs: int, i: int, rounds: int) -> dict:
        """Run i of `runs`: a tuned setting's (i + 1/2) / runs quantile of its space, at `rounds` rounds."""
        params = {**self.run.params, **{n: _quantile(s, (i + 0.5) / runs) for n, s in self.space.items()}}
        return {**params, "n_rounds": rounds} if self.has_rounds else params

    def estimator(self, runs: int, i: int, rounds: int):
        return algorithms.make(self.algorithm, **self.params(runs, i, rounds))

    def group(self, rounds: float):
        """The key of the batch group a run of these rounds joins (None: fitted alone)."""
        if self.key is None:
            return None
        return (self.key, rounds) if self.key_has_rounds else self.key


@dataclasses.dataclass
class Costs:
    """Calibrated settings of a grid (runner.calibration.calibrate) and the estimates of its tasks, in CPU
    seconds (wall seconds: divided by the share of a CPU the process that runs them gets)."""

    settings: dict[str, Setting]
    d0: int
    calibrated_on: str
    seconds: float  # what calibrating took
    share: float  # CPU seconds per second this process got while calibrating (< 1 on a busy machine)
    data_dir: str | None = None

    def _shape(self, dataset: dict):
        return unit_shape(dataset) if available(dataset, self.data_dir) else None

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

    def study(self, run: RunSpec, left: float = 1.0, scale: float = 1.0) -> tuple[float, int]:
        """(a study's data load, and the fits and validation scores of its `left` share of trials still to run,
        their rounds `scale` times its range's (`rounds_scale`); its trials)."""
        shape, s = self._shape(run.dataset), self.settings[setting_key(run)]
        trials = tuning.study_trials(algorithms.get_spec(run.algorithm), run.tuning)
        if shape is None:
            return 0.0, 0
        n, d = shape
        n_fit = n * (1 - run.tuning["validation_fraction"])
        batch, seeds = run.tuning["batch_trials"], run.tuning["seeds"]
        fits = 0.0
        batches = [batch] * (trials // batch) + ([trials % batch] if trials % batch else [])
        space = searched_rounds(run)
        for count in batches:
            rounds = ([min(space["high"], scale * r) for r in expected_rounds(space, count)] if space
                      else [run_rounds(run)] * count)
            groups: dict = defaultdict(list)  # the batch's fits grouped as `batch_groups` does
            for i, r in enumerate(rounds):
                for j in range(seeds):
                    key = s.group(r)
                    groups[("alone", i, j) if key is None else key].append(r)
            fits += sum(s.model.seconds(n_fit, d, g) for g in groups.values())
        return LOAD_PER_CELL * n * d * 1.25 + left * fits, trials


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
