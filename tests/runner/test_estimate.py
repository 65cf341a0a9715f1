"""The sweep's time estimate (runner.estimate, runner.cost_model, runner.calibration): its structure, with
calibration timings injected (a fake machine whose costs follow the documented model), never its speed."""

import dataclasses
import math
import re
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from dpbench import results
from dpbench.config import RunnerConfig
from dpbench.data import load_dataset
from dpbench.runner import calibration, cost_model, estimate, fitting, sweep
from dpbench.runner.grid import chunk_units, expand, group_units
from dpbench.runner.sweep import run_sweep
from dpbench.tuning import spaces

TRUE = (2e-3, 1e-3, 1e-5, 1e-6, 1e-8, 1e-9)  # the fake machine's c0..c5 (cost_model's docstring)


def fake_timer(fn, point: calibration.Point) -> float:
    """CPU seconds of a calibration point on the fake machine (fn is not run)."""
    c0, c1, c2, c3, c4, c5 = TRUE
    k, r, n = point.runs, point.rounds, point.rows
    return c0 + c1 * k + c2 * k * r + n * (c3 + c4 * r + c5 * k * r)


def model(n: float, q: float, rounds: list[float]) -> float:
    """The documented cost of one batch group on the fake machine."""
    c0, c1, c2, c3, c4, c5 = TRUE
    per_run = math.sqrt(q) * (c1 * len(rounds) + c2 * sum(rounds))
    return c0 + per_run + n * q * (c3 + c4 * max(rounds) + c5 * sum(rounds))


