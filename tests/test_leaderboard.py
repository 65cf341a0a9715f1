"""The leaderboard's rank statistics against hand-computed examples and Demsar (2006)'s worked example."""

import math

import numpy as np
import pandas as pd
import pytest

from dpbench import leaderboard as lb

# 3 tasks x 3 entries: ranks [1, 2, 3], [2, 1, 3], [1.5, 1.5, 3] -> average ranks A 1.5, B 1.5, C 3
SMALL = pd.DataFrame([[1.0, 2.0, 3.0], [2.0, 1.0, 3.0], [1.0, 1.0, 3.0]], columns=["A", "B", "C"],
                     index=["t1", "t2", "t3"])


def test_average_ranks_share_ties():
    assert lb.ranks(SMALL).loc["t3"].tolist() == [1.5, 1.5, 3.0]
    assert lb.average_ranks(SMALL).to_dict() == {"A": 1.5, "B": 1.5, "C": 3.0}


def test_friedman_by_hand():
    """chi2 = 12 N / (k (k + 1)) (sum R^2 - k (k + 1)^2 / 4) = 3 (2.25 + 2.25 + 9 - 12) = 4.5;
    F = (N - 1) chi2 / (N (k - 1) - chi2) = 2 * 4.5 / (6 - 4.5) = 6."""
    out = lb.friedman(SMALL)
    assert out["chi2"] == pytest.approx(4.5) and out["f"] == pytest.approx(6.0)
    assert out["p_chi2"] == pytest.approx(math.exp(-4.5 / 2))  # chi-square with 2 dof: sf(x) = exp(-x / 2)
    assert out["p_f"] == pytest.approx((1 + 6.0 * 2 / 4) ** -2)  # F(2, 4): sf(f) = (1 + 2 f / 4)^(-2)


def test_demsar_worked_example():
    """Demsar (2006) Sec. 3.2.4: four methods on 14 data sets, average ranks 3.143, 2.000, 2.893, 1.964:
    chi2_F = 9.28, F_F = 3.69, CD at alpha 0.05 = 2.569 sqrt(4 5 / (6 14)) = 1.25."""
    r = np.array([3.143, 2.000, 2.893, 1.964])
    chi2 = 12 * 14 / (4 * 5) * (np.sum(r**2) - 4 * 25 / 4)
    assert chi2 == pytest.approx(9.28, abs=0.01)
    assert 13 * chi2 / (14 * 3 - chi2) == pytest.approx(3.69, abs=0.01)
    assert lb.nemenyi_cd(4, 14) == pytest.approx(1.25, abs=0.005)


@pytest.mark.parametrize("k, q", [(2, 1.960), (3, 2.343), (4, 2.569), (5, 2.728), (6, 2.850), (7, 2.949),
                                  (8, 3.031), (9, 3.102), (10, 3.164)])
def test_nemenyi_q_is_demsars_table_5(k, q):
    assert lb.nemenyi_cd(k, 6) / math.sqrt(k * (k + 1) / 36) == pytest.approx(q, abs=1e-3)


def test_cliques_join_entries_within_cd():
    assert lb.cliques(lb.average_ranks(SMALL), 1.0) == [["A", "B"]]
    assert lb.cliques(lb.average_ranks(SMALL), 1.6) == [["A", "B", "C"]]
    assert lb.cliques(pd.Series({"a": 1.0, "b": 1.8, "c": 2.6}), 1.0) == [["a", "b"], ["b", "c"]]
    assert lb.cliques(lb.average_ranks(SMALL), 0.0) == []


def test_win_rates_count_ties_half():
    w = lb.win_rates(SMALL)
    assert w.loc["A", "B"] == pytest.approx(0.5) and w.loc["A", "C"] == 1.0 and w.loc["C", "A"] == 0.0
    assert np.isnan(w.loc["A", "A"])
    off = ~np.eye(3, dtype=bool)
    np.testing.assert_allclose((w.to_numpy() + w.to_numpy().T)[off], 1.0)


