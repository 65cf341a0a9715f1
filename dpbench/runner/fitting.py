"""Fitting runs on a loaded unit: a run's estimator, batch groups fitted together by `fit_batch`, and the
columns of a fit's row.  Used by the sweep's workers and by the tuning studies' trials."""

from __future__ import annotations

import time

from dpbench import algorithms, tuning
from dpbench.algorithms.base import released_zero_model
from dpbench.runner.grid import RunSpec, canonical_json
from dpbench.runner.scoring import evaluate, evaluate_many
from dpbench.tuning.spaces import bounded_space


def make_estimator(run: RunSpec, data):
    """The run's estimator: its hyperparameters (a tuned run's: the study's choice), budget and seed, and the
    dataset's schema where it takes one; a private_selection run: the selection over the algorithm."""
    spec = algorithms.get_spec(run.algorithm)
    if run.tuning_mode == "tuned" and not (run.tuned and run.tuned["params"]):
        raise ValueError(f"tuning failed: {(run.tuned or {}).get('error') or 'the study did not finish'}")
    params = {**run.params, **(run.tuned["params"] if run.tuned else {})}
    if "feature_types" in spec.estimator().get_params() and params.get("feature_types") is None:
        params["feature_types"] = list(data.feature_types)
    if run.tuning_mode == "private_selection":
        selector = "private_selection" if spec.task == "regression" else "private_selection_clf"
        base = {k: v for k, v in params.items() if k != "classes"}  # the label set is the selection's own
        spec, params = algorithms.get_spec(selector), {
            "algorithm": run.algorithm, "base_params": base, "n_candidates": run.tuning["n_candidates"],
            "validation_fraction": run.tuning["validation_fraction"],
            # DP-EBM's rounds capped by the (public) number of features, as its studies' (tuning.spaces)
            "space": bounded_space(spec.name, tuning.search_space(spec, run.tuning), data.X_train.shape[1]),
            **({"classes": params["classes"]} if "classes" in params else {})}
    if spec.private:
        params.update(epsilon=run.epsilon, delta=run.delta)
    return algorithms.make(spec.name, random_state=run.random_state, **params)


def _row(run: RunSpec, data, est, seconds: float, batch_runs: int, metrics: dict) -> dict:
    row = {"task": data.task, "n_train": data.n_train, "n_test": data.n_test, "d": data.d, "fit_seconds": seconds,
           "batch_runs": batch_runs, **metrics, "status": getattr(est, "fit_status_", "ok"),
           "zero_model": released_zero_model(est)}
    row["ledger_entries"] = len(est.privacy_ledger_)
    if hasattr(est, "chosen_params_"):  # a private selection's choice, released with (part of) the model
        row["tuned_params"] = canonical_json(est.chosen_params_)
    if algorithms.get_spec(run.algorithm).private:
        row["spent_epsilon"], row["spent_delta"] = est.privacy_ledger_.epsilon_delta(run.delta)
    return row


def _error_row(data, exc: Exception) -> dict:
    return {"task": data.task, "n_train": data.n_train, "n_test": data.n_test, "d": data.d, "status": "error",
            "error": f"{type(exc).__name__}: {exc}"[:2000]}


def fit_one(run: RunSpec, data) -> dict:
    """Fit and evaluate one run on a loaded dataset; a failure is a row with its status, not an exception."""
    try:
        est = make_estimator(run, data)
        start = time.perf_counter()
        est.fit(data.X_train, data.y_train)
        seconds = time.perf_counter() - start
        return _row(run, data, est, seconds, 1, evaluate(est, data))
    except Exception as exc:  # noqa: BLE001 - a failed run is a result
        return _error_row(data, exc)


def batch_groups(estimators: list) -> list[list[int]]:
    """Indices of estimators fitted together: one algorithm's estimators with equal `batch_key()` (None: alone)."""
    groups: dict = {}
    for i, est in enumerate(estimators):
        key = est.batch_key()
        groups.setdefault((type(est), ("alone", i) if key is None else key), []).append(i)
    return list(groups.values())


def fit_group(estimators: list, X, y, shared) -> float:
    """Fit estimators of one batch group with their class's `fit_batch`; returns seconds per estimator."""
    start = time.perf_counter()
    type(estimators[0]).fit_batch(estimators, X, y, shared)
    return (time.perf_counter() - start) / len(estimators)


def fit_runs(runs: list[RunSpec], data, shared) -> list[dict]:
    """Rows of runs on one loaded unit, in order.  Runs of one algorithm whose estimators share a batch key
    are fitted together by the algorithm's `fit_batch` (shared statistics, matrix-matrix products; each run
    equal to its single fit) and evaluated together (cached features, one product per feature map); other runs
    form batches of one.  fit_seconds is the batch's time per run and `batch_runs` its size.  If a batch
    raises, its runs are fitted one by one so each error is its own."""
    rows: dict[int, dict] = {}
    made: list[tuple[int, object]] = []
    for i, run in enumerate(runs):
        try:
            made.append((i, make_estimator(run, data)))
        except Exception as exc:  # noqa: BLE001
            rows[i] = _error_row(data, exc)
    for group in batch_groups([e for _, e in made]):
        members = [made[j] for j in group]
        ests = [e for _, e in members]
        try:
            seconds = fit_group(ests, data.X_train, data.y_train, shared[0])
            metrics = evaluate_many(ests, data, *shared)
        except Exception:  # noqa: BLE001 - attribute the failure to the runs that cause it
            for i, _ in members:
                rows[i] = fit_one(runs[i], data)
            continue
        for (i, est), m in zip(members, metrics, strict=True):
            rows[i] = _row(runs[i], data, est, seconds, len(ests), m)
    return [rows[i] for i in range(len(runs))]
