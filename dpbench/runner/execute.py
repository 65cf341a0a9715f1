"""Execute a sweep with joblib: one task per chunk of a unit's runs, parts written as runs finish.

Chunks (runner.chunk_runs) keep workers balanced and the progress bar moving;
a chunk loads its unit's data, cached per process so that a worker running
consecutive chunks of one unit loads it once.  Each task pins BLAS to
runner.blas_threads threads (processes x BLAS threads must not oversubscribe
the cores) and stops writing once its sweep is gone (runner.lock).  A re-run
skips finished runs and redoes harness failures (results.RETRIED_STATUSES).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
import subprocess
import time
import traceback
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

import joblib
import numpy as np
import scipy
import sklearn
from threadpoolctl import threadpool_limits
from tqdm.auto import tqdm

import dpbench
from dpbench import algorithms, results, tuning
from dpbench.algorithms.shared import SharedData
from dpbench.data import MissingDataError, dataset_label, load_dataset
from dpbench.runner import lock
from dpbench.runner.grid import RunSpec, Unit, canonical_json, chunk_units, expand, group_units, stable_hash
from dpbench.runner.metrics import evaluate, evaluate_many


@dataclass(frozen=True)
class GitState:
    """The commit of the package's checkout and whether its code differs from it (then rows cannot be
    reproduced from the commit alone; `diff_hash` names the uncommitted code)."""

    commit: str = "unknown"
    dirty: bool | None = None  # None: not a git checkout (an installed wheel)
    diff_hash: str = ""


@dataclass(frozen=True)
class Provenance:
    experiment: str
    config_hash: str
    git: GitState
    data_dir: str | None

    def columns(self) -> dict:
        return {
            "experiment": self.experiment,
            "config_hash": self.config_hash,
            "git_commit": self.git.commit,
            "git_dirty": self.git.dirty,
            "git_diff_hash": self.git.diff_hash,
            "dpbench_version": dpbench.__version__,
            "numpy_version": np.__version__,
            "scipy_version": scipy.__version__,
            "sklearn_version": sklearn.__version__,
            "python_version": platform.python_version(),
        }


def git_state(package: Path | None = None) -> GitState:
    """HEAD of the checkout dpbench runs from, and a hash of the package's uncommitted changes (the diff against
    HEAD and the untracked files under dpbench/, or under `package`), so rows made by uncommitted code say so."""
    package = Path(__file__).resolve().parent.parent if package is None else Path(package)

    def git(*args) -> subprocess.CompletedProcess:
        return subprocess.run(["git", *args], cwd=package, capture_output=True, timeout=10)

    try:
        head = git("rev-parse", "HEAD")
        if head.returncode:
            return GitState()
        diff = git("diff", "HEAD", "--", ".").stdout
        untracked = git("ls-files", "--others", "--exclude-standard", "--", ".").stdout.split()
    except (OSError, subprocess.SubprocessError):
        return GitState()
    digest = hashlib.sha256(diff)
    for name in sorted(untracked):
        digest.update(name + b"\0" + (package / name.decode()).read_bytes())
    dirty = bool(diff or untracked)
    return GitState(head.stdout.decode().strip(), dirty, digest.hexdigest()[:12] if dirty else "")


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
        **_tuning_columns(run),
        "seed": run.seed,
        "split": run.split,
        "data_seed": run.data_seed,
        "random_state": run.random_state,
        **prov.columns(),
    }


def _tuning_columns(run: RunSpec) -> dict:
    """Tuned runs: the study's choice (privately selected runs: see _row)."""
    if not run.tuned:
        return {}
    return {"tuned_params": canonical_json(run.tuned["params"]), "validation_score": run.tuned["validation_score"],
            "tuning_trials": run.tuned["trials"]}


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
        spec, params = algorithms.get_spec(selector), {
            "algorithm": run.algorithm, "base_params": params, "n_candidates": run.tuning["n_candidates"],
            "validation_fraction": run.tuning["validation_fraction"], "space": tuning.search_space(spec, run.tuning)}
    if spec.private:
        params.update(epsilon=run.epsilon, delta=run.delta)
    return algorithms.make(spec.name, random_state=run.random_state, **params)