def test_performance_profile_by_hand():
    prof = lb.performance_profile(SMALL, [1.0, 2.0, 3.0])
    assert prof["A"].tolist() == pytest.approx([2 / 3, 1, 1])
    assert prof["B"].tolist() == pytest.approx([2 / 3, 1, 1])
    assert prof["C"].tolist() == pytest.approx([0, 0, 1])
    zero = pd.DataFrame([[0.0, 0.0, 1.0]], columns=["A", "B", "C"])
    assert lb.performance_ratios(zero).iloc[0].tolist() == [1.0, 1.0, math.inf]


def test_complete_tasks_and_intervals():
    scores = SMALL.copy()
    scores.loc["t2", "C"] = np.nan
    assert list(lb.complete_tasks(scores).index) == ["t1", "t3"]
    mean, low, high = lb.mean_interval([1.0, 2.0, 3.0])
    assert mean == 2.0 and high - mean == pytest.approx(4.302652729911275 * 1.0 / math.sqrt(3))
    assert lb.mean_interval([5.0]) == (5.0, 5.0, 5.0)
    assert all(math.isnan(v) for v in lb.mean_interval([np.nan]))


def result_rows() -> pd.DataFrame:
    """Rows as a sweep writes them: 3 tasks x 2 seeds; C beats B beats A everywhere; one harness error."""
    rows = []
    for t, task in enumerate(["t1", "t2", "t3"]):
        for seed in (0, 1):
            for alg, base in (("A", 3.0), ("B", 2.0), ("C", 1.0)):
                rows.append({"algorithm": alg, "dataset": task, "task": "regression", "tuning_mode": "fixed",
                             "epsilon": 1.0, "seed": seed, "test_mse": base + t + 0.1 * seed, "status": "ok"})
    rows.append({"algorithm": "A", "dataset": "t1", "task": "regression", "tuning_mode": "fixed", "epsilon": 1.0,
                 "seed": 2, "test_mse": np.nan, "status": "error"})
    return pd.DataFrame(rows)


def test_boards_from_rows():
    errs, column = lb.errors(result_rows())
    assert column == "test_mse" and len(errs) == 18  # the harness error has no metric: left out
    cell = lb.cells(errs)
    assert len(cell) == 9 and (cell["seeds"] == 2).all()
    assert cell.loc[(cell["dataset"] == "t2") & (cell["entry"] == "B"), "error"].item() == pytest.approx(3.05)
    ranked, tests = lb.boards(cell)
    assert ranked["entry"].tolist() == ["C", "B", "A"] and ranked["average_rank"].tolist() == [1.0, 2.0, 3.0]
    assert ranked["won"].tolist() == [1.0, 0.0, 0.0]
    assert tests.iloc[0]["chi2"] == pytest.approx(6.0) and tests.iloc[0]["tasks_left_out"] == 0  # 3 (1 + 4 + 9 - 12)


def test_classification_error_is_one_minus_f1_and_losses_are_entries():
    df = pd.DataFrame({"algorithm": ["boosted_adassp_clf"] * 2 + ["dp_ebm_clf"],
                       "param_loss": ["logistic", "hinge", None], "dataset": "adult", "task": "classification",
                       "tuning_mode": "fixed", "epsilon": 1.0, "seed": 0, "test_f1": [0.75, 0.5, 0.25]})
    errs, column = lb.errors(df)
    assert column == "test_f1"
    # a task missing from the mirror gives rows without a task (nor metrics) wherever they come in the frame
    missing = pd.DataFrame({"algorithm": ["dp_ebm_clf"], "dataset": "creditcard", "task": [None],
                            "tuning_mode": "fixed", "epsilon": 1.0, "seed": 0, "test_f1": [np.nan]})
    assert lb.errors(pd.concat([missing, df], ignore_index=True))[0]["error"].tolist() == [0.25, 0.5, 0.75]
    assert errs["entry"].tolist() == ["boosted_adassp_clf:logistic", "boosted_adassp_clf:hinge", "dp_ebm_clf"]
    assert errs["error"].tolist() == [0.25, 0.5, 0.75]


