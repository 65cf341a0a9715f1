"""Execute a sweep with joblib: one task per chunk of a unit's runs, parts written as runs finish.

Chunks (runner.chunk_runs) keep workers balanced and the progress bar moving; a chunk loads its unit's data,
cached per process (runner.workers).  Tuned runs' studies run first, one task per study.  The sweep asks for
one estimate up front (runner.estimate): its tasks in order, the longest unit first, with the work the progress
bars count and the lines that announce long tasks.  The sweep holds the results directory's lock
(runner.lock).  A re-run skips finished runs and redoes harness failures (results.RETRIED_STATUSES).
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Mapping
from dataclasses import fields, replace
from pathlib import Path

import joblib
from threadpoolctl import threadpool_limits
from tqdm.auto import tqdm

from dpbench import results
from dpbench.config import RunnerConfig
from dpbench.data import EmptyDataError, get_spec, load_dataset
from dpbench.extend import load_imports
from dpbench.runner import backends, lock, workers
from dpbench.runner.cost_model import loads_here
from dpbench.runner.estimate import Estimate, estimate
from dpbench.runner.grid import RunSpec, Unit, canonical_json, chunk_units, expand, group_units, stable_hash
from dpbench.runner.provenance import Provenance, git_state
from dpbench.runner.workers import TaskContext, run_chunk, run_study_task
from dpbench.tuning.study import finished_trials, study_key


def _tune(plan: Estimate, ctx: TaskContext, progress: bool) -> list[Unit]:
    """Run the study of every tuned run first (one joblib task per study, in parallel, in the estimate's order),
    then hand each tuned run of the estimate's chunks its chosen setting.  Studies already finished are read back
    from their journals."""
    if not plan.studies:
        return plan.chunks
    tasks = (joblib.delayed(run_study_task)(r, ctx, plan.note(ctx.prov.experiment, r, plan.study_estimates[k]))
             for k, r in plan.studies.items())
    # the bar counts the studies whose data is here (the others only record missing_data, at once)
    shown = {k: r for k, r in plan.studies.items() if loads_here(r, ctx.prov.data_dir)}
    work = {k: w for k, w in plan.study_work().items() if k in shown}
    bar = WorkBar(sum(work.values()), f"{ctx.prov.experiment}: tuning", progress, plan.eta_workers)
    with bar, _trials_progress(bar, shown, plan.trials, ctx.studies_dir, work) as done:
        chosen = {}
        for k, res in zip(plan.studies, joblib.Parallel(return_as="generator", batch_size=1)(tasks), strict=True):
            chosen[k] = res
            done.add(k)

    def tuned(r: RunSpec) -> RunSpec:
        res = chosen.get(study_key(r)) if r.tuning_mode == "tuned" else None
        if res is None:
            return r
        return replace(r, tuned={"params": res.params, "validation_score": res.validation_score,
                                 "trials": res.trials, "error": res.error})
    return [replace(c, runs=[tuned(r) for r in c.runs]) for c in plan.chunks]


@contextlib.contextmanager
def _trials_progress(bar, studies: dict, trials: dict, studies_dir: str, work: dict, every: float = 2.0):
    """Keep the tuning bar at the work of the trials finished so far (a study's `work` times its share of
    trials finished), read from the studies' journals every `every` seconds by a thread (a study of slow fits,
    e.g. DP-EBM's thousands of rounds on hundreds of features, moves the bar trial by trial instead of sitting
    still for minutes); a study in the yielded set counts whole, as does one whose trials are all in its journal
    (the results come back in the studies' order: a resumed sweep's finished studies would wait their turn)."""
    done: set[str] = set()
    stop = threading.Event()

    def update():
        finished = {k: trials[k] if k in done else min(trials[k], finished_trials(studies_dir, r))
                    for k, r in studies.items()}
        bar.show(sum(work[k] * finished[k] / trials[k] for k in studies if trials[k]),
                 f"{sum(finished.values())}/{sum(trials[k] for k in studies)} trials, "
                 f"{sum(k in done or finished[k] >= trials[k] for k in studies)}/{len(studies)} studies")

    def poll():
        while not stop.wait(every):
            update()

    thread = threading.Thread(target=poll, daemon=True, name="tuning progress")
    if not bar.disable:
        update()  # at once: the trials already finished, and the calibrated time left
        thread.start()
    try:
        yield done
    finally:
        stop.set()
        if thread.is_alive():
            thread.join()
        if not bar.disable:
            update()


def _numbered(i: int, chunk: Unit, ctx: TaskContext, note: str | None) -> tuple[int, int]:
    """run_chunk, answering with the chunk's position (the bar moves by that chunk's estimated work)."""
    return i, run_chunk(chunk, ctx, note)


class WorkBar(tqdm):
    """A progress bar over estimated work (seconds of a worker when calibrated, else runs or trials), so a long
    task counts for its length, with the time left from the calibration at the start (work / `workers`) and
    from the measured pace as work gets done, weighted by the share done; the counts (runs, trials) beside it."""

    def __init__(self, total: float, desc: str, progress: bool, workers: int):
        self.workers, self.text = workers, ""
        super().__init__(total=total, desc=desc, disable=not progress,
                         bar_format="{desc}: {percentage:3.0f}%|{bar}| {text}")

    @property
    def format_dict(self):
        return {**super().format_dict, "text": self.text}

    def show(self, n: float, counts: str) -> None:
        self.n = min(n, self.total)
        elapsed = self.format_dict["elapsed"]
        left, share = self.total - self.n, self.n / self.total if self.total else 1.0
        pace = elapsed * left / self.n if self.n else None
        calibrated = left / self.workers if self.workers else None
        eta = pace if calibrated is None else calibrated if pace is None else (1 - share) * calibrated + share * pace
        self.text = f"{counts} [{self.format_interval(elapsed)}<{'?' if eta is None else self.format_interval(eta)}]"
        self.refresh()


def check_datasets(runs: list[RunSpec], data_dir: str | None) -> None:
    """Each dataset of `runs` a user's module generates, loaded once before any fit: one with no row to fit (no
    rows, or none without a missing value) is an EmptyDataError naming it and why.  dpbench's own datasets are
    not loaded twice (their tests check them); any other failure to load is left to its runs, which record it
    (missing_data, data_error)."""
    for run in {canonical_json([r.dataset, r.split]): r for r in runs}.values():
        make = getattr(get_spec(run.dataset["name"]).source, "make", None)
        if make is not None and not make.__module__.startswith("dpbench."):
            try:
                load_dataset(run.dataset, split_seed=run.data_seed, data_dir=data_dir, split=run.split)
            except EmptyDataError:
                raise
            except Exception:  # noqa: BLE001 - its runs record it
                pass


def settings(runner: Mapping | RunnerConfig) -> RunnerConfig:
    """The runner settings; keys `runner` leaves out take RunnerConfig's defaults, their one declaration."""
    if isinstance(runner, RunnerConfig):
        return runner
    valid = [f.name for f in fields(RunnerConfig)]
    unknown = sorted(set(runner) - set(valid))
    if unknown:
        raise ValueError(f"unknown runner key(s) {unknown}; valid: {', '.join(valid)}")
    return RunnerConfig(**runner)


