"""One tuned-mode study: Optuna over an algorithm's tuning space on a validation split of a unit's training part.

A study is keyed by (algorithm, fixed params, dataset, data seed, split, epsilon, delta, and the tuning
settings other than n_trials), so the tuned runs of every seed share it, and raising `tuning.n_trials`
extends a finished study instead of starting over; a run with n_trials = k selects among the study's first
k finished trials.  Trials persist in an Optuna journal file (`<results_dir>/_studies/<study name>.log`, named
by what it tunes and its key, `study_name`; the key holds no experiment, so every sweep in a results directory
shares it, e.g. Figs 1-5's BoostedAdaSSP studies): an interrupted study resumes where it stopped, a finished one
is reused (once per code: a journal other code scored has its best trial checked, `_check_best_trial`).  The
study's identity is its user attribute `identity`, and each tuned row names its study (`study`),
so `optuna-dashboard <journal>` opens the study that chose a row's setting.

A trial fits `seeds` estimators (each its own noise) on the fit part and scores them on the validation part;
the objective is their mean.  `batch_trials` trials are asked of the TPE sampler at once (constant liar) and
all their fits go through the algorithms' batched path together; the trials TPE draws at random anyway (its
first N_STARTUP, rounded up to whole asks) are asked at once (`ask_size`: the same trials, fewer batches).  A
trial in which any fit raises is recorded as failed.  The sampler is seeded from the study key; a resumed study
draws different (equally valid) trials from an uninterrupted one, because TPE's state is rebuilt from the
stored trials.  A space of categorical choices only, with no more points than n_trials (paper 001's DP-XGBoost
subsample in {0.2, 0.5, 0.8}), is searched exhaustively instead: each point is queued once, so the study has
as many trials as points.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import json
import logging
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import dpbench
from dpbench import algorithms, metrics, tuning
from dpbench.algorithms.shared_data import SharedData
from dpbench.data import dataset_label
from dpbench.runner.fitting import batch_groups, fit_group, make_estimator
from dpbench.runner.grid import RunSpec, stable_hash
from dpbench.runner.scoring import evaluate_many
from dpbench.tuning.spaces import bounded_space

N_STARTUP = 10  # trials TPE draws at random before it models the finished ones (optuna's default)


@dataclass(frozen=True)
class StudyResult:
    params: dict  # the chosen hyperparameters (the tuned ones only)
    validation_score: float
    trials: int  # finished trials the choice was made among
    error: str | None = None  # set when no trial succeeded


def study_identity(run: RunSpec) -> dict:
    identity = {k: v for k, v in run.identity.items() if k not in ("seed", "tuning", "tuning_mode")}
    identity["data_seed"] = run.data_seed
    identity["tuning"] = {k: v for k, v in run.tuning.items() if k != "n_trials"}
    return identity


def study_key(run: RunSpec) -> str:
    return stable_hash(study_identity(run))


def study_name(run: RunSpec) -> str:
    """The study's name and its journal's file name: algorithm, dataset, epsilon, delta (what a reader looks
    for), then the key (what makes it unique: the fixed params, split and tuning settings too)."""
    label = f"{run.algorithm}__{dataset_label(run.dataset)}__eps{run.epsilon:g}__delta{run.delta:g}"
    return re.sub(r"[^A-Za-z0-9._=+-]+", "_", label) + f"__{study_key(run)}"


def journal(storage_dir: Path, run: RunSpec) -> Path:
    """The journal file of `run`'s study; `<key>.log` where an older dpbench named it by the key alone and the
    named one does not exist yet (run_study renames it)."""
    named, legacy = Path(storage_dir) / f"{study_name(run)}.log", Path(storage_dir) / f"{study_key(run)}.log"
    return legacy if legacy.is_file() and not named.exists() else named


def objective_metric(run: RunSpec, task: str) -> tuple[str, bool]:
    """The validation column and whether lower is better."""
    name = run.tuning.get("metric") or ("mse" if task == "regression" else "f1")
    return f"test_{name}", metrics.METRICS[name].lower_is_better


def validation_split(data, fraction: float, seed: int):
    """The unit's training part cut into a fit part (as train) and a validation part (as test)."""
    n = len(data.y_train)
    order = np.random.default_rng(seed).permutation(n)
    n_val = min(n - 1, max(1, round(fraction * n)))
    fit, val = np.sort(order[n_val:]), np.sort(order[:n_val])
    return dataclasses.replace(data, X_train=data.X_train[fit], y_train=data.y_train[fit],
                               X_test=data.X_train[val], y_test=data.y_train[val])


