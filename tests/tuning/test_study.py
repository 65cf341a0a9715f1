"""Tuned mode: Optuna studies on a validation split of the training part, persisted, resumed, reused."""

import dataclasses
import json
import math
import time

import numpy as np
import pytest

from dpbench import algorithms, results, tuning
from dpbench.data import load_dataset
from dpbench.runner.grid import expand
from dpbench.runner.sweep import run_sweep
from dpbench.tuning.spaces import tuning_space
from dpbench.tuning.study import _finished, _storage, finished_trials, run_study, study_key, validation_split
from dpbench.tuning.study import journal as journal_of
from dpbench.tuning.study import study_name as name_of

DATA = {"name": "synthetic", "outlier": "none", "n_train": 1500, "n_test": 300, "d": 4}
RUNNER = {"n_jobs": 1, "backend": "sequential", "progress": False}


def _exp(name="t", modes=("tuned",), algorithm="adassp", n_trials=6, **tuning_cfg):
    return {"name": name, "algorithms": [{"name": algorithm, "modes": list(modes)}], "datasets": [DATA],
            "epsilons": [1.0], "deltas": [1e-6], "seeds": [0, 1], "tuning_mode": "fixed", "split": "fixed",
            "tuning": {"n_trials": n_trials, "seeds": 2, "batch_trials": 3, **tuning_cfg}}


def _tuned_run(**kw):
    return next(r for r in expand(_exp(**kw)) if r.tuning_mode == "tuned")


def test_tuned_runs_carry_the_choice_and_fixed_runs_keep_their_ids(tmp_path):
    exp = _exp(modes=("fixed", "tuned"))
    runs = expand(exp)
    fixed = [r for r in runs if r.tuning_mode == "fixed"]
    assert fixed and "tuning" not in fixed[0].identity  # ids of fixed runs are those of earlier versions
    run_sweep(exp, RUNNER, tmp_path / "t")
    df = results.load(tmp_path / "t")
    tuned = df[df["tuning_mode"] == "tuned"]
    assert len(tuned) == 2 and (tuned["status"] == "ok").all()
    assert (tuned["tuning_trials"] == 6).all()
    space = tuning_space("adassp")
    for text in tuned["tuned_params"]:
        chosen = json.loads(text)
        assert set(chosen) == set(space)  # only what Table I tunes
        for name, value in chosen.items():
            assert space[name]["low"] <= value <= space[name]["high"]
    assert np.isfinite(tuned["validation_score"]).all()
    assert df[df["tuning_mode"] == "fixed"]["tuned_params"].isna().all()


def test_the_objective_never_sees_the_test_part(tmp_path):
    """The study's result is unchanged when the unit's test part is replaced by garbage."""
    run = _tuned_run()
    data = load_dataset(DATA, split_seed=run.data_seed)
    garbage = dataclasses.replace(data, X_test=np.full_like(data.X_test, np.nan), y_test=data.y_test * 0 + 1e9)
    a = run_study(run, data, tmp_path / "a")
    b = run_study(run, garbage, tmp_path / "b")
    assert a == b and a.error is None


def test_validation_split_is_a_partition_of_the_training_part():
    data = load_dataset(DATA, split_seed=0)
    part = validation_split(data, 0.2, seed=3)
    assert len(part.y_test) == round(0.2 * len(data.y_train))
    rows = {tuple(r) for r in np.column_stack([data.X_train, data.y_train])}
    fit = {tuple(r) for r in np.column_stack([part.X_train, part.y_train])}
    val = {tuple(r) for r in np.column_stack([part.X_test, part.y_test])}
    assert fit | val == rows and not fit & val


