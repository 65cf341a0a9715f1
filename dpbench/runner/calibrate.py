"""A rough time estimate for `sweep --dry-run`: calibration fits of each setting, scaled by dataset size.

Each (algorithm, hyperparameters) setting of the grid is fitted on CALIBRATION_ROWS (two sizes) rows of the
smallest dataset of the grid that loads, which gives it a fixed cost a (accounting, set-up) and a cost b per
row; a setting of more than CALIBRATION_ROUNDS rounds (`n_rounds`) is timed at that many and a and b scaled
by its rounds (which overstates the set-up of long runs).  A run on a dataset of n_train x d costs
a + b x n_train x d / d', a tuning trial one such fit per trial seed (at the setting's defaults: tuned values
change the cost), and the runner's n_jobs workers divide the total.  Batching and machine load change real
costs: an order of magnitude, and it says so.
"""

from __future__ import annotations

import time
from collections import defaultdict

import numpy as np

from dpbench import algorithms, tuning
from dpbench.data import MissingDataError, get_spec, load_dataset
from dpbench.runner.fitting import make_estimator
from dpbench.runner.grid import RunSpec, canonical_json

CALIBRATION_ROWS = (250, 1000)  # rows of the smallest dataset the two calibration fits of a setting see
CALIBRATION_ROUNDS = 20  # a setting with more rounds is timed at 20 and scaled (rounds cost alike)


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


def setting(run: RunSpec) -> tuple[str, str]:
    return run.algorithm, canonical_json(run.params)


def _fixed_and_per_row(run: RunSpec, data, order) -> tuple[float, float]:
    """(a, b) from fits on the first CALIBRATION_ROWS rows of `order`: seconds = a + b x rows."""

    seconds = []
    for rows in CALIBRATION_ROWS:
        est, part = make_estimator(run, data), order[:rows]
        start = time.perf_counter()
        try:
            est.fit(data.X_train[part], data.y_train[part])
        except Exception:  # noqa: BLE001 - an estimate, not a check
            pass
        seconds.append(time.perf_counter() - start)
    (n0, n1), (t0, t1) = (min(len(order), n) for n in CALIBRATION_ROWS), seconds
    per_row = max(0.0, (t1 - t0) / (n1 - n0)) if n1 > n0 else t1 / max(1, n1)
    return max(0.0, t1 - per_row * n1), per_row


def _calibration_data(runs: list[RunSpec], data_dir):
    """The smallest dataset of the grid that loads here (None if none does)."""
    sizes = {r.unit_key: (rows_times_columns(r.dataset) or float("inf"), r) for r in runs}
    for _size, run in sorted(sizes.values(), key=lambda t: t[0]):
        try:
            return run, load_dataset(run.dataset, split_seed=run.data_seed, data_dir=data_dir, split=run.split)
        except (MissingDataError, OSError, ValueError):
            continue
    return None


def _calibrate(runs: list[RunSpec], data_dir) -> tuple[dict, int] | None:
    """{setting: (a, b)}: seconds of a fit = a + b x rows (rows of the calibration set, d of its columns)."""
    found = _calibration_data(runs, data_dir)
    if found is None:
        return None
    unit, data = found
    order = np.random.default_rng(0).permutation(data.n_train)
    timed, costs = {}, {}

    def cost(r: RunSpec, rounds: int | None = None) -> tuple[float, float]:
        params = r.params if rounds is None else {**r.params, "n_rounds": rounds}
        key = (r.algorithm, canonical_json(params))
        if key not in timed:
            fixed = RunSpec(r.algorithm, params, unit.dataset, r.epsilon, r.delta, "fixed", 0, unit.split)
            timed[key] = _fixed_and_per_row(fixed, data, order)
        return timed[key]

    for r in {setting(r): r for r in runs}.values():
        rounds = r.params.get("n_rounds")
        if isinstance(rounds, int) and rounds > CALIBRATION_ROUNDS:  # timed at fewer rounds, scaled
            costs[setting(r)] = tuple(c * rounds / CALIBRATION_ROUNDS for c in cost(r, CALIBRATION_ROUNDS))
        else:
            costs[setting(r)] = cost(r)
    return costs, data.d


def estimate(runs: list[RunSpec], studies, data_dir, n_jobs: int) -> str:
    cal = _calibrate(list(runs), data_dir)
    if cal is None:
        return "time estimate: no dataset of the grid loads here"
    costs, d = cal
    total = defaultdict(float)

    def fit_seconds(r: RunSpec, size: float) -> float:
        fixed, per_row = costs[setting(r)]
        return fixed + per_row * size / d

    for r in runs:
        size = rows_times_columns(r.dataset)
        if size is not None:
            total[r.algorithm] += fit_seconds(r, size)
    for s in studies:
        size = rows_times_columns(s.dataset)
        if size is not None:
            trials = tuning.study_trials(algorithms.get_spec(s.algorithm), s.tuning)
            total[s.algorithm] += fit_seconds(s, size) * trials * s.tuning["seeds"]
    per_alg = ", ".join(f"{a} {t / 60:.1f}" for a, t in sorted(total.items(), key=lambda kv: -kv[1]))
    return (f"time estimate (rough: two calibration fits per setting, scaled by n x d; one fit per trial seed): "
            f"{sum(total.values()) / 60 / max(1, n_jobs):.0f} min on {n_jobs} worker(s); "
            f"CPU minutes per algorithm: {per_alg}")