def _storage(path: Path):
    from optuna.storages import JournalStorage
    from optuna.storages.journal import JournalFileBackend

    path.parent.mkdir(parents=True, exist_ok=True)
    return JournalStorage(JournalFileBackend(str(path)))


def _finished(study) -> list:
    from optuna.trial import TrialState

    done = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE, TrialState.FAIL))
    return sorted(done, key=lambda t: t.number)


def finished_trials(storage_dir: Path, run: RunSpec) -> int:
    """Trials of `run`'s study finished so far (complete or failed), read from its journal without loading it:
    its lines that set a trial's end time.  For progress only (a study's results are read through optuna)."""
    try:
        with open(journal(storage_dir, run), "rb") as lines:
            return sum(b'"datetime_complete"' in line for line in lines)
    except FileNotFoundError:
        return 0


def chosen_rounds(storage_dir: Path, run: RunSpec) -> list[float]:
    """n_rounds of `run`'s finished trials that TPE chose (those after its N_STARTUP random ones), read from its
    journal's lines (for the estimate of a resumed study: `runner.cost_model.rounds_scale`)."""
    rounds, ended = {}, set()
    try:
        with open(journal(storage_dir, run), "rb") as lines:
            for line in lines:
                if b'"n_rounds"' in line or b'"datetime_complete"' in line:
                    try:
                        op = json.loads(line)
                    except ValueError:  # a line being written by a sweep running now (a dry run beside it)
                        continue
                    if op.get("param_name") == "n_rounds":
                        rounds[op["trial_id"]] = float(op["param_value_internal"])
                    elif op.get("datetime_complete"):
                        ended.add(op["trial_id"])
    except FileNotFoundError:
        return []
    return [rounds[t] for t in sorted(ended) if t >= N_STARTUP and t in rounds]


def trial_estimators(run: RunSpec, data, param_sets: list[dict], seeds: int) -> list:
    """The unfitted estimators of trials: each parameter set's `seeds` fits in a row (seeds keyed by the trial
    run's own identity)."""
    runs = [dataclasses.replace(run, params={**run.params, **p}, seed=s, tuning_mode="trial", tuning={}, tuned=None)
            for p in param_sets for s in range(seeds)]
    return [make_estimator(r, data) for r in runs]