def test_a_study_resumes_extends_and_is_reused(tmp_path):
    import optuna

    run = _tuned_run(n_trials=3)
    data = load_dataset(DATA, split_seed=run.data_seed)
    calls = iter([False, True])  # stop after the first batch: an interrupted study
    run_study(run, data, tmp_path, stop=lambda: next(calls, True))
    storage = optuna.storages.JournalStorage(
        optuna.storages.journal.JournalFileBackend(str(journal_of(tmp_path, run))))
    study = optuna.load_study(study_name=None, storage=storage)
    first = [t.params for t in _finished(study)]
    assert len(first) == 3 and finished_trials(tmp_path, run) == 3  # the progress bar's count
    longer = dataclasses.replace(run, tuning={**run.tuning, "n_trials": 7})
    assert study_key(longer) == study_key(run) and longer.run_id != run.run_id
    res = run_study(longer, data, tmp_path)  # extends the same study
    study = optuna.load_study(study_name=None, storage=storage)
    done = _finished(study)
    assert [t.params for t in done[:3]] == first and len(done) == 7 and res.trials == 7
    assert finished_trials(tmp_path, run) == 7 and finished_trials(tmp_path / "elsewhere", run) == 0
    again = run_study(longer, data, tmp_path)  # finished: reused, no new trial
    assert again == res and len(_finished(optuna.load_study(study_name=None, storage=storage))) == 7
    short = run_study(run, data, tmp_path)  # n_trials = 3 chooses among the first 3 trials only
    best3 = min(t.value for t in done[:3] if t.value is not None)
    assert short.trials == 3 and math.isclose(short.validation_score, best3)


def test_a_studys_trials_share_one_batched_fit(monkeypatch):
    """BoostedAdaSSP's trials differ in clip bounds, rounds and schedule, yet the trials x seeds fits of one ask
    of the sampler are one fit_batch, and each trial scores what it scores fitted on its own."""
    from dpbench.tuning import study

    run = _tuned_run(algorithm="boosted_adassp")
    data = validation_split(load_dataset(DATA, split_seed=run.data_seed), 0.2, seed=0)
    param_sets = [{"x_bound": 0.5, "y_bound": 2.0, "n_rounds": 30, "lr_schedule": "constant"},
                  {"x_bound": 3.0, "y_bound": 0.3, "n_rounds": 7, "lr_schedule": "1/t"},
                  {"x_bound": 1e3, "y_bound": 5.0, "n_rounds": 18, "lr_schedule": "1/sqrt(t)"}]
    sizes, fit_group = [], study.fit_group
    monkeypatch.setattr(study, "fit_group", lambda ests, *args: sizes.append(len(ests)) or fit_group(ests, *args))
    batched = study._score_trials(run, data, param_sets, 2, "test_mse")
    assert sizes == [6]
    alone = [study._score_trials(run, data, [p], 2, "test_mse")[0] for p in param_sets]
    np.testing.assert_allclose(batched, alone, rtol=1e-9)


SSPGD_TRIALS = {"adassp": [{"x_bound": 0.5, "y_bound": 2.0}, {"x_bound": 3.0, "y_bound": 0.3},
                            {"x_bound": 1e3, "y_bound": 5.0}],
                 "dpgd": [{"grad_bound": 0.5, "n_rounds": 30, "lr_schedule": "constant"},
                          {"grad_bound": 3.0, "n_rounds": 7, "lr_schedule": "1/t"},
                          {"grad_bound": 1e3, "n_rounds": 18, "lr_schedule": "1/sqrt(t)"}]}


