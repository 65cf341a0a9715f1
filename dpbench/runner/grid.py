"""Grid expansion: an experiment config -> run specs grouped into units of work.

A run is one (algorithm, params, dataset, epsilon, delta, tuning_mode, seed).
A unit is one (dataset, data seed): the runner loads and preprocesses it once
and fits all of that unit's runs on it.  Large units are cut into chunks (units
with fewer runs) so that workers stay balanced and progress is fine-grained.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from dpbench import algorithms, tuning
from dpbench.data import SPLIT_MODES, data_seed, dataset_task, expand_dataset_specs
from dpbench.tuning.spaces import tuning_space


def canonical_json(obj) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str)


def stable_hash(obj, n: int = 16) -> str:
    return hashlib.sha256(canonical_json(obj).encode()).hexdigest()[:n]


@dataclass(frozen=True)
class RunSpec:
    algorithm: str
    params: Mapping  # hyperparameters, epsilon/delta/random_state excluded
    dataset: Mapping  # dataset spec {'name': ..., **options}
    epsilon: float  # NaN for non-private algorithms
    delta: float
    tuning_mode: str
    seed: int
    split: str
    tuning: Mapping = field(default_factory=dict)  # tuned mode's settings (dpbench.tuning); {} when fixed
    tuned: Mapping | None = None  # after its study: {'params', 'validation_score', 'trials'} (not identity)

    @property
    def identity(self) -> dict:
        tuning = {"tuning": dict(self.tuning)} if self.tuning else {}  # fixed runs' ids are as before
        return {**tuning,
            "algorithm": self.algorithm,
            "params": dict(self.params),
            "dataset": dict(self.dataset),
            "epsilon": None if math.isnan(self.epsilon) else self.epsilon,
            "delta": None if math.isnan(self.delta) else self.delta,
            "tuning_mode": self.tuning_mode,
            "seed": self.seed,
            "split": self.split,
        }

    @property
    def run_id(self) -> str:
        return stable_hash(self.identity)

    @property
    def random_state(self) -> int:
        """The estimator's seed: a SeedSequence keyed by the run identity, so a row is reproducible alone."""
        entropy = int(hashlib.sha256(canonical_json(self.identity).encode()).hexdigest(), 16)
        return int(np.random.SeedSequence(entropy).generate_state(1, dtype=np.uint32)[0])

    @property
    def data_seed(self) -> int:
        """Seed of the data split: the authors' fixed split, or per seed (always per seed for generated data)."""
        return data_seed(self.dataset, self.seed, self.split)

    @property
    def unit_key(self) -> str:
        return stable_hash({"dataset": dict(self.dataset), "data_seed": self.data_seed, "split": self.split})


@dataclass
class Unit:
    """All runs sharing one loaded (dataset, data seed), or a chunk of them."""

    dataset: dict
    data_seed: int
    split: str
    runs: list[RunSpec] = field(default_factory=list)
    attempts: dict[str, int] = field(default_factory=dict)  # run_id -> attempt (1 if absent); > 1 when redone


def _algorithm_settings(entry) -> list[tuple[str, dict, list]]:
    """An experiment's algorithm entry -> (name, params, pinned) settings (cartesian product over `grid`);
    pinned: the tuning-space names the entry sets in `params` or `grid`, which tuning leaves as set."""
    if isinstance(entry, str):
        entry = {"name": entry}
    entry = dict(entry)
    unknown = sorted(set(entry) - {"name", "params", "grid", "modes"})
    if unknown or "name" not in entry:
        raise ValueError(f"an algorithm entry has keys name, params, grid, modes; got {sorted(entry)}")
    spec = algorithms.get_spec(entry["name"])
    base = dict(entry.get("params") or {})
    grid = dict(entry.get("grid") or {})
    pinned = sorted((set(base) | set(grid)) & set(tuning_space(spec.name)))
    settings = []
    for values in itertools.product(*grid.values()):
        params = {**base, **dict(zip(grid, values, strict=True))}
        est = algorithms.make(spec.name, **params)  # validates names (and values on fit)
        full = {k: v for k, v in est.get_params().items() if k not in ("epsilon", "delta", "random_state")}
        settings.append((spec.name, {k: (list(v) if isinstance(v, tuple) else v) for k, v in full.items()}, pinned))
    return settings


def _modes(entry, default: str, spec) -> list[str]:
    """The tuning modes of an algorithm entry: its `modes` list, else the experiment's tuning_mode."""
    modes = (entry.get("modes") if isinstance(entry, Mapping) else None) or [default]
    if isinstance(modes, str) or any(m not in tuning.MODES for m in modes):
        raise ValueError(f"algorithm {spec.name!r} modes must be a list of {', '.join(tuning.MODES)}; got {modes!r}")
    if set(modes) - {"fixed"} and not tuning_space(spec.name):
        raise ValueError(f"algorithm {spec.name!r} has no tuning space: it cannot run in tuned mode")
    if "private_selection" in modes and not spec.private:
        raise ValueError(f"algorithm {spec.name!r}: private_selection needs a private algorithm")
    return list(dict.fromkeys(modes))