def test_tuning_cost_and_rank_agreement():
    cell = pd.DataFrame({"tuning_mode": ["tuned", "tuned", "fixed", "fixed", "private_selection"],
                         "epsilon": 1.0, "dataset": ["t1", "t2", "t1", "t2", "t1"], "entry": "A",
                         "error": [1.0, 2.0, 4.0, 2.0, 0.5]})
    cost = lb.tuning_cost(cell).set_index("tuning_mode")
    assert cost.loc["fixed", "tasks"] == 2 and cost.loc["fixed", "geomean_ratio"] == pytest.approx(2.0)  # (4 * 1)^0.5
    assert cost.loc["fixed", "worse"] == 0.5
    assert cost.loc["private_selection", "geomean_ratio"] == pytest.approx(0.5)
    ranked = pd.DataFrame({"tuning_mode": ["tuned"] * 3 + ["fixed"] * 3, "epsilon": 1.0,
                           "entry": ["A", "B", "C", "C", "B", "A"], "average_rank": [1, 2, 3, 1, 2, 3]})
    assert lb.rank_agreement(ranked, "fixed").iloc[0]["kendall_tau"] == pytest.approx(-1.0)


# ----------------------------------------------------------------------------- the protocol's runs and the command
TINY = ["datasets=[{name: synthetic, n_train: 400, n_test: 200, d: 3}]", "epsilons=[1.0]", "seeds=[0]",
        "tuning.n_trials=2", "tuning.seeds=1", "tuning.n_candidates=2", "runner.n_jobs=1", "runner.progress=false"]


def test_adopt_takes_finished_runs_of_other_experiments_once(tmp_path):
    from dpbench import results
    from dpbench.runner.grid import expand

    exp = {"name": "leaderboard", "algorithms": [{"name": "adassp", "modes": ["fixed", "tuned"]}],
           "datasets": [{"name": "synthetic", "n_train": 50, "n_test": 20, "d": 2}], "epsilons": [1.0],
           "deltas": [1e-6], "seeds": [0, 1], "tuning_mode": "fixed", "split": "fixed"}
    runs = expand(exp)
    assert len(runs) == 4
    other = tmp_path / "ref" / "fig1"
    rows = [{"run_id": r.run_id, "experiment": "fig1", "algorithm": "adassp", "status": "ok", "test_mse": 1.0}
            for r in runs[:2]]
    rows.append({"run_id": runs[2].run_id, "experiment": "fig1", "algorithm": "adassp", "status": "error"})
    rows.append({"run_id": "not-in-the-grid", "experiment": "fig1", "algorithm": "adassp", "status": "ok"})
    results.write_part(rows, other, "a")
    here = tmp_path / "runs" / "leaderboard"
    assert lb.adopt(runs, here, tmp_path / "ref") == 2  # the harness error is retried, not adopted
    assert results.finished_run_ids(here) == {runs[0].run_id, runs[1].run_id}
    assert lb.adopt(runs, here, tmp_path / "ref") == 0  # once
    assert lb.adopt(runs, here, tmp_path / "nowhere") == 0