@pytest.mark.parametrize("algorithm", sorted(SSPGD_TRIALS))
def test_adassp_and_dpgd_trials_share_one_batched_fit(monkeypatch, algorithm):
    """AdaSSP's and DP-GD's trials (clip bounds, rounds, schedules differ) are one fit_batch too, and each
    run's coefficients and each trial's score equal those of the trial's own fits, one by one."""
    from dpbench.tuning import study

    run = _tuned_run(algorithm=algorithm)
    data = validation_split(load_dataset(DATA, split_seed=run.data_seed), 0.2, seed=0)
    param_sets = SSPGD_TRIALS[algorithm]
    sizes, fit_group, fitted = [], study.fit_group, []

    def spy(ests, *args):
        sizes.append(len(ests))
        fitted.extend(ests)
        return fit_group(ests, *args)

    monkeypatch.setattr(study, "fit_group", spy)
    batched = study._score_trials(run, data, param_sets, 2, "test_mse")
    assert sizes == [6]
    alone = [e.fit(data.X_train, data.y_train) for e in study.trial_estimators(run, data, param_sets, 2)]
    for a, b in zip(alone, fitted, strict=True):
        np.testing.assert_allclose(b.theta_, a.theta_, rtol=1e-9, atol=1e-12 * np.abs(a.theta_).max())
        assert b.privacy_ledger_.entries == a.privacy_ledger_.entries
    scores = [np.mean([np.mean((e.predict(data.X_test) - data.y_test) ** 2) for e in alone[2 * i:2 * i + 2]])
              for i in range(len(param_sets))]
    np.testing.assert_allclose(batched, scores, rtol=1e-9)


def test_a_rerun_of_a_tuned_sweep_fits_nothing(tmp_path):
    exp = _exp()
    first = run_sweep(exp, RUNNER, tmp_path / "t")
    logs = sorted((tmp_path / "t" / "tuning").glob("*.log"))
    sizes = [p.stat().st_size for p in logs]
    second = run_sweep(exp, RUNNER, tmp_path / "t")
    assert first["ran"] == 2 and second["ran"] == 0
    assert [p.stat().st_size for p in sorted((tmp_path / "t" / "tuning").glob("*.log"))] == sizes


def test_experiments_share_a_study_by_what_it_tunes(tmp_path):
    """Two experiments (Figs 1-5 style: other names, the same tuned algorithm, split, eps, delta and tuning
    settings) given one studies directory tune once: the second fits no trial and picks the same setting."""
    import optuna

    studies = tmp_path / "_studies"

    def trials() -> dict:
        return {p.stem: len(optuna.load_study(study_name=p.stem, storage=_storage(p)).trials)
                for p in sorted(studies.glob("*.log"))}

    run_sweep(_exp(name="fig_a"), RUNNER, tmp_path / "fig_a", studies_dir=studies)
    before = trials()
    run_sweep(_exp(name="fig_b"), RUNNER, tmp_path / "fig_b", studies_dir=studies)
    assert before and trials() == before and not (tmp_path / "fig_b" / "tuning").exists()
    a, b = results.load(tmp_path / "fig_a"), results.load(tmp_path / "fig_b")
    assert sorted(a["tuned_params"]) == sorted(b["tuned_params"]) and len(a) == len(b) == 2


def test_tuning_beats_a_bad_fixed_setting(tmp_path):
    """Fixed AdaSSP with clip bounds 1e-4 predicts ~0 (test MSE ~ var(y) ~ d); 12 trials over Table I's ranges
    find bounds within a few decades of the labels' scale, which at eps = 10 on 1,200 rows is far better."""
    exp = _exp(modes=("fixed", "tuned"), n_trials=12)
    exp["algorithms"] = [{"name": "adassp", "params": {"x_bound": 1e-4, "y_bound": 1e-4}, "modes": ["fixed"]},
                         {"name": "adassp", "modes": ["tuned"]}]  # what an entry sets, tuning leaves as set
    exp["epsilons"] = [10.0]
    run_sweep(exp, RUNNER, tmp_path / "t")
    df = results.load(tmp_path / "t")
    mse = df.pivot_table(index="seed", columns="tuning_mode", values="test_mse")
    assert (mse["tuned"] < 0.5 * mse["fixed"]).all(), mse


def test_settings_are_checked():
    assert tuning.settings(None)["n_trials"] == tuning.DEFAULTS["n_trials"]
    with pytest.raises(ValueError, match="tuning.seeds must be an integer >= 1"):
        tuning.settings({"seeds": 0})
    with pytest.raises(ValueError, match="unknown tuning key"):
        tuning.settings({"trials": 3})