def _positive_int(runner: RunnerConfig, key: str, allow_null: bool = False) -> int | None:
    value = getattr(runner, key)
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


def run_sweep(exp: Mapping, runner: Mapping | RunnerConfig, sweep_dir: str | Path, data_dir: str | None = None,
              studies_dir: str | Path | None = None) -> dict:
    """Run every not-yet-finished run of an experiment; returns counts.  Safe to interrupt and re-run.

    Runs whose newest row is a harness failure (error, missing_data, data_error) are redone
    ("retried"); every other row is a result and stays.  `runner`: the runner settings (see `settings`).
    `studies_dir`: where tuned runs' studies live (default `<sweep_dir>/tuning`); a study is identified by what
    it tunes (`tuning.study.study_key`: algorithm, fixed parameters, dataset split, epsilon, delta, tuning
    settings), not by the experiment, so sweeps given one directory (the CLI: `<results_dir>/_studies`) share
    it: Figs 1-5 tune BoostedAdaSSP once per identity.
    """
    runner = settings(runner)
    imports = tuple(exp.get("imports", ()))
    load_imports(imports)  # the user's registrations, before the grid is expanded
    sweep_dir = Path(sweep_dir).resolve()  # workers may have another working directory
    part_size = _positive_int(runner, "part_size")
    chunk_runs = _positive_int(runner, "chunk_runs")
    blas_threads = _positive_int(runner, "blas_threads", allow_null=True)  # null: leave BLAS alone
    runs = expand(exp)
    prov = Provenance(exp.get("name", "sweep"), stable_hash(exp), git_state(), data_dir)
    owner = _open(sweep_dir)
    if owner.dead_seconds is not None:  # a sweep killed here before (SIGKILL, a stopped session): its time counts
        from dpbench.reproduction import log_sweep

        log_sweep(sweep_dir, owner.dead_seconds, None, killed=True)
    stop_heartbeat = lock.heartbeat(owner)
    try:
        results.remove_stale_temporaries(sweep_dir)  # safe: we hold the lock, no live sweep is writing
        results.set_aside_corrupt(sweep_dir)
        states = results.run_states(sweep_dir)
        done = set(states.index[~states["status"].isin(results.RETRIED_STATUSES)])
        todo = [r for r in runs if r.run_id not in done]
        check_datasets(todo, data_dir)
        previous = states["attempt"].to_dict()
        attempts = {r.run_id: int(previous[r.run_id]) + 1 for r in todo if r.run_id in previous}
        units = group_units(todo, attempts)
        chunks = chunk_units(units, chunk_runs)
        (sweep_dir / "config.json").write_text(json.dumps(exp, indent=2, default=str))
        studies = Path(studies_dir).resolve() if studies_dir is not None else sweep_dir / "tuning"
        threads = runner.backend == "threading"  # the tasks share this process's BLAS: pinned once, around them
        ctx = TaskContext(str(sweep_dir), prov, part_size, None if threads else blas_threads, owner, imports,
                          str(studies))  # (limits set and restored by each of concurrent tasks would interleave)
        progress = bool(runner.progress)
        plan = estimate(todo, chunks, runner, data_dir, str(studies))
        notes = [plan.note(prov.experiment, c, e) for c, e in zip(plan.chunks, plan.chunk_estimates, strict=True)]
        with backends.parallel(runner), (threadpool_limits(limits=blas_threads, user_api="blas")
                                         if threads and blas_threads else contextlib.nullcontext()):
            work = plan.chunk_work()
            chunks = _tune(plan, ctx, progress)  # the estimate's chunks, in its order
            with WorkBar(sum(work), prov.experiment, progress, plan.eta_workers) as bar:
                bar.show(0, f"0/{len(todo)} runs")  # the calibrated time left, from the start
                tasks = (joblib.delayed(_numbered)(i, c, ctx, note)
                         for i, (c, note) in enumerate(zip(chunks, notes, strict=True)))
                ran = 0
                for i, n in joblib.Parallel(return_as="generator_unordered", batch_size=1)(tasks):
                    ran += n
                    bar.show(bar.n + work[i], f"{ran}/{len(todo)} runs")
    finally:
        stop_heartbeat()
        lock.release(owner)
        workers.forget()
    return {
        "runs": len(runs),
        "skipped": len(runs) - len(todo),
        "ran": len(todo),
        "retried": len(attempts),
        "units": len(units),
        "chunks": len(chunks),
    }