def test_leaderboard_command_runs_the_protocol_and_joins_the_reference(tmp_path, monkeypatch, capsys):
    """The reference board of one algorithm (ssp), then another (adassp) run alone through the protocol and ranked
    with it: every mode's rows, the board's files, both entries on the joined board, the reference's runs not
    re-run."""
    from dpbench import results
    from dpbench.cli import main

    monkeypatch.chdir(tmp_path)
    ref = tmp_path / "ref"
    assert main(["leaderboard", "--task", "regression", "--results-dir", str(ref), "--reference",
                 str(tmp_path / "none"), "algorithms=[{name: ssp, modes: [fixed, private_selection, tuned]}]",
                 *TINY]) == 0
    board = ref / "leaderboard" / "board"
    assert {p.name for p in board.iterdir()} >= {"boards.csv", "tests.csv", "cells.csv", "tuning_cost.csv",
                                                 "rank_agreement.csv", "cd.png", "win_rates.png", "profiles.png"}
    assert main(["leaderboard", "--algorithm", "adassp", "--results-dir", str(tmp_path / "mine"), "--reference",
                 str(ref), *TINY]) == 0
    mine = results.load(tmp_path / "mine" / "leaderboard-adassp")
    assert set(mine["algorithm"]) == {"adassp"}
    assert_the_protocol_spends_the_budget(mine)
    assert set(mine["tuning_mode"]) == {"fixed", "private_selection", "tuned"}
    joined = pd.read_csv(tmp_path / "mine" / "leaderboard-adassp" / "board" / "boards.csv")
    assert set(joined["entry"]) == {"adassp", "ssp"} and set(joined["tuning_mode"]) == set(lb.MODES)
    tuned = joined[joined["tuning_mode"] == "tuned"]
    assert (tuned["tasks"] == 1).all()
    assert "adassp" in capsys.readouterr().out