def test_a_small_categorical_space_is_searched_exhaustively(tmp_path):
    """DP-XGBoost with its rounds pinned tunes the subsample over {0.2, 0.5, 0.8} (paper 001): each once."""
    data = {"name": "synthetic", "task": "classification", "n_train": 1500, "n_test": 300, "d": 3}
    exp = {**_exp(algorithm="dp_xgboost", n_trials=8), "datasets": [data]}
    exp["algorithms"] = [{"name": "dp_xgboost", "params": {"n_rounds": 3}, "modes": ["tuned"]}]
    run = expand(exp)[0]
    spec = algorithms.get_spec("dp_xgboost")
    assert tuning.search_space(spec, run.tuning).keys() == {"subsample"} and tuning.study_trials(spec, run.tuning) == 3
    res = run_study(run, load_dataset(data, split_seed=run.data_seed), tmp_path)
    assert res.trials == 3 and res.params["subsample"] in (0.2, 0.5, 0.8)
    import optuna

    storage = optuna.storages.JournalStorage(
        optuna.storages.journal.JournalFileBackend(str(journal_of(tmp_path, run))))
    trials = _finished(optuna.load_study(study_name=None, storage=storage))
    assert sorted(t.params["subsample"] for t in trials) == [0.2, 0.5, 0.8]
    assert tuning.study_trials(spec, {**run.tuning, "n_trials": 2}) == 2  # fewer trials than points: TPE


def test_the_random_startup_trials_are_asked_at_once(tmp_path, monkeypatch):
    """TPE draws its first N_STARTUP trials at random (12 when asked 4 at a time): asked at once, they are the
    same trials in one batched fit, and the study after them is the same study."""
    import optuna

    from dpbench.tuning import study

    assert [study.ask_size(done, 14, 4) for done in (0, 12)] == [12, 2]
    assert study.ask_size(0, 5, 4) == 5 and study.ask_size(0, 50, 16) == 16 and study.ask_size(8, 50, 4) == 4

    fit_group, sizes = study.fit_group, []
    monkeypatch.setattr(study, "fit_group", lambda ests, *args: sizes.append(len(ests)) or fit_group(ests, *args))
    run = _tuned_run(algorithm="boosted_adassp", n_trials=14, batch_trials=4, seeds=1)

    def trials(path):
        sizes.clear()
        run_study(run, load_dataset(DATA, split_seed=run.data_seed), path)
        storage = optuna.storages.JournalStorage(
            optuna.storages.journal.JournalFileBackend(str(journal_of(path, run))))
        return _finished(optuna.load_study(study_name=None, storage=storage))

    at_once = trials(tmp_path / "a")
    assert sizes == [12, 2]
    monkeypatch.setattr(study, "ask_size", lambda done, n, batch: min(batch, n - done))  # asks of 4 throughout
    before = trials(tmp_path / "b")
    assert sizes == [4, 4, 4, 2]
    assert [t.params for t in at_once] == [t.params for t in before]
    np.testing.assert_allclose([t.value for t in at_once], [t.value for t in before], rtol=1e-9)