def _row(run: RunSpec, data, est, seconds: float, batch_runs: int, metrics: dict) -> dict:
    row = {"task": data.task, "n_train": data.n_train, "n_test": data.n_test, "d": data.d, "fit_seconds": seconds,
           "batch_runs": batch_runs, **metrics, "status": getattr(est, "fit_status_", "ok")}
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


@dataclass(frozen=True)
class TaskContext:
    """What every chunk task needs besides its runs (sent to the workers)."""

    sweep_dir: str
    prov: Provenance
    part_size: int
    blas_threads: int | None
    owner: lock.Owner


_loaded: dict = {}  # this process's last loaded unit
_parent: dict[int, int] = {}  # pid -> its parent at its first task (for a worker the sweep started: the sweep)


def _sweep_gone(ctx: TaskContext) -> bool:
    """True once the sweep that sent this task is gone; an orphaned worker of that sweep then exits."""
    if ctx.owner.alive():
        return False
    parent = _parent.get(os.getpid())
    if parent == ctx.owner.pid and os.getppid() != parent:
        os._exit(0)
    return True


def _load(unit: Unit, data_dir: str | None):
    """The unit's data and its shared statistics (train, test); kept for the next task, which is often the
    next chunk of the same unit.  Never shared across units."""
    key = (unit.runs[0].unit_key, data_dir)
    if key not in _loaded:
        data = load_dataset(unit.dataset, split_seed=unit.data_seed, data_dir=data_dir, split=unit.split)
        _loaded.clear()
        _loaded[key] = data, (SharedData(data.X_train, data.y_train), SharedData(data.X_test))
    return _loaded[key]


def _write(rows: list[dict], ctx: TaskContext) -> int:
    """Write rows as one part unless the sweep is gone (a re-run may be redoing them); returns rows written."""
    if _sweep_gone(ctx):
        return 0
    results.write_part(rows, ctx.sweep_dir, f"{rows[0]['run_id']}-{uuid.uuid4().hex[:8]}")
    return len(rows)


def _run_chunk(chunk: Unit, ctx: TaskContext) -> int:
    base = {r.run_id: {**_base_row(r, ctx.prov), "attempt": chunk.attempts.get(r.run_id, 1)} for r in chunk.runs}
    try:
        data, shared = _load(chunk, ctx.prov.data_dir)
    except MissingDataError as exc:
        return _write([{**base[r.run_id], "status": "missing_data", "error": str(exc)} for r in chunk.runs], ctx)
    except Exception as exc:  # noqa: BLE001
        err = f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=3)}"[:2000]
        return _write([{**base[r.run_id], "status": "data_error", "error": err} for r in chunk.runs], ctx)
    if _sweep_gone(ctx):
        return 0
    rows = [{**base[r.run_id], **row} for r, row in zip(chunk.runs, fit_runs(chunk.runs, data, shared), strict=True)]
    written = 0
    for i in range(0, len(rows), ctx.part_size):
        n = _write(rows[i: i + ctx.part_size], ctx)
        if not n:
            break
        written += n
    return written


def run_chunk(chunk: Unit, ctx: TaskContext) -> int:
    """Fit one chunk of a unit's runs, a part every part_size runs, BLAS pinned; returns the runs written."""
    _parent.setdefault(os.getpid(), os.getppid())
    if ctx.blas_threads is None:
        return _run_chunk(chunk, ctx)
    with threadpool_limits(limits=ctx.blas_threads, user_api="blas"):
        return _run_chunk(chunk, ctx)