def ask_size(done: int, n_trials: int, batch_trials: int) -> int:
    """Trials to ask next: batch_trials, except that the trials TPE draws at random anyway (those asked, in asks
    of batch_trials, before N_STARTUP have finished: 12 for asks of 4) are asked at once -- the same trials
    (the random sampler's draws in the same order), in one batched fit instead of several."""
    startup = -(-N_STARTUP // batch_trials) * batch_trials
    return min(max(batch_trials, startup - done), n_trials - done)


def _score_trials(run: RunSpec, data, param_sets: list[dict], seeds: int, column: str, shared=None) -> list[float]:
    """Mean validation score of each parameter set over `seeds` fits (NaN if any fit raises).  The fits of all
    the trials are grouped by `batch_groups`, so trials of different settings share one batched fit where the
    algorithm allows (BoostedAdaSSP: all of them).  `shared`: the (fit part, validation part) SharedData of
    the study, made here when not given."""
    shared = shared or (SharedData(data.X_train, data.y_train), SharedData(data.X_test))
    ests = trial_estimators(run, data, param_sets, seeds)
    scores = np.full(len(ests), np.nan)
    for group in batch_groups(ests):
        members = [ests[i] for i in group]
        try:
            fit_group(members, data.X_train, data.y_train, shared[0])
        except Exception:  # noqa: BLE001 - retry alone, so one failing setting does not fail the others
            members = []
            for i in group:
                try:
                    fit_group([ests[i]], data.X_train, data.y_train, shared[0])
                    members.append(ests[i])
                except Exception:  # noqa: BLE001 - a failed fit fails its trial
                    pass
        fitted = [i for i in group if ests[i] in members]
        for i, m in zip(fitted, evaluate_many([ests[i] for i in fitted], data, *shared), strict=True):
            scores[i] = m[column]
    per_trial = scores.reshape(len(param_sets), seeds)
    return [float(v.mean()) if np.isfinite(v).all() else math.nan for v in per_trial]


class StaleStudyError(RuntimeError):
    """A study journal whose trials this code scores otherwise (`_check_best_trial`)."""


SCORE_RTOL = 1e-6  # a trial's score moves by ulps with its place in a batch (1e-14 on paper 000's d = 735 task);
# a change of what an algorithm computes moves it by far more (DP-EBM's private label range: 491 -> 7413)


@functools.cache
def code_identity() -> str:
    """The code that scores this process's trials: its checkout's commit and uncommitted diff
    (runner.provenance.git_state), or the installed version outside a checkout."""
    from dpbench.runner.provenance import git_state

    git = git_state()
    if git.dirty is None:
        return f"dpbench {dpbench.__version__}"
    return f"{git.commit}+{git.diff_hash}" if git.dirty else git.commit


def _check_best_trial(study, run: RunSpec, fit_data, column: str, lower: bool, shared, path: Path) -> None:
    """A journal's trials are reused by identity (the study key), which holds nothing of the code: a change of
    what an algorithm computes under the same parameters would leave the study choosing on scores this code
    does not give.  So a journal last scored by other code (its user attribute `code`) has its best trial
    scored again; StaleStudyError unless the score agrees (SCORE_RTOL).  One trial, not all: a stale journal
    whose best trial still agrees passes."""
    from optuna.trial import TrialState

    complete = [t for t in _finished(study) if t.state == TrialState.COMPLETE]
    if not complete:
        return
    best = (min if lower else max)(complete, key=lambda t: t.value)
    now = _score_trials(run, fit_data, [dict(best.params)], run.tuning["seeds"], column, shared)[0]
    if not math.isclose(now, best.value, rel_tol=SCORE_RTOL):
        raise StaleStudyError(f"{path}: its best trial ({best.number}) scores {now:.6g} with this code, "
                              f"{best.value:.6g} in the journal, which other code scored: delete the journal to "
                              "run the study again")


def run_study(run: RunSpec, data, storage_dir: Path, stop: Callable[[], bool] = lambda: False) -> StudyResult:
    """Run (or resume, or reuse) the study of `run` on its loaded unit `data`; returns the chosen setting."""
    import optuna
    from optuna.trial import TrialState

    optuna.logging.set_verbosity(logging.WARNING)
    cfg, spec, key = run.tuning, algorithms.get_spec(run.algorithm), study_key(run)
    space = tuning.search_space(spec, cfg)
    entropy = int(key, 16)
    column, lower = objective_metric(run, data.task)
    fit_data = validation_split(data, cfg["validation_fraction"], entropy % 2**32)
    space = bounded_space(spec.name, space, fit_data.X_train.shape[1])  # DP-EBM's rounds by its features
    grid, n_trials = tuning.exhaustive_grid(space, cfg["n_trials"]), tuning.study_trials(spec, cfg)
    sampler = optuna.samplers.TPESampler(seed=entropy % 2**32, constant_liar=True, n_startup_trials=N_STARTUP)
    path = journal(storage_dir, run)
    if path.name == f"{key}.log":  # an older dpbench's journal (its study named by the key): renamed
        path = path.rename(path.with_name(f"{study_name(run)}.log"))
    storage = _storage(path)
    name = next(iter(optuna.get_all_study_names(storage)), study_name(run))
    study = optuna.create_study(study_name=name, storage=storage, sampler=sampler,
                                direction="minimize" if lower else "maximize", load_if_exists=True)
    if "identity" not in study.user_attrs:
        study.set_user_attr("identity", study_identity(run))
    shared = (SharedData(fit_data.X_train, fit_data.y_train), SharedData(fit_data.X_test))  # one unit: the study's
    if study.user_attrs.get("code") != code_identity():
        _check_best_trial(study, run, fit_data, column, lower, shared, path)
        study.set_user_attr("code", code_identity())
    for point in itertools.product(*grid.values()) if grid else ():  # queued once, asked before any sampling
        study.enqueue_trial(dict(zip(grid, point, strict=True)), skip_if_exists=True)
    while len(_finished(study)) < n_trials and not stop():
        trials = [study.ask() for _ in range(ask_size(len(_finished(study)), n_trials, cfg["batch_trials"]))]
        param_sets = [{n: tuning.suggest(t, n, r) for n, r in space.items()} for t in trials]
        scores = _score_trials(run, fit_data, param_sets, cfg["seeds"], column, shared)
        for trial, value in zip(trials, scores, strict=True):
            if math.isfinite(value):
                study.tell(trial, value)
            else:
                study.tell(trial, state=TrialState.FAIL)
    considered = _finished(study)[:n_trials]
    complete = [t for t in considered if t.state == TrialState.COMPLETE]
    if not complete:
        return StudyResult({}, math.nan, len(considered), error=f"no successful trial among {len(considered)}")
    best = (min if lower else max)(complete, key=lambda t: t.value)
    return StudyResult(dict(best.params), float(best.value), len(considered))
