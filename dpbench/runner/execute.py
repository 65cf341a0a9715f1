"""Execute a sweep with joblib: one task per unit (dataset split), parts written as runs finish."""

from __future__ import annotations

import contextlib
import json
import platform
import subprocess
import time
import traceback
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import joblib
import numpy as np
import scipy
import sklearn
from tqdm.auto import tqdm

import dpbench
from dpbench import algorithms, results
from dpbench.data import MissingDataError, dataset_label, load_dataset
from dpbench.runner.grid import RunSpec, Unit, canonical_json, expand, group_units, stable_hash
from dpbench.runner.metrics import evaluate


@dataclass(frozen=True)
class Provenance:
    experiment: str
    config_hash: str
    git_commit: str
    data_dir: str | None

    def columns(self) -> dict:
        return {
            "experiment": self.experiment,
            "config_hash": self.config_hash,
            "git_commit": self.git_commit,
            "dpbench_version": dpbench.__version__,
            "numpy_version": np.__version__,
            "scipy_version": scipy.__version__,
            "sklearn_version": sklearn.__version__,
            "python_version": platform.python_version(),
        }


def git_commit() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=Path(__file__).resolve().parent, capture_output=True, text=True, timeout=5
        )
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def _base_row(run: RunSpec, prov: Provenance) -> dict:
    return {
        "run_id": run.run_id,
        "algorithm": run.algorithm,
        "params": canonical_json(dict(run.params)),
        "private": algorithms.get_spec(run.algorithm).private,
        "dataset": dataset_label(run.dataset),
        "epsilon": run.epsilon,
        "delta": run.delta,
        "tuning_mode": run.tuning_mode,
        "seed": run.seed,
        "split": run.split,
        "data_seed": run.data_seed,
        "random_state": run.random_state,
        **prov.columns(),
    }


def fit_one(run: RunSpec, data) -> dict:
    """Fit and evaluate one run on a loaded dataset; a failure is a row with its status, not an exception."""
    spec = algorithms.get_spec(run.algorithm)
    params = dict(run.params)
    if spec.private:
        params.update(epsilon=run.epsilon, delta=run.delta)
    if "feature_types" in spec.estimator().get_params() and params.get("feature_types") is None:
        params["feature_types"] = list(data.feature_types)
    row = {"task": data.task, "n_train": data.n_train, "n_test": data.n_test, "d": data.d}
    try:
        est = algorithms.make(run.algorithm, random_state=run.random_state, **params)
        start = time.perf_counter()
        est.fit(data.X_train, data.y_train)
        row["fit_seconds"] = time.perf_counter() - start
        row.update(evaluate(est, data))
        row["status"] = getattr(est, "fit_status_", "ok")
        ledger = est.privacy_ledger_
        row["ledger_entries"] = len(ledger)
        if spec.private:
            row["spent_epsilon"], row["spent_delta"] = ledger.epsilon_delta(run.delta)
    except Exception as exc:  # noqa: BLE001 - a failed run is a result
        row["status"] = "error"
        row["error"] = f"{type(exc).__name__}: {exc}"[:2000]
    return row


def run_unit(unit: Unit, sweep_dir: str, prov: Provenance, part_size: int) -> int:
    """Load the unit's data once, fit its runs, write a part every `part_size` runs.  Returns runs done."""
    stem = stable_hash(unit.runs[0].unit_key + unit.runs[0].run_id, 12)
    try:
        data = load_dataset(unit.dataset, split_seed=unit.data_seed, data_dir=prov.data_dir, split=unit.split)
    except MissingDataError as exc:
        rows = [{**_base_row(r, prov), "status": "missing_data", "error": str(exc)} for r in unit.runs]
        results.write_part(rows, sweep_dir, f"{stem}-missing")
        return len(unit.runs)
    except Exception as exc:  # noqa: BLE001
        err = f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=3)}"[:2000]
        rows = [{**_base_row(r, prov), "status": "data_error", "error": err} for r in unit.runs]
        results.write_part(rows, sweep_dir, f"{stem}-data-error")
        return len(unit.runs)
    rows: list[dict] = []
    for i, run in enumerate(unit.runs):
        rows.append({**_base_row(run, prov), **fit_one(run, data)})
        if len(rows) >= part_size or i == len(unit.runs) - 1:
            results.write_part(rows, sweep_dir, f"{stem}-{rows[0]['run_id']}")
            rows = []
    return len(unit.runs)


@contextlib.contextmanager
def _backend(runner: Mapping):
    backend = runner.get("backend", "loky")
    if backend == "dask":
        try:
            from dask.distributed import Client, LocalCluster
        except ImportError as exc:
            raise ValueError("runner.backend=dask needs dask[distributed]: pip install 'dpbench[dask]'") from exc
        address = runner.get("address")
        cluster = None if address else LocalCluster(n_workers=int(runner.get("n_jobs", 2)), threads_per_worker=1)
        with Client(address or cluster) as client, joblib.parallel_config(backend="dask"):
            yield client
        if cluster is not None:
            cluster.close()
    elif backend in ("loky", "multiprocessing", "threading", "sequential"):
        with joblib.parallel_config(backend=backend, n_jobs=int(runner.get("n_jobs", 1))):
            yield None
    else:
        known = "loky, multiprocessing, threading, sequential, dask"
        raise ValueError(f"runner.backend must be one of {known}; got {backend!r}")


def run_sweep(exp: Mapping, runner: Mapping, sweep_dir: str | Path, data_dir: str | None = None) -> dict:
    """Run every not-yet-finished run of an experiment; returns counts.  Safe to interrupt and re-run."""
    sweep_dir = Path(sweep_dir)
    runs = expand(exp)
    prov = Provenance(exp.get("name", "sweep"), stable_hash(exp), git_commit(), data_dir)
    sweep_dir.mkdir(parents=True, exist_ok=True)
    results.remove_stale_temporaries(sweep_dir)
    done = results.finished_run_ids(sweep_dir)
    todo = [r for r in runs if r.run_id not in done]
    units = group_units(todo)
    (sweep_dir / "config.json").write_text(json.dumps(exp, indent=2, default=str))
    part_size = int(runner.get("part_size", 32))
    progress = bool(runner.get("progress", True))
    with _backend(runner), tqdm(total=len(todo), desc=prov.experiment, unit="run", disable=not progress) as bar:
        tasks = (joblib.delayed(run_unit)(u, str(sweep_dir), prov, part_size) for u in units)
        for n in joblib.Parallel(return_as="generator_unordered")(tasks):
            bar.update(n)
    return {"runs": len(runs), "skipped": len(runs) - len(todo), "ran": len(todo), "units": len(units)}