def run_study_task(run: RunSpec, ctx: TaskContext):
    """A tuned run's study on its unit (tuning.study), BLAS pinned; None if the data is missing (the run's
    chunk then records missing_data)."""
    from dpbench.tuning.study import StudyResult, run_study

    _parent.setdefault(os.getpid(), os.getppid())
    unit = Unit(dict(run.dataset), run.data_seed, run.split, [run])
    with threadpool_limits(limits=ctx.blas_threads, user_api="blas") if ctx.blas_threads else contextlib.nullcontext():
        try:
            data, _ = _load(unit, ctx.prov.data_dir)
        except MissingDataError:
            return None
        try:
            return run_study(run, data, Path(ctx.sweep_dir) / "tuning", stop=lambda: _sweep_gone(ctx))
        except Exception as exc:  # noqa: BLE001 - the tuned runs record the failure
            return StudyResult({}, float("nan"), 0, error=f"{type(exc).__name__}: {exc}"[:500])


def _tune(chunks: list[Unit], ctx: TaskContext, progress: bool) -> list[Unit]:
    """Run the study of every tuned run first (one joblib task per study, in parallel), then hand each tuned
    run its chosen setting.  Studies already finished are read back from their journals."""
    from dpbench.tuning.study import study_key

    studies: dict[str, RunSpec] = {}
    for chunk in chunks:
        for r in chunk.runs:
            if r.tuning_mode == "tuned":
                studies.setdefault(study_key(r), r)
    if not studies:
        return chunks
    keys = sorted(studies, key=lambda k: studies[k].unit_key)  # a worker's consecutive studies share its data
    tasks = (joblib.delayed(run_study_task)(studies[k], ctx) for k in keys)
    with tqdm(total=len(keys), desc=f"{ctx.prov.experiment}: tuning", unit="study", disable=not progress) as bar:
        chosen = {}
        for k, res in zip(keys, joblib.Parallel(return_as="generator", batch_size=1)(tasks), strict=True):
            chosen[k] = res
            bar.update(1)
    def tuned(r: RunSpec) -> RunSpec:
        res = chosen.get(study_key(r)) if r.tuning_mode == "tuned" else None
        if res is None:
            return r
        return replace(r, tuned={"params": res.params, "validation_score": res.validation_score,
                                 "trials": res.trials, "error": res.error})
    return [replace(c, runs=[tuned(r) for r in c.runs]) for c in chunks]


BACKENDS = ("loky", "multiprocessing", "threading", "sequential", "dask")  # joblib's, and Dask through joblib


@contextlib.contextmanager
def _backend(runner: Mapping):
    backend = runner.get("backend", "loky")
    if backend not in BACKENDS:
        raise ValueError(f"runner.backend must be one of {', '.join(BACKENDS)}; got {backend!r}")
    if backend == "dask":
        with _dask_client(runner), joblib.parallel_config(backend="dask"):
            yield
    else:
        with joblib.parallel_config(backend=backend, n_jobs=int(runner.get("n_jobs", 1))):
            yield


@contextlib.contextmanager
def _dask_client(runner: Mapping):
    """A client of the scheduler at runner.address (a one-line ValueError if it does not answer within
    runner.connect_timeout seconds), or of a local cluster of n_jobs single-threaded worker processes."""
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError as exc:
        raise ValueError("runner.backend=dask needs dask[distributed]: pip install 'dpbench[dask]'") from exc
    address = runner.get("address")
    if not address:
        with LocalCluster(n_workers=int(runner.get("n_jobs", 2)), threads_per_worker=1) as cluster:
            with Client(cluster) as client:
                yield client
        return
    with _connect(Client, address, float(runner.get("connect_timeout", 5))) as client:
        yield client


CONNECT_GRACE = 5.0  # seconds beyond connect_timeout before a silent peer is given up on


