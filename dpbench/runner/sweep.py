"""Execute a sweep with joblib: one task per chunk of a unit's runs, parts written as runs finish.

Chunks (runner.chunk_runs) keep workers balanced and the progress bar moving; a chunk loads its unit's data,
cached per process (runner.workers).  Tuned runs' studies run first, one task per study.  The unit with the
longest estimate goes first (a long unit handed out last would finish alone): by the size measure
(runner.cost_model.size, from the config alone), or, with progress on and a grid large enough to pay for a few
seconds of calibration fits (runner.calibration.worth_calibrating), by calibrated seconds, and then a task
estimated over LONG_SECONDS says so when it starts.  The sweep holds the results directory's lock
(runner.lock).  A re-run skips finished runs and redoes harness failures (results.RETRIED_STATUSES).
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import fields, replace
from pathlib import Path

import joblib
from threadpoolctl import threadpool_limits
from tqdm.auto import tqdm

from dpbench import algorithms, results, tuning
from dpbench.config import RunnerConfig
from dpbench.data import EmptyDataError, get_spec, load_dataset
from dpbench.extend import load_imports
from dpbench.runner import backends, calibration, cost_model, lock, workers
from dpbench.runner.estimate import announcement, chunk_label, study_label
from dpbench.runner.grid import RunSpec, Unit, canonical_json, chunk_units, expand, group_units, stable_hash
from dpbench.runner.provenance import Provenance, git_state
from dpbench.runner.workers import TaskContext, run_chunk, run_study_task
from dpbench.tuning.study import finished_trials, study_key


def _tune(chunks: list[Unit], ctx: TaskContext, progress: bool, estimate: Callable, seconds: bool,
          workers: int = 1) -> list[Unit]:
    """Run the study of every tuned run first (one joblib task per study, in parallel), then hand each tuned
    run its chosen setting.  Studies already finished are read back from their journals.  The longest unit's
    studies go first (`estimate`, `seconds`: `_estimates`'; a study is announced only when they are seconds)."""
    studies: dict[str, RunSpec] = {}
    for chunk in chunks:
        for r in chunk.runs:
            if r.tuning_mode == "tuned":
                studies.setdefault(study_key(r), r)
    if not studies:
        return chunks
    keys = sorted(studies, key=lambda k: studies[k].unit_key)  # a worker's consecutive studies share its data
    trials = {k: tuning.study_trials(algorithms.get_spec(studies[k].algorithm), studies[k].tuning) for k in keys}
    finished = {k: min(trials[k], finished_trials(ctx.studies_dir, studies[k])) for k in keys}  # reused when resumed
    estimates = {k: estimate(studies[k], 1 - finished[k] / trials[k] if trials[k] else 0.0) for k in keys}
    keys = cost_model.longest_first(keys, lambda k: studies[k].unit_key, estimates.get)
    tasks = (joblib.delayed(run_study_task)(studies[k], ctx, _announcement(ctx, study_label(studies[k]),
                                                                             estimates[k] if seconds else None))
             for k in keys)
    work = {k: estimates[k] / (1 - finished[k] / trials[k]) if seconds and finished[k] < trials[k] else trials[k]
            for k in keys}  # a study's whole work: seconds from its estimate of what is left, or trials
    bar = WorkBar(sum(work.values()), f"{ctx.prov.experiment}: tuning", progress, workers if seconds else 0)
    with bar, _trials_progress(bar, studies, trials, ctx.studies_dir, work) as done:
        chosen = {}
        for k, res in zip(keys, joblib.Parallel(return_as="generator", batch_size=1)(tasks), strict=True):
            chosen[k] = res
            done.add(k)
    def tuned(r: RunSpec) -> RunSpec:
        res = chosen.get(study_key(r)) if r.tuning_mode == "tuned" else None
        if res is None:
            return r
        return replace(r, tuned={"params": res.params, "validation_score": res.validation_score,
                                 "trials": res.trials, "error": res.error})
    return [replace(c, runs=[tuned(r) for r in c.runs]) for c in chunks]


@contextlib.contextmanager
def _trials_progress(bar, studies: dict, trials: dict, studies_dir: str, work: dict, every: float = 2.0):
    """Keep the tuning bar at the work of the trials finished so far (a study's `work` times its share of
    trials finished), read from the studies' journals every `every` seconds by a thread (a study of slow fits,
    e.g. DP-EBM's thousands of rounds on hundreds of features, moves the bar trial by trial instead of sitting
    still for minutes); a study in the yielded set counts whole."""
    done: set[str] = set()
    stop = threading.Event()

    def update():
        finished = {k: trials[k] if k in done else min(trials[k], finished_trials(studies_dir, r))
                    for k, r in studies.items()}
        bar.show(sum(work[k] * finished[k] / trials[k] for k in studies if trials[k]),
                 f"{sum(finished.values())}/{sum(trials.values())} trials, {len(done)}/{len(studies)} studies")

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


def _announcement(ctx: TaskContext, label: str, seconds: float | None) -> str | None:
    return announcement(ctx.prov.experiment, label, seconds) if seconds is not None else None


def _estimates(todo: list[RunSpec], data_dir: str | None, runner: RunnerConfig) -> tuple[Callable, bool]:
    """(estimate(chunk, or a study's run and the share of its trials left), whether its estimates are seconds):
    its wall seconds in a worker from calibrated costs when calibration.worth_calibrating (and something loads here,
    and calibrating works), else the size measure (cost_model.size; 0 for a task whose data is missing here: it
    only records missing_data)."""

    def size(task: Unit | RunSpec, left: float = 1.0) -> float:
        return left * cost_model.size(task) if cost_model.loads_here(task, data_dir) else 0.0

    if not calibration.worth_calibrating(todo, runner):
        return size, False
    try:
        costs = calibration.calibrate(todo, data_dir, runner.blas_threads)
    except Exception:  # noqa: BLE001 - an estimate orders and announces tasks; it never stops a sweep
        costs = None
    if costs is None:
        return size, False
    share = calibration.workers_share(runner, costs.share)
    return (lambda task, left=1.0: (costs.chunk(task) if isinstance(task, Unit) else costs.study(task, left)[0])
            / share), True


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
        estimate, seconds = _estimates(todo, data_dir, runner)
        estimates = {id(c): estimate(c) for c in chunks}
        chunks = cost_model.longest_first(chunks, lambda c: c.runs[0].unit_key, lambda c: estimates[id(c)])
        notes = [_announcement(ctx, chunk_label(c), estimates[id(c)] if seconds else None) for c in chunks]
        with backends.parallel(runner), (threadpool_limits(limits=blas_threads, user_api="blas")
                                         if threads and blas_threads else contextlib.nullcontext()):
            work = [estimates[id(c)] if seconds else len(c.runs) for c in chunks]  # _tune keeps the order
            chunks = _tune(chunks, ctx, progress, estimate, seconds, cost_model.workers(runner))
            with WorkBar(sum(work), prov.experiment, progress, cost_model.workers(runner) if seconds else 0) as bar:
                bar.show(0, f"0/{len(todo)} runs")  # the calibrated time left, from the start
                tasks = (joblib.delayed(_numbered)(i, c, ctx, note)
                         for i, (c, note) in enumerate(zip(chunks, notes, strict=True)))
                ran = 0
                for i, n in joblib.Parallel(return_as="generator_unordered", batch_size=1)(tasks):
                    ran += n
                    bar.show(bar.n + work[i], f"{ran}/{len(todo)} runs")
    finally:
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