def test_the_tuning_bar_counts_trials_while_studies_run(tmp_path, monkeypatch):
    """The tuning progress bar's total is every study's trials; a poller reads finished trials from the journals
    while studies run (a slow study moves the bar), and the bar ends at the total."""
    from dpbench.runner import sweep

    bars = []

    class Bar:
        """WorkBar's interface: the work done (`show`) and the counts beside it."""

        def __init__(self, total, desc="", progress=True, workers=0):
            self.total, self.desc, self.n, self.seen, self.text, self.texts = total, desc, 0, [], "", []
            self.disable = not progress
            bars.append(self)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def show(self, n, counts):
            self.n, self.text = n, counts
            self.seen.append(n)
            self.texts.append(counts)

    monkeypatch.setattr(sweep, "WorkBar", Bar)
    monkeypatch.setenv("DPBENCH_DATA_DIR", str(tmp_path / "no_mirror"))
    exp = {**_exp(n_trials=5), "epsilons": [1.0, 4.0], "seeds": [0]}  # two studies of 5 trials
    # and two on a dataset that is not here: they only record missing_data, and the bar leaves them out
    run_sweep({**exp, "datasets": [DATA, {"name": "openml_361072"}]}, {**RUNNER, "progress": True}, tmp_path / "t")
    tuning_bar = bars[0]  # uncalibrated (a small grid): its work is trials
    assert tuning_bar.total == 10 and tuning_bar.seen[-1] == 10 and tuning_bar.text == "10/10 trials, 2/2 studies"
    assert tuning_bar.seen == sorted(tuning_bar.seen)
    run_sweep(exp, {**RUNNER, "progress": True}, tmp_path / "u", studies_dir=tmp_path / "t" / "tuning")  # reused:
    resumed = [b for b in bars if b.desc.endswith("tuning")][1]
    assert resumed.seen[0] == 10 and bars[0].seen[0] == 0  # the bar starts at their trials
    assert resumed.texts[0] == "10/10 trials, 2/2 studies"  # and its finished studies, before their results return

    bar = Bar(total=7)
    (tmp_path / "j").mkdir()
    run = _tuned_run()
    with sweep._trials_progress(bar, {"k": run}, {"k": 7}, tmp_path / "j", {"k": 7}, every=0.01) as done:
        journal_of(tmp_path / "j", run).write_text('{"op_code":6,"datetime_complete":"x"}\n' * 3 + '{"op_code":4}\n')
        for _ in range(500):  # the poller sees the 3 finished trials (within 5 s)
            if bar.seen and bar.seen[-1] == 3:
                break
            time.sleep(0.01)
        assert bar.seen[-1] == 3
        done.add("k")
    assert bar.seen[-1] == 7  # a finished study counts whole


def test_dp_ebm_studies_search_rounds_by_its_features(tmp_path, monkeypatch):
    """DP-EBM's rounds are searched up to DP_EBM_TERM_UPDATES / features (Table I's 4000 up to 40 features):
    a study on 4 features keeps Table I's range, one on a capped budget asks no more rounds than the cap."""
    import optuna

    from dpbench.tuning import spaces

    table1 = spaces.tuning_space("dp_ebm")["n_rounds"]
    assert spaces.bounded_space("dp_ebm", spaces.tuning_space("dp_ebm"), 40)["n_rounds"] == table1
    assert spaces.bounded_space("dp_ebm_clf", spaces.tuning_space("dp_ebm_clf"), 735)["n_rounds"]["high"] == 217
    assert spaces.bounded_space("dp_ebm", {"n_rounds": table1}, 10**9)["n_rounds"]["high"] == 1  # the low end
    assert spaces.bounded_space("boosted_adassp", spaces.tuning_space("boosted_adassp"), 735)["n_rounds"] == table1
    monkeypatch.setattr(spaces, "DP_EBM_TERM_UPDATES", 12)  # 3 rounds on the 4 features of DATA
    run = _tuned_run(algorithm="dp_ebm", n_trials=4)
    run_study(run, load_dataset(DATA, split_seed=run.data_seed), tmp_path)
    storage = _storage(journal_of(tmp_path, run))
    rounds = [t.params["n_rounds"] for t in _finished(optuna.load_study(study_name=None, storage=storage))]
    assert len(rounds) == 4 and max(rounds) <= 3