def test_leaderboard_command_bad_input_is_one_line(capsys):
    from dpbench.cli import main

    assert main(["leaderboard", "--algorithm", "no_such_algorithm"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no_such_algorithm" in err[0]


# ----------------------------------------------------------------------------- the board read back: report, README
# Three entries on three synthetic tasks at two epsilons, 2 seeds; each entry's error in a mode is its BASE times a
# task factor times a seed factor, so every cost ratio is exactly a ratio of BASEs: AdaSSP 1.3 (private selection)
# and 2 (fixed), SSP 4.1 and 2, DP-GD 1.1 and 0.5.  Tuned order AdaSSP, SSP, DP-GD; privately selected AdaSSP,
# DP-GD, SSP (Kendall tau 1/3).
BASE = {"adassp": {"tuned": 1.0, "private_selection": 1.3, "fixed": 2.0},
        "ssp": {"tuned": 1.5, "private_selection": 6.15, "fixed": 3.0},
        "dpgd": {"tuned": 2.0, "private_selection": 2.2, "fixed": 1.0}}
GRID = {"name": "lbtest", "algorithms": [{"name": a, "modes": list(lb.MODES)} for a in BASE],
        "datasets": [{"name": "synthetic", "n_train": 50, "n_test": 20, "d": d} for d in (2, 3, 4)],
        "epsilons": [0.1, 1.0], "deltas": [1e-6], "seeds": [0, 1], "tuning_mode": "fixed", "split": "fixed"}


def sweep_with_board(out, drop=lambda run: False, grid=True, figures=False):
    """A sweep directory as `dpbench leaderboard` leaves it: its grid (config.json), its rows (less those `drop`
    picks) and its board (its figures only when asked: seconds)."""
    import json

    from dpbench import results
    from dpbench.data import dataset_label
    from dpbench.runner.grid import expand

    runs = expand(GRID)
    rows = [{"run_id": r.run_id, "algorithm": r.algorithm, "dataset": dataset_label(r.dataset), "task": "regression",
             "tuning_mode": r.tuning_mode, "epsilon": r.epsilon, "seed": r.seed, "status": "ok", "params": "{}",
             "git_dirty": False,
             "test_mse": BASE[r.algorithm][r.tuning_mode] * (1 + r.dataset["d"]) * (1 + 0.01 * r.seed)}
            for r in runs if not drop(r)]
    results.write_part(rows, out, "a")
    if grid:
        (out / "config.json").write_text(json.dumps(GRID))
    lb.write_board(pd.DataFrame(rows), out / lb.BOARD, figures=figures)
    return out


@pytest.fixture(scope="module")
def boards(tmp_path_factory):
    """A complete board and a partial one (no DP-GD at all, no SSP on the d = 4 task, one seed less of AdaSSP fixed
    at eps 1 on the d = 2 task), in one results directory."""
    root = tmp_path_factory.mktemp("results")
    sweep_with_board(root / "lbtest", figures=True)
    sweep_with_board(root / "lbpartial", lambda r: r.algorithm == "dpgd"
                     or (r.algorithm == "ssp" and r.dataset["d"] == 4)
                     or (r.algorithm == "adassp" and r.tuning_mode == "fixed" and r.epsilon == 1.0 and r.seed == 1
                         and r.dataset["d"] == 2))
    return root


def test_findings_read_the_boards_files(boards, tmp_path):
    import shutil

    board = lb.read_board(boards / "lbtest")
    assert board.gaps == [] and board.metric == "test MSE" and board.epsilons == [0.1, 1.0]
    said = lb.findings(board)
    assert said[0] == "This board is complete: every cell of the grid its sweep ran (config.json), with every seed."
    assert "the first place goes to AdaSSP at eps 0.1 (average rank 1.00 of 3 entries over 3 tasks, Friedman p < " \
           "0.001)" in said[1]  # ranks alike on every task: F infinite, p 0
    assert "test MSE over its non-privately tuned one is 1.1x (DP-GD) to 4.1x (SSP) at eps 0.1 and 1.1x (DP-GD) to " \
           "4.1x (SSP) at eps 1" in said[2]
    assert "is 0.50x (DP-GD) to 2.0x (SSP) at eps 0.1" in said[3]  # fixed: DP-GD's 0.5, AdaSSP's and SSP's 2
    assert "private selection is 0.33 at eps 0.1 and 0.33 at eps 1" in said[4]
    assert "the largest move is DP-GD's, 3rd non-privately tuned and 2nd privately selected" in said[4]
    # the numbers come from the files: another number in tuning_cost.csv, another sentence
    shutil.copytree(boards / "lbtest", tmp_path / "lbtest")
    cost_csv = tmp_path / "lbtest" / lb.BOARD / "tuning_cost.csv"
    cost = pd.read_csv(cost_csv)
    cost.loc[(cost["entry"] == "ssp") & (cost["tuning_mode"] == "private_selection"), "median_ratio"] = 7.7
    cost.to_csv(cost_csv, index=False)
    assert "to 7.7x (SSP) at eps 0.1" in lb.findings(lb.read_board(tmp_path / "lbtest"))[2]
    # a Friedman p at or above alpha: the first place is said to be not told apart
    tests_csv = tmp_path / "lbtest" / lb.BOARD / "tests.csv"
    tests = pd.read_csv(tests_csv)
    tests.loc[(tests["tuning_mode"] == "private_selection") & (tests["epsilon"] == 0.1), "p_f"] = 0.61
    tests.to_csv(tests_csv, index=False)
    said = lb.findings(lb.read_board(tmp_path / "lbtest"))[1]
    assert "(average rank 1.00 of 3 entries over 3 tasks, Friedman p = 0.61: the ranks are not told apart at alpha " \
           "0.05)" in said and said.count("not told apart") == 1  # eps 1's p is < 0.001


def test_tables_of_a_board(boards):
    board = lb.read_board(boards / "lbtest")
    ranks = lb.rank_table(board, 1.0).set_index("entry")
    assert list(ranks.index) == ["AdaSSP", "DP-GD", "SSP", "tasks / Friedman p / CD"]  # privately selected order
    # CD for 3 entries over 3 tasks: 1.91; ranks 1, 2, 3: AdaSSP and DP-GD share a clique, DP-GD and SSP another
    assert ranks.loc["AdaSSP", "Privately selected"] == "1.00 (a)"
    assert ranks.loc["DP-GD", "Privately selected"] == "2.00 (a, b)" and ranks.loc["SSP", "Non-privately tuned"] == \
        "2.00 (a, b)"
    assert lb.friedman(pd.DataFrame([[2, 3, 1]] * 3))["p_f"] == 0  # fixed: DP-GD, AdaSSP, SSP on every task
    assert ranks.loc["tasks / Friedman p / CD", "Fixed"] == f"3 / < 0.001 / {lb.nemenyi_cd(3, 3):.2f}"
    cost = lb.cost_table(board).set_index(["eps", "entry"])
    assert cost.loc[("1", "SSP"), "Privately selected / tuned"] == "4.1x (geo. mean 4.1x; worse on 3 of 3)"
    assert cost.loc[("1", "DP-GD"), "Fixed / tuned"] == "0.50x (geo. mean 0.50x; worse on 0 of 3)"
    summary = lb.summary_table(board).set_index("entry")
    assert summary.loc["SSP", "eps 1: rank (tuned)"] == "3.00 (2.00)" and summary.loc["SSP", "eps 1: cost"] == "4.1x"


def test_a_partial_board_says_what_it_lacks(boards, tmp_path):
    board = lb.read_board(boards / "lbpartial")
    assert board.gaps == ["no cell for 1 of the grid's 3 entries (DP-GD)",
                          "6 more of the grid's 54 cells missing (on 1 task: synthetic_label_p0.05_n50_d4)",
                          "1 cell with fewer seeds than the grid's 2"]
    assert lb.findings(board)[0] == f"This board is partial: {'; '.join(board.gaps)}."
    assert lb.rank_table(board, 1.0).iloc[-1]["Fixed"].startswith("2 (1 left out) / ")  # d = 4 lacks SSP
    sweep_with_board(tmp_path / "nogrid", grid=False)  # no grid known: never complete
    assert lb.read_board(tmp_path / "nogrid").gaps == ["its grid is unknown, so its completeness is not checked"]
    assert lb.read_board(tmp_path / "nowhere") is None


def test_a_task_whose_data_was_missing_is_said_so(tmp_path):
    """A task of the grid that is not in the data mirror has only missing_data rows: the board is partial, and says
    why (nothing of that task failed); a task with no rows at all is a plain gap."""
    from dpbench import results
    from dpbench.data import dataset_label
    from dpbench.runner.grid import expand

    out = sweep_with_board(tmp_path / "lbmissing", lambda r: r.dataset["d"] in (3, 4))
    absent = [r for r in expand(GRID) if r.dataset["d"] == 4]
    results.write_part([{"run_id": r.run_id, "algorithm": r.algorithm, "dataset": dataset_label(r.dataset),
                         "task": None, "tuning_mode": r.tuning_mode, "epsilon": r.epsilon, "seed": r.seed,
                         "status": "missing_data", "params": "{}", "git_dirty": False} for r in absent], out, "b")
    label = {d: dataset_label(GRID["datasets"][d - 2]) for d in (3, 4)}
    assert lb.read_board(out).gaps == [f"no cell for 1 of the grid's 3 tasks ({label[3]})",
                                       f"no cell for 1 of the grid's 3 tasks, their data missing when it ran "
                                       f"({label[4]})"]


def test_the_report_shows_each_board(boards, monkeypatch):
    """The report's section of a sweep with a board: the board's sentences, its rank tables, figures (files that
    are there) and the cost of tuning; a partial board says so in the contents and in bold."""
    import html

    from dpbench import reproduction

    monkeypatch.setattr(reproduction, "experiment_run_ids", dict)  # no shipped grid writes to these sweeps
    (boards / "lbtest" / "lbtest.png").write_bytes((boards / "lbtest" / lb.BOARD / "cd.png").read_bytes())
    html_path, md_path, secs = reproduction.write(boards)
    md, page = md_path.read_text(), html_path.read_text()
    assert "- [lbtest](#lbtest): no claims checked; complete board" in md
    assert "- [lbpartial](#lbpartial): no claims checked; partial board" in md
    complete = lb.read_board(boards / "lbtest")
    said = lb.findings(complete)
    assert f"**{said[0]}**" in md and " ".join(said[1:]) in md
    assert "### Leaderboard, ranked by test MSE" in md and "#### Average ranks at eps 0.1" in md
    assert reproduction.markdown_table(lb.rank_table(complete, 1.0)) in md
    assert reproduction.markdown_table(lb.cost_table(complete)) in md
    assert "lbtest/lbtest.png" not in md  # the sweep's own CD diagram: the board's replaces it
    for f in lb.FIGURES:
        assert f"[![lbtest](lbtest/board/{f})](lbtest/board/{f})" in md and (boards / "lbtest" / lb.BOARD / f).is_file()
        assert f"<img src='lbtest/board/{f}'" in page
    partial = lb.findings(lb.read_board(boards / "lbpartial"))[0]
    assert f"<p><strong>{html.escape(partial)}</strong></p>" in page and partial.startswith("This board is partial")


def test_readme_leaderboard_table_from_the_reference_board(boards, tmp_path, monkeypatch):
    from dpbench import reference, reproduction

    monkeypatch.setattr(reproduction, "experiment_run_ids", dict)  # no shipped grid writes to these sweeps

    absent = reference.leaderboard(tmp_path)
    for task, name in (("Regression", "leaderboard"), ("Classification", "leaderboard_clf")):
        assert f"*{task}: not run yet at the reference scale (no board in {tmp_path.as_posix()}/{name}/board/)" \
            in absent
    # a board published into the reference results (publish copies it), judged against the shipped protocol
    assert reference.publish(boards, tmp_path / "ref") == ["lbpartial", "lbtest"]
    assert sorted(p.name for p in (tmp_path / "ref" / "lbtest" / lb.BOARD).iterdir()) == \
        sorted([f"{t}.csv" for t in lb.TABLES] + list(lb.FIGURES))
    (tmp_path / "ref" / "lbtest").rename(tmp_path / "ref" / "leaderboard")
    text = reference.leaderboard(tmp_path / "ref")
    board = lb.read_board(tmp_path / "ref" / "leaderboard")
    # judged against experiment leaderboard's grid, the protocol: its synthetic tasks fill none of it
    runs, grid = lb.protocol_runs(tmp_path / "ref" / "leaderboard")
    assert grid == "experiment leaderboard's grid" and board.grid == grid
    GRID_TASKS = sorted(set(lb.grid_cells(runs)["dataset"]))  # noqa: N806
    assert board.gaps[:2] == ["no cell for 8 of the grid's 8 entries (AdaSSP, BoostedAdaSSP, DP-AMBSSGD, DP-EBM, "
                              "DP-GD, DP-ROBGD and 2 more)", f"no cell for {len(GRID_TASKS)} of the grid's "
                              f"{len(GRID_TASKS)} tasks ({', '.join(GRID_TASKS[:6])} and {len(GRID_TASKS) - 6} more)"]
    assert f"**Regression, ranked by test MSE.** {' '.join(lb.findings(board))}" in text
    assert reproduction.markdown_table(lb.summary_table(board)) in text
    assert "| AdaSSP | 1.00 (1.00) | 1.3x | 1.00 (1.00) | 1.3x |" in text
    assert "*Classification: not run yet at the reference scale" in text


def assert_the_protocol_spends_the_budget(rows: pd.DataFrame) -> None:
    """Every private row's ledger spends at most its (eps, delta), and a privately selected one exactly: the
    selection's vote is charged to the same budget as its candidates (not on top of it)."""
    spent = rows[rows["spent_epsilon"].notna()]
    assert len(spent) and (spent["spent_epsilon"] <= spent["epsilon"] * (1 + 1e-9)).all()
    assert (spent["spent_delta"] <= spent["delta"] * (1 + 1e-9)).all()
    selected = spent[spent["tuning_mode"] == "private_selection"]
    assert len(selected) and np.allclose(selected["spent_epsilon"], selected["epsilon"], rtol=1e-9)


@pytest.mark.parametrize("name", ["leaderboard", "leaderboard_clf"])
def test_the_reference_leaderboard_spends_each_runs_budget(name):
    from pathlib import Path

    from dpbench import results

    board = Path(__file__).parents[1] / "results" / "reference" / name
    if not (board / results.PARTS).is_dir():
        pytest.skip("no reference leaderboard")
    rows = results.load(board)
    assert set(rows["tuning_mode"]) == set(lb.MODES)
    assert_the_protocol_spends_the_budget(rows)