def _check_numbers(name: str, values: Sequence, low: float, high: float) -> list[float]:
    out = []
    for v in values:
        if not isinstance(v, (int, float)) or not low < float(v) < high:
            raise ValueError(f"{name} must be numbers in ({low}, {high}), got {v!r}")
        out.append(float(v))
    if not out:
        raise ValueError(f"{name} is empty")
    return out


def expand(exp: Mapping) -> list[RunSpec]:
    """All run specs of an experiment config (validated; raises ValueError naming the problem)."""
    epsilons = _check_numbers("epsilons", exp["epsilons"], 0, math.inf)
    deltas = _check_numbers("deltas", exp["deltas"], 0, 1)
    seeds = list(exp["seeds"])
    if not seeds or any(not isinstance(s, int) or s < 0 for s in seeds):
        raise ValueError(f"seeds must be a non-empty list of integers >= 0, got {seeds!r}")
    split = exp.get("split", "fixed")
    if split not in SPLIT_MODES:
        raise ValueError(f"split must be one of {SPLIT_MODES}, got {split!r}")
    datasets = expand_dataset_specs(exp["datasets"])
    if not datasets:
        raise ValueError("the experiment lists no datasets")
    if not exp["algorithms"]:
        raise ValueError("the experiment lists no algorithms")
    tuning_settings = tuning.settings(exp.get("tuning"))
    runs = []
    for entry in exp["algorithms"]:
        for name, params, pinned in _algorithm_settings(entry):
            spec = algorithms.get_spec(name)
            privacy = list(itertools.product(epsilons, deltas)) if spec.private else [(math.nan, math.nan)]
            for mode in _modes(entry, exp.get("tuning_mode", "fixed"), spec):
                settings = {k: tuning_settings[k] for k in tuning.MODE_KEYS.get(mode, ())}
                if settings and pinned:  # only then, so other runs' identities are as before
                    if not set(tuning_space(spec.name)) - set(pinned):
                        raise ValueError(f"algorithm {name!r} sets every hyperparameter it could tune ({pinned}) "
                                         f"in params/grid: nothing left for mode {mode}")
                    settings["pinned"] = pinned
                for ds, (eps, dlt), seed in itertools.product(datasets, privacy, seeds):
                    if dataset_task(ds) == spec.task:
                        runs.append(RunSpec(name, params, ds, eps, dlt, mode, seed, split, settings))
    if not runs:
        raise ValueError("the experiment's algorithms and datasets have no task in common: nothing to run")
    return runs


def group_units(runs: Sequence[RunSpec], attempts: Mapping[str, int] | None = None) -> list[Unit]:
    units: dict[str, Unit] = {}
    for r in runs:
        u = units.setdefault(r.unit_key, Unit(dict(r.dataset), r.data_seed, r.split))
        u.runs.append(r)
        if attempts and r.run_id in attempts:
            u.attempts[r.run_id] = attempts[r.run_id]
    return list(units.values())



def even_cuts(n: int, size: int) -> list[slice]:
    """n items cut into n / size pieces, rounded (at least one when n > 0), of lengths differing by at most one
    (the longer first): about `size` each, at most 1.5 size, and no small remainder."""
    pieces = max(1, math.floor(n / size + 0.5)) if n else 0
    bounds = [-(-n * i // pieces) for i in range(pieces + 1)]
    return [slice(i, j) for i, j in itertools.pairwise(bounds)]


def chunk_units(units: Sequence[Unit], chunk_runs: int) -> list[Unit]:
    """Cut each unit into chunks of about `chunk_runs` runs (`even_cuts`; seeds are per run, so results do not
    change).  No small remainder: fig1_fixed's units of 36 runs were cut 32 + 4, and the two workers loaded each
    large unit's data at once for its two chunks (the sweep's fits 1.25-1.5x longer)."""
    if isinstance(chunk_runs, bool) or not isinstance(chunk_runs, int) or chunk_runs < 1:
        raise ValueError(f"runner.chunk_runs must be an integer >= 1, got {chunk_runs!r}")
    chunks = []
    for u in units:
        for cut in even_cuts(len(u.runs), chunk_runs):
            runs = u.runs[cut]
            attempts = {r.run_id: u.attempts[r.run_id] for r in runs if r.run_id in u.attempts}
            chunks.append(Unit(u.dataset, u.data_seed, u.split, runs, attempts))
    return chunks