def test_studies_are_findable_by_name_identity_and_row(tmp_path):
    """A journal is named by what it tunes (algorithm, dataset, eps, delta, then the key), holds the study's
    identity as a user attribute, and each tuned row names it; a journal named by the key alone (an older
    dpbench) is read as it is and renamed when its study next runs, its trials kept."""
    import optuna

    run_sweep({**_exp(n_trials=3), "seeds": [0]}, RUNNER, tmp_path / "t")  # generated data: a study per seed
    (path,) = (tmp_path / "t" / "tuning").glob("*.log")
    run = _tuned_run(n_trials=3)
    assert path.name == f"{name_of(run)}.log" and path.name.startswith("adassp__")
    assert "__eps1__delta1e-06__" in path.name and path.name.endswith(f"__{study_key(run)}.log")
    study = optuna.load_study(study_name=name_of(run), storage=_storage(path))
    assert study.user_attrs["identity"]["algorithm"] == "adassp" and study.user_attrs["identity"]["epsilon"] == 1.0
    assert set(results.load(tmp_path / "t")["study"]) == {name_of(run)}
    legacy = path.rename(path.with_name(f"{study_key(run)}.log"))
    assert journal_of(path.parent, run) == legacy and finished_trials(path.parent, run) == 3
    run_sweep({**_exp(name="u", n_trials=5), "seeds": [0]}, RUNNER, tmp_path / "t2", studies_dir=path.parent)
    assert not legacy.exists() and finished_trials(path.parent, _tuned_run(n_trials=5)) == 5


def test_a_journal_scored_by_other_code_is_checked_on_its_best_trial(tmp_path, monkeypatch):
    """A journal is reused by its study key, which holds nothing of the code: when other code last scored it, its
    best trial is scored again, and a score this code does not give stops the study (DP-EBM's label range once
    changed under unchanged keys and left its studies choosing on old scores)."""
    from dpbench.tuning import study as study_module

    run = _tuned_run(n_trials=4)
    data = load_dataset(DATA, split_seed=run.data_seed)
    first = run_study(run, data, tmp_path)
    path = journal_of(tmp_path, run)

    def codes() -> list:  # the journal's `code` attributes, in order
        return [op["user_attr"]["code"] for op in map(json.loads, path.read_text().splitlines())
                if "code" in op.get("user_attr", {})]

    assert codes() == [study_module.code_identity()]
    assert run_study(run, data, tmp_path) == first and codes() == [study_module.code_identity()]  # same code
    monkeypatch.setattr(study_module, "code_identity", lambda: "other commit")
    scored = []
    real = study_module._score_trials
    monkeypatch.setattr(study_module, "_score_trials", lambda *a, **k: scored.append(a[2]) or real(*a, **k))
    assert run_study(run, data, tmp_path) == first  # other code, same scores: reused, and now marked as its
    assert scored == [[first.params]] and codes()[-1] == "other commit"
    assert run_study(run, data, tmp_path) == first and len(scored) == 1  # checked once per code
    monkeypatch.setattr(study_module, "code_identity", lambda: "a third commit")
    monkeypatch.setattr(study_module, "_score_trials", lambda *a, **k: [v * 1.001 for v in real(*a, **k)])
    with pytest.raises(study_module.StaleStudyError, match=r"best trial .* in the journal, which other code scored"):
        run_study(run, data, tmp_path)


def test_a_sweep_on_a_stale_journal_fails_its_tuned_runs_with_the_journals_path(tmp_path):
    import shutil

    run_sweep(_exp(), RUNNER, tmp_path / "a")
    shutil.copytree(tmp_path / "a" / "tuning", tmp_path / "b" / "tuning")
    for log in (tmp_path / "b" / "tuning").glob("*.log"):  # as other code left it: other scores, another `code`
        ops = [json.loads(line) for line in log.read_text().splitlines()]
        for op in ops:
            op.update({"values": [2 * op["values"][0]]} if op.get("values") else {})
            op.update({"user_attr": {"code": "old"}} if "code" in op.get("user_attr", {}) else {})
        log.write_text("".join(json.dumps(op) + "\n" for op in ops))
    run_sweep(_exp(), RUNNER, tmp_path / "b")
    rows = results.load(tmp_path / "b")
    assert (rows["status"] == "error").all() and len(rows) == 2  # retried by the next run, once it is deleted
    assert rows["error"].str.contains(r"tuning failed: StaleStudyError: .*tuning/adassp__.*\.log: its best").all()