def _connect(client_class, address: str, timeout: float):
    """Client(address) within timeout + CONNECT_GRACE seconds, whatever answers there, else a one-line
    ValueError.  Dask's own timeout covers the TCP connect, not its handshake: a peer that is not a Dask
    scheduler (an HTTP server, a silent socket) can stall it forever or send bytes it reads as a frame length
    (MemoryError), so the connect runs in a daemon thread with a deadline."""
    import threading

    outcome: dict = {}

    def attempt():
        try:
            outcome["client"] = client_class(address, timeout=timeout)
        except BaseException as exc:  # noqa: BLE001 - reported below in one line
            outcome["error"] = exc

    thread = threading.Thread(target=attempt, name="dpbench-dask-connect", daemon=True)
    thread.start()
    thread.join(timeout + CONNECT_GRACE)
    where = f"runner.address={address!r}"
    if thread.is_alive():
        raise ValueError(f"no Dask scheduler answered at {where} within {timeout + CONNECT_GRACE:g} s "
                         "(runner.connect_timeout + 5): is something else listening there?")
    if "error" in outcome:
        exc = outcome["error"]
        reason = " ".join(f"{type(exc).__name__}: {exc}".split())[:200]
        raise ValueError(f"cannot reach the Dask scheduler at {where}: {reason}")
    return outcome["client"]


def _positive_int(runner: Mapping, key: str, default: int, allow_null: bool = False) -> int | None:
    value = runner.get(key, default)
    if value is None and allow_null:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"runner.{key} must be an integer >= 1{' or null' if allow_null else ''}, got {value!r}")
    return value


def _open(sweep_dir: Path) -> lock.Owner:
    """Create the sweep directory and take its lock; an unwritable place is a one-line ValueError."""
    try:
        sweep_dir.mkdir(parents=True, exist_ok=True)
        return lock.acquire(sweep_dir)
    except OSError as exc:
        raise ValueError(f"cannot write results to {sweep_dir}: {exc.strerror or exc}") from None


def run_sweep(exp: Mapping, runner: Mapping, sweep_dir: str | Path, data_dir: str | None = None) -> dict:
    """Run every not-yet-finished run of an experiment; returns counts.  Safe to interrupt and re-run.

    Runs whose newest row is a harness failure (error, missing_data, data_error) are redone
    ("retried"); every other row is a result and stays.
    """
    sweep_dir = Path(sweep_dir).resolve()  # workers may have another working directory
    part_size = _positive_int(runner, "part_size", 32)
    chunk_runs = _positive_int(runner, "chunk_runs", 32)
    blas_threads = _positive_int(runner, "blas_threads", 1, allow_null=True)  # null: leave BLAS alone
    runs = expand(exp)
    prov = Provenance(exp.get("name", "sweep"), stable_hash(exp), git_state(), data_dir)
    owner = _open(sweep_dir)
    try:
        results.remove_stale_temporaries(sweep_dir)  # safe: we hold the lock, no live sweep is writing
        results.set_aside_corrupt(sweep_dir)
        states = results.run_states(sweep_dir)
        done = set(states.index[~states["status"].isin(results.RETRIED_STATUSES)])
        todo = [r for r in runs if r.run_id not in done]
        previous = states["attempt"].to_dict()
        attempts = {r.run_id: int(previous[r.run_id]) + 1 for r in todo if r.run_id in previous}
        units = group_units(todo, attempts)
        chunks = chunk_units(units, chunk_runs)
        (sweep_dir / "config.json").write_text(json.dumps(exp, indent=2, default=str))
        ctx = TaskContext(str(sweep_dir), prov, part_size, blas_threads, owner)
        progress = bool(runner.get("progress", True))
        with _backend(runner):
            chunks = _tune(chunks, ctx, progress)
            with tqdm(total=len(todo), desc=prov.experiment, unit="run", disable=not progress) as bar:
                tasks = (joblib.delayed(run_chunk)(c, ctx) for c in chunks)
                for n in joblib.Parallel(return_as="generator_unordered", batch_size=1)(tasks):
                    bar.update(n)
    finally:
        lock.release(owner)
        _loaded.clear()
    return {
        "runs": len(runs),
        "skipped": len(runs) - len(todo),
        "ran": len(todo),
        "retried": len(attempts),
        "units": len(units),
        "chunks": len(chunks),
    }