def synthetic(n: int, d: int = 5) -> dict:
    return {"name": "synthetic", "outlier": "none", "n_train": n, "n_test": n // 4, "d": d}


DATASETS = (synthetic(2000), synthetic(8000), synthetic(2000, 10))


def grid(algorithms=("boosted_adassp",), datasets=DATASETS, **kw):
    exp = {"name": "est", "algorithms": list(algorithms), "datasets": list(datasets), "epsilons": [1.0],
           "deltas": [1e-6], "seeds": [0, 1], "tuning_mode": "fixed", "split": "fixed", **kw}
    return expand(exp)


def dry_run(runs, runner, data_dir, **kw) -> estimate.Estimate:
    """The dry run's estimate of sweeping `runs`, cut into the runner's chunks."""
    return estimate.estimate(runs, chunk_units(group_units(runs), runner.chunk_runs), runner, data_dir, **kw)


def load(n: float, d: int) -> float:
    return cost_model.LOAD_PER_CELL * n * d * 1.25


def test_calibration_recovers_the_machine_and_chunks_scale_with_n_times_d():
    runs = grid()
    costs = calibration.calibrate(runs, None, timer=fake_timer, share=1.0)
    assert costs.calibrated_on == "synthetic_none_p0.05_n2000_d5" and costs.d0 == 5  # median d, then smallest
    (setting,) = costs.settings.values()
    assert setting.key is not None and setting.has_rounds  # batched, with rounds
    assert setting.model.c == pytest.approx(TRUE, rel=1e-6, abs=1e-12)  # 8 exact points, 6 unknowns
    for chunk in chunk_units(group_units(runs), 32):
        n, d = chunk.dataset["n_train"], chunk.dataset["d"]
        # one batch group: the unit's runs (one here: one epsilon; synthetic data is drawn per seed)
        expected = model(n, d / 5, [100.0] * len(chunk.runs)) + load(n, d)
        assert costs.chunk(chunk) == pytest.approx(expected, rel=1e-6)


def test_an_algorithm_without_batching_costs_each_run_alone():
    runs = grid(algorithms=[{"name": "tukey", "params": {"n_models": 50}}], seeds=[0], epsilons=[0.5, 1.0])
    costs = calibration.calibrate(runs, None, timer=fake_timer, share=1.0)
    (setting,) = costs.settings.values()
    assert setting.key is None and not setting.has_rounds
    for chunk in chunk_units(group_units(runs), 32):
        n, d = chunk.dataset["n_train"], chunk.dataset["d"]
        one = setting.model.seconds(n, d, [1.0])  # a fit alone (its fixed part's split is not identified)
        assert costs.chunk(chunk) == pytest.approx(2 * one + load(n, d), rel=1e-9)
        if d == 5:  # at the calibration set's d: the fake machine's fit of one run
            assert one == pytest.approx(fake_timer(None, calibration.Point(n, 1, 1)), rel=1e-6)


def study_cpu(costs, run) -> float:
    seconds, trials = costs.study(run)
    n, d = run.dataset["n_train"], run.dataset["d"]
    return seconds - load(n, d)


def test_a_study_costs_trials_times_seeds_fits_and_tuned_rounds_are_the_spaces():
    def study(trials: int, seeds: int, algorithm="tukey"):
        tuning = {"n_trials": trials, "seeds": seeds, "batch_trials": 4}
        runs = grid(algorithms=[{"name": algorithm, "modes": ["tuned"]}], datasets=[synthetic(4000)], seeds=[0],
                    tuning=tuning)
        return study_cpu(calibration.calibrate(runs, None, timer=fake_timer, share=1.0), runs[0])

    alone = study(4, 1)
    assert study(4, 2) == pytest.approx(2 * alone, rel=1e-9)  # TukeyEM's fits are not batched
    assert study(8, 2) == pytest.approx(4 * alone, rel=1e-9)
    assert study(8, 1, "boosted_adassp") == pytest.approx(2 * study(4, 1, "boosted_adassp"), rel=1e-9)
    # a batch of trials: its rounds are the expected order statistics of the tuning range's draws
    space = {"type": "int", "low": 1, "high": 4000, "log": True}
    ordered = cost_model.expected_rounds(space, 4)
    assert ordered == sorted(ordered) and len(set(ordered)) == 4
    mean = cost_model.expected_rounds(space, 1)[0]
    # 4096 draws, log-uniform on [0.5, 4000.5] as Optuna samples (then rounded): mean 4000 / log(8001), sd 832
    assert mean == pytest.approx(4000 / math.log(8001), abs=4 * 832 / 64)
    assert sum(ordered) / 4 == pytest.approx(4000 / math.log(8001), abs=4 * 832 / 128)  # 4 x 4096 draws
    n_fit = 0.8 * 4000
    expected = model(n_fit, 1.0, ordered)  # one batch of 4 trials x 1 seed (the space's other values: no cost)
    assert study(4, 1, "boosted_adassp") == pytest.approx(expected, rel=1e-6)


def test_a_resumed_study_is_estimated_by_its_trials_left(tmp_path):
    """Finished trials are reused: the estimate and the dry run count only the rest (a resumed default-tuning
    sweep was estimated at its whole 7 h when an hour was left)."""
    from dpbench.tuning.study import study_key

    tuning = {"n_trials": 8, "seeds": 1, "batch_trials": 4}
    (run,) = grid(algorithms=[{"name": "tukey", "modes": ["tuned"]}], datasets=[synthetic(4000)], seeds=[0],
                  tuning=tuning)
    runner = RunnerConfig(n_jobs=1, progress=False)

    def tuning_seconds(studies_dir):
        found = dry_run([run], runner, None, startup=0.0, timer=fake_timer, share=1.0,
                                   studies_dir=studies_dir)
        return found.parts["tuning"]

    whole = tuning_seconds(None)
    fits = study_cpu(calibration.calibrate([run], None, timer=fake_timer, share=1.0), run)  # all 8 trials' fits
    assert cost_model.trials_left(run, tmp_path) == 1 and tuning_seconds(tmp_path) == whole  # no journal yet
    (tmp_path / f"{study_key(run)}.log").write_text('{"op_code":6,"datetime_complete":"x"}\n' * 6)
    assert cost_model.trials_left(run, tmp_path) == 0.25  # 6 of 8 trials finished
    assert tuning_seconds(tmp_path) == pytest.approx(whole - 0.75 * fits, rel=1e-9)  # the data is still loaded


def test_a_study_an_earlier_sweep_runs_is_not_counted_again(tmp_path):
    """`reproduce` plans every part before any runs: a study that an earlier part runs (Figs 1-5 share
    BoostedAdaSSP's) costs a later part what a finished one does (it was counted up to 5 times); a later part that
    asks for more trials of it (the key leaves n_trials out: a study can be extended) counts the rest."""
    from dpbench.tuning.study import study_key

    (run,) = grid(algorithms=[{"name": "tukey", "modes": ["tuned"]}], datasets=[synthetic(4000)], seeds=[0],
                  tuning={"n_trials": 8, "seeds": 1, "batch_trials": 4})
    runner = RunnerConfig(n_jobs=1, progress=False)

    def tuning_seconds(**kw):
        return dry_run([run], runner, None, startup=1.0, timer=fake_timer, share=1.0, **kw).parts["tuning"]

    (tmp_path / f"{study_key(run)}.log").write_text('{"op_code":6,"datetime_complete":"x"}\n' * 8)
    finished = tuning_seconds(studies_dir=tmp_path)
    assert tuning_seconds(done_studies={study_key(run): 8}) == finished < tuning_seconds()
    assert tuning_seconds(done_studies={"another study": 8}) == tuning_seconds()
    (tmp_path / f"{study_key(run)}.log").write_text('{"op_code":6,"datetime_complete":"x"}\n' * 6)
    six_of_eight = tuning_seconds(studies_dir=tmp_path)
    assert finished < six_of_eight < tuning_seconds()
    assert tuning_seconds(done_studies={study_key(run): 6}) == six_of_eight


def test_a_resumed_study_costs_its_trials_left_at_the_rounds_tpe_chose(tmp_path):
    """TPE moves where the validation score is best (the DP-EBM classifier's studies: about 3x the range's mean
    rounds), so a resumed study's trials left cost the mean rounds of its finished trials past the random start,
    over the range's mean; the random ones (the first N_STARTUP), a trial not finished and a study without a
    journal leave the range's."""
    import json

    from dpbench.tuning.study import N_STARTUP, study_key

    (run,) = grid(algorithms=[{"name": "boosted_adassp", "modes": ["tuned"]}], datasets=[synthetic(4000)],
                  seeds=[0], tuning={"n_trials": 16, "seeds": 1, "batch_trials": 4})
    costs = calibration.calibrate([run], None, timer=fake_timer, share=1.0)
    space = cost_model.searched_rounds(run)
    assert cost_model.rounds_scale(run, tmp_path) == 1.0 and cost_model.rounds_scale(run, None) == 1.0

    def param(trial, value):
        return json.dumps({"op_code": 5, "trial_id": trial, "param_name": "n_rounds", "param_value_internal": value})

    lines = [param(t, 4000.0 if t < N_STARTUP else 50.0 * (2 * (t - N_STARTUP) + 1)) for t in range(N_STARTUP + 3)]
    lines += [json.dumps({"op_code": 6, "trial_id": t, "datetime_complete": "x"}) for t in range(N_STARTUP + 2)]
    lines.append('{"op_code":6,"trial_id":' + str(N_STARTUP + 2) + ',"datetime_complete":"2026-')  # being written
    (tmp_path / f"{study_key(run)}.log").write_text("\n".join(lines))  # trial N_STARTUP + 2 still running
    scale = cost_model.rounds_scale(run, tmp_path)
    assert scale == pytest.approx(100 / cost_model.expected_rounds(space, 1)[0])  # (50 + 150) / 2 over the mean
    n_fit = 0.8 * 4000
    batch = [min(space["high"], scale * r) for r in cost_model.expected_rounds(space, 4)]
    assert costs.study(run, 0.25, scale)[0] - load(4000, 5) == pytest.approx(0.25 * 4 * model(n_fit, 1.0, batch))
    fixed = dataclasses.replace(run, tuning_mode="fixed")
    assert cost_model.rounds_scale(fixed, tmp_path) == 1.0


def test_the_estimate_divides_among_workers_and_is_stable_given_the_timings():
    runs = grid(datasets=[synthetic(4000)], seeds=[0, 1, 2, 3])  # 4 equal units (synthetic: one per seed)

    def fits(n_jobs: int) -> float:
        runner = RunnerConfig(n_jobs=n_jobs, backend="loky", progress=False)
        return dry_run(runs, runner, None, startup=0.0, timer=fake_timer, share=1.0).parts["fits"]

    assert fits(2) == pytest.approx(fits(1) / 2, rel=1e-9)
    assert fits(4) == pytest.approx(fits(1) / 4, rel=1e-9)
    runner = RunnerConfig(n_jobs=2, progress=True)
    first, second = (dry_run(runs, runner, None, startup=2.0, timer=fake_timer, share=0.5)
                     for _ in range(2))
    assert first.cpu == second.cpu
    assert {k: v for k, v in first.parts.items() if k != "calibration"} == {
        k: v for k, v in second.parts.items() if k != "calibration"}  # the calibration's own time is measured
    assert first.parts["start-up"] == 2.0 and first.parts["figure"] == cost_model.FIGURE * 2.0
    assert "time estimate: ~" in first.describe()
    threads = dry_run(runs, RunnerConfig(n_jobs=2, backend="threading"), None, startup=2.0,
                                 timer=fake_timer, share=0.5)
    assert threads.parts["workers' start-up"] == 0 < first.parts["workers' start-up"]  # no worker processes
    assert threads.parts["fits"] == first.parts["fits"]


def test_size_and_which_sweeps_calibrate(monkeypatch):
    fixed = grid(datasets=[synthetic(4000)], seeds=[0, 1])  # 2 units of 1 run, 100 rounds
    (unit, _) = group_units(fixed)
    assert cost_model.size(unit) == 4000 * 5 * 100
    tuning = {"n_trials": 8, "seeds": 3, "batch_trials": 4}
    (tuned,) = grid(algorithms=[{"name": "boosted_adassp", "modes": ["tuned"]}], datasets=[synthetic(4000)],
                    seeds=[0], tuning=tuning)
    space = cost_model.searched_rounds(tuned)
    assert space == {"type": "int", "low": 1, "high": 4000, "log": True}  # Table I's
    assert cost_model.size(tuned) == pytest.approx(4000 * 5 * cost_model.expected_rounds(space, 1)[0] * 8 * 3)
    # DP-EBM's study rounds are capped by the features (tuning.spaces.bounded_space): 160,000 / 1000
    (ebm,) = grid(algorithms=[{"name": "dp_ebm", "modes": ["tuned"]}], datasets=[synthetic(4000, 1000)], seeds=[0],
                  tuning=tuning)
    assert cost_model.searched_rounds(ebm)["high"] == spaces.DP_EBM_TERM_UPDATES // 1000
    # a privately selected run's candidates draw their rounds from the same capped range: it costs its mean, and its
    # calibration pins the candidates' rounds (drawn, they would follow the calibration data's cap)
    (selected,) = grid(algorithms=[{"name": "dp_ebm", "modes": ["private_selection"]}],
                       datasets=[synthetic(4000, 1000)], seeds=[0])
    assert cost_model.searched_rounds(selected) == cost_model.searched_rounds(ebm)
    assert cost_model.run_rounds(selected) == cost_model.expected_rounds(cost_model.searched_rounds(ebm), 1)[0]
    calibrating = calibration._calibration_runs(cost_model.Setting(selected), 2, 16)
    assert [r.params["n_rounds"] for r in calibrating] == [16, 16]
    assert all("n_rounds" in r.tuning["pinned"] and r.tuning_mode == "private_selection" for r in calibrating)
    data = SimpleNamespace(X_train=np.zeros((10, 1000)), feature_types=["numeric"] * 1000)
    est = fitting.make_estimator(calibrating[0], data)
    assert "n_rounds" not in est.space and est.base_params["n_rounds"] == 16
    runner = RunnerConfig(n_jobs=2)
    assert not calibration.worth_calibrating(fixed, runner)  # 4e6 cells: far too small
    # the threshold: one setting's calibration at CALIBRATION_SHARE of 4e6 cells' seconds on 2 workers
    cells_seconds = (calibration.SECONDS_PER_SETTING + calibration.PROBE_SECONDS) / calibration.CALIBRATION_SHARE * 2
    monkeypatch.setattr(calibration, "SECONDS_PER_CELL", cells_seconds / 4e6)
    assert calibration.worth_calibrating(fixed, runner)
    assert not calibration.worth_calibrating(fixed, RunnerConfig(n_jobs=4))
    assert not calibration.worth_calibrating(fixed, RunnerConfig(n_jobs=2, progress=False))


def test_a_chunk_whose_data_is_missing_goes_last(tmp_path, monkeypatch):
    """It only records missing_data, at once: sized 0, whatever rows the paper gives its dataset (a sweep that
    started with the mirror's missing large tasks left its longest real unit to start late)."""
    from dpbench.data import openml_source

    monkeypatch.setattr(openml_source, "cache_dir", lambda: tmp_path / "empty-openml-cache")
    runs = grid(datasets=[synthetic(2000), {"name": "openml_361091"}], seeds=[0])  # year: 463,715 rows in paper
    plan = estimate.estimate(runs, chunk_units(group_units(runs), 32), RunnerConfig(progress=False), str(tmp_path))
    assert not plan.calibrated and [c.dataset["name"] for c in plan.chunks] == ["synthetic", "openml_361091"]
    present, missing = plan.chunks
    assert plan.chunk_estimates == [cost_model.size(present), 0] and cost_model.size(missing) > 0
    assert plan.chunk_work() == [1, 1]  # uncalibrated: the bar counts runs


def test_schedule_longest_unit_first_and_makespan():
    tasks = [("a", 1.0), ("b", 5.0), ("a", 3.0), ("c", 2.0)]
    order = cost_model.longest_first(tasks, lambda t: t[0], lambda t: t[1])
    assert order == [("b", 5.0), ("a", 3.0), ("a", 1.0), ("c", 2.0)]  # a's 4 s before c's 2; a unit together
    assert cost_model.makespan([5, 3, 1, 2], 2) == 6  # 5 | 3 + 1 + 2
    assert cost_model.makespan([1, 2, 3], 1) == 6
    assert estimate.announcement("fig4", "x", 121.0) == "fig4: x, ~2.0 min estimated"
    assert estimate.announcement("fig4", "x", 119.0) is None


def test_the_sweep_announces_long_tasks_longest_unit_first_and_results_do_not_move(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(estimate, "LONG_SECONDS", -1.0)  # announce every task
    monkeypatch.setattr(calibration, "SECONDS_PER_CELL", 1.0)  # every grid worth calibrating
    monkeypatch.setattr(calibration, "median_cpu_seconds", fake_timer)
    exp = {"name": "est", "algorithms": [{"name": "boosted_adassp", "params": {"n_rounds": 5}}, "adassp"],
           "datasets": [synthetic(400), synthetic(1600)], "epsilons": [0.5, 1.0], "deltas": [1e-6], "seeds": [0],
           "tuning_mode": "fixed", "split": "fixed"}
    runner = {"backend": "sequential", "n_jobs": 1, "part_size": 3}
    plans, calls = [], calibrations(monkeypatch)
    monkeypatch.setattr(sweep, "estimate", lambda *a, **kw: plans.append(estimate.estimate(*a, **kw)) or plans[-1])
    run_sweep(exp, {**runner, "progress": True}, tmp_path / "on")
    assert len(plans) == len(calls) == 1 and plans[0].calibrated  # one estimate, asked up front, calibrated once
    lines = [line for line in capsys.readouterr().err.splitlines() if line.endswith("estimated")]
    assert [line.split(" on ")[1].split(" (")[0] for line in lines] == ["synthetic_none_p0.05_n1600_d5",
                                                                         "synthetic_none_p0.05_n400_d5"]
    run_sweep(exp, {**runner, "progress": False}, tmp_path / "off")
    assert "estimated" not in capsys.readouterr().err
    on, off = (results.load(tmp_path / d).set_index("run_id").sort_index() for d in ("on", "off"))
    pd.testing.assert_series_equal(on["test_mse"], off["test_mse"])


def calibrations(monkeypatch) -> list:
    """The grids calibration.calibrate is called on (it still runs)."""
    called, real = [], calibration.calibrate
    monkeypatch.setattr(calibration, "calibrate",
                        lambda runs, *a, **kw: called.append(len(runs)) or real(runs, *a, **kw))
    return called


def test_a_small_sweep_does_not_calibrate_and_its_dry_run_does(tmp_path, monkeypatch, capsys):
    from dpbench.__main__ import main

    called = calibrations(monkeypatch)
    exp = {"name": "est", "algorithms": ["boosted_adassp", "adassp"], "datasets": [synthetic(400), synthetic(1600)],
           "epsilons": [1.0], "deltas": [1e-6], "seeds": [0], "tuning_mode": "fixed", "split": "fixed"}
    run_sweep(exp, {"backend": "sequential", "n_jobs": 1, "progress": True}, tmp_path / "sweep")
    assert called == [] and "estimated" not in capsys.readouterr().err
    monkeypatch.chdir(tmp_path)
    tiny = "datasets=[{name: synthetic, outlier: none, n_train: 400, n_test: 100, d: 3}]"
    assert main(["sweep", tiny, "seeds=[0]", "runner.n_jobs=1", "--dry-run"]) == 0
    assert called == [11] and "time estimate: ~" in capsys.readouterr().out  # the grid: its 11 runs
    assert not (tmp_path / "results").exists()


def test_the_dry_run_of_a_resumed_grid_counts_the_trial_fits_left(tmp_path, monkeypatch, capsys):
    """Studies are shared by what they tune: a grid whose runs are new but whose study has finished has no trial
    fits left to run."""
    from dpbench.__main__ import main

    monkeypatch.chdir(tmp_path)
    grid_args = ["datasets=[{name: synthetic, outlier: none, n_train: 400, n_test: 100, d: 3}]", "seeds=[0]",
                 "algorithms=[{name: adassp, modes: [tuned]}]", "epsilons=[1]", "tuning.n_trials=4",
                 "tuning.seeds=2", "runner.n_jobs=1", "runner.progress=false"]

    def trial_fits(name: str) -> tuple[int, int]:
        assert main(["sweep", "experiment=quickstart", f"name={name}", *grid_args, "--dry-run"]) == 0
        out = capsys.readouterr().out
        return tuple(map(int, re.search(r"(\d+) of their (\d+) trial fits to run", out).groups()))

    assert trial_fits("a") == (8, 8)
    assert main(["sweep", "experiment=quickstart", "name=a", *grid_args]) == 0
    capsys.readouterr()
    assert trial_fits("b") == (0, 8)  # another grid's runs on the same study: its trials are reused


def test_a_setting_is_timed_where_its_fits_run_to_the_end():
    """A fit that falls back stops early: timing it would time the fallback.  DP-ROBGD on 2000 Gaussian rows
    releases 'norm_histogram_empty' at eps 0.1 (on all its rows), so it is timed at CALIBRATION_EPSILON; and a
    setting with runs at eps 0.1 and 10 (one setting: epsilon is not in its key) is timed at the larger."""
    timed = []

    def recording_timer(fn, point):
        timed.append((point, fn()))
        return fake_timer(fn, point)

    runs = grid(algorithms=[{"name": "robgd", "params": {"n_rounds": 2}}], datasets=[synthetic(2000)],
                epsilons=[0.1], seeds=[0])
    data = load_dataset(runs[0].dataset, split_seed=runs[0].data_seed, split=runs[0].split)
    assert fitting.fit_one(runs[0], data)["status"] == "norm_histogram_empty"
    calibration.calibrate(runs, None, timer=recording_timer, share=1.0)
    statuses = [row["status"] for _, rows in timed for row in rows]
    assert timed and "norm_histogram_empty" not in statuses and "ok" in statuses
    spent = [row["spent_epsilon"] for _, rows in timed for row in rows]
    assert spent == pytest.approx([calibration.CALIBRATION_EPSILON] * len(spent))
    assert {p.rows for p, _ in timed} == {500, 2000}  # the data's rows (all its 2000) and a quarter of them

    timed.clear()
    runs = grid(algorithms=["boosted_adassp"], datasets=[synthetic(2000)], epsilons=[0.1, 10.0], seeds=[0])
    calibration.calibrate(runs, None, timer=recording_timer, share=1.0)
    spent = [row["spent_epsilon"] for _, rows in timed for row in rows]
    assert spent == pytest.approx([10.0] * len(spent))
