"""A rough time estimate for `sweep --dry-run`: one calibration fit per algorithm, scaled by dataset size.

Each algorithm is fitted once, in the grid's first setting, on at most CALIBRATION_ROWS rows of the
smallest dataset of the grid that loads; a run on another dataset is assumed to cost that time x
(n_train x d) / (rows x d'), a tuning trial one such fit per trial seed, and the runner's n_jobs workers to
divide the total.  Rounds, clip
bounds and batching change real costs, so the estimate is an order of magnitude, and says so.
"""

from __future__ import annotations

import time
from collections import defaultdict

import numpy as np

from dpbench import algorithms, tuning
from dpbench.data import MissingDataError, get_spec, load_dataset
from dpbench.runner.grid import RunSpec

CALIBRATION_ROWS = 2000  # rows of the smallest dataset each calibration fit sees (the estimate scales by n x d)


def rows_times_columns(dataset: dict) -> float | None:
    """n_train x d from the registry (a generator's options and defaults, a real set's reported n and d)."""
    spec = get_spec(dataset["name"])
    if spec.generated:
        options = {**spec.source.options(), **dataset}
        return float(options.get("n_train", 0) * options.get("d", 1)) or None
    paper = spec.paper
    if "d" not in paper:
        return None
    if "train" in paper:  # the classification sets report their training rows
        return float(paper["train"] * paper["d"])
    return 0.8 * paper["n"] * paper["d"] if "n" in paper else None


def _calibrate(runs: list[RunSpec], data_dir) -> tuple[dict, float] | None:
    from dpbench.runner.execute import make_estimator

    sizes = {r.unit_key: (rows_times_columns(r.dataset) or float("inf"), r) for r in runs}
    for _size, run in sorted(sizes.values(), key=lambda t: t[0]):
        try:
            data = load_dataset(run.dataset, split_seed=run.data_seed, data_dir=data_dir, split=run.split)
        except (MissingDataError, OSError, ValueError):
            continue
        rows = np.random.default_rng(0).permutation(data.n_train)[:CALIBRATION_ROWS]
        X, y = data.X_train[rows], data.y_train[rows]
        seconds = {}
        for r in {r.algorithm: r for r in runs}.values():
            fixed = RunSpec(r.algorithm, r.params, run.dataset, r.epsilon, r.delta, "fixed", 0, run.split)
            est = make_estimator(fixed, data)
            start = time.perf_counter()
            try:
                est.fit(X, y)
            except Exception:  # noqa: BLE001 - an estimate, not a check
                pass
            seconds[r.algorithm] = time.perf_counter() - start
        return seconds, len(rows) * data.d
    return None


def estimate(runs: list[RunSpec], studies, data_dir, n_jobs: int = 1) -> str:
    cal = _calibrate(list(runs), data_dir)
    if cal is None:
        return "time estimate: no dataset of the grid loads here"
    seconds, base = cal
    total = defaultdict(float)
    for r in runs:
        size = rows_times_columns(r.dataset)
        if size is not None:
            total[r.algorithm] += seconds[r.algorithm] * size / base
    for s in studies:
        size = rows_times_columns(s.dataset)
        if size is not None:
            trials = tuning.study_trials(algorithms.get_spec(s.algorithm), s.tuning)
            total[s.algorithm] += seconds[s.algorithm] * size / base * trials * s.tuning["seeds"]
    per_alg = ", ".join(f"{a} {t / 60:.1f}" for a, t in sorted(total.items(), key=lambda kv: -kv[1]))
    return (f"time estimate (rough: calibration fits scaled by n x d, one fit per trial seed): "
            f"{sum(total.values()) / 60 / max(1, n_jobs):.0f} min on {n_jobs} worker(s); "
            f"CPU minutes per algorithm: {per_alg}")
