"""The private leaderboard's statistics: ranks over tasks that a reviewer accepts (issue 40).

Every function takes `scores`, a (tasks x entries) DataFrame of one cell value each (the mean error over seeds
of an algorithm entry on a task; lower is better, so a classification score such as F1 enters as 1 - F1) with
complete rows: a task that lacks any entry is left out by `complete_tasks` before ranking, and the tables say
how many were.  The methods are Demsar's (JMLR 7, 2006), the standard for comparing k methods over N data sets:

- average ranks (ties share the mean of their ranks) and the Friedman test of "all entries rank alike", with
  Iman and Davenport's F statistic (less conservative than the chi-square; Demsar Sec. 3.2.2);
- Nemenyi's critical difference CD = q_alpha sqrt(k (k + 1) / (6 N)), q_alpha the studentized range quantile
  over sqrt 2: two entries whose average ranks differ by less than CD are not told apart at level alpha
  (Demsar Sec. 3.2.2, Table 5) -- the critical-difference diagram draws them joined;
- the win-rate matrix (share of tasks where the row's entry beats the column's, ties half);
- the performance profile (Dolan and More 2002): the share of tasks on which an entry's error is within a
  factor tau of the best entry's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats


def complete_tasks(scores: pd.DataFrame) -> pd.DataFrame:
    """The tasks (rows) on which every entry has a finite score."""
    return scores[np.isfinite(scores.to_numpy(dtype=float)).all(axis=1)]


def ranks(scores: pd.DataFrame) -> pd.DataFrame:
    """Each task's ranks of the entries, 1 = lowest error; ties share the mean of their ranks."""
    return scores.rank(axis=1, method="average")


def average_ranks(scores: pd.DataFrame) -> pd.Series:
    """Mean rank of each entry over the tasks, best first."""
    return ranks(scores).mean(axis=0).sort_values()


def friedman(scores: pd.DataFrame) -> dict:
    """Friedman's test that all entries rank alike over the N tasks: chi-square (k - 1 degrees of freedom) and
    Iman-Davenport's F ((k - 1, (k - 1)(N - 1)) degrees of freedom), from the average ranks (Demsar eq. 1-2,
    without a tie correction, as there); p-values of both."""
    n, k = scores.shape
    if n < 2 or k < 2:
        return {"n_tasks": n, "k": k, "chi2": math.nan, "p_chi2": math.nan, "f": math.nan, "p_f": math.nan}
    r = average_ranks(scores).to_numpy()
    chi2 = 12 * n / (k * (k + 1)) * (np.sum(r**2) - k * (k + 1) ** 2 / 4)
    f = (n - 1) * chi2 / (n * (k - 1) - chi2) if n * (k - 1) > chi2 else math.inf
    return {"n_tasks": n, "k": k, "chi2": float(chi2), "p_chi2": float(stats.chi2.sf(chi2, k - 1)),
            "f": float(f), "p_f": float(stats.f.sf(f, k - 1, (k - 1) * (n - 1)))}


def nemenyi_cd(k: int, n: int, alpha: float = 0.05) -> float:
    """Nemenyi's critical difference of average ranks for k entries over n tasks at level alpha."""
    q = stats.studentized_range.ppf(1 - alpha, k, np.inf) / math.sqrt(2)
    return float(q * math.sqrt(k * (k + 1) / (6 * n)))


def cliques(avg: pd.Series, cd: float) -> list[list[str]]:
    """The maximal groups of entries (in rank order) whose average ranks lie within cd of each other: the bars
    of a critical-difference diagram.  Groups of one are left out."""
    names, values = list(avg.index), avg.to_numpy()
    groups = []
    for i in range(len(names)):
        j = i
        while j + 1 < len(names) and values[j + 1] - values[i] < cd:
            j += 1
        if j > i and not any(g[0] <= i and j <= g[1] for g in groups):
            groups.append((i, j))
    return [names[a:b + 1] for a, b in groups]


def win_rates(scores: pd.DataFrame) -> pd.DataFrame:
    """W[a, b]: the share of tasks on which entry a's error is below b's (a tie counts one half); W[a, a] = NaN."""
    x = scores.to_numpy(dtype=float)
    wins = (x[:, :, None] < x[:, None, :]).mean(axis=0) + 0.5 * (x[:, :, None] == x[:, None, :]).mean(axis=0)
    np.fill_diagonal(wins, np.nan)
    return pd.DataFrame(wins, index=scores.columns, columns=scores.columns)


def performance_ratios(scores: pd.DataFrame) -> pd.DataFrame:
    """Each entry's error over the best error on the task (1 for the best; 0 / 0 = 1: entries that tie a perfect
    score are best too)."""
    x = scores.to_numpy(dtype=float)
    best = x.min(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(x == best, 1.0, x / best)
    return pd.DataFrame(ratio, index=scores.index, columns=scores.columns)


def performance_profile(scores: pd.DataFrame, taus) -> pd.DataFrame:
    """rho[tau, entry]: the share of tasks on which the entry's error is at most tau times the best's."""
    ratio = performance_ratios(scores).to_numpy()
    taus = np.asarray(taus, dtype=float)
    return pd.DataFrame((ratio[None, :, :] <= taus[:, None, None]).mean(axis=1), index=taus, columns=scores.columns)


def mean_interval(values, level: float = 0.95) -> tuple[float, float, float]:
    """Mean of the finite values and its t interval (mean, low, high); one value: its interval is itself."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return math.nan, math.nan, math.nan
    mean = float(v.mean())
    if v.size == 1:
        return mean, mean, mean
    half = float(stats.t.ppf(0.5 + level / 2, v.size - 1) * v.std(ddof=1) / math.sqrt(v.size))
    return mean, mean - half, mean + half


# ---------------------------------------------------------------------------------------------------------
# from result rows to the boards
# ---------------------------------------------------------------------------------------------------------
DEFAULT_METRIC = {"regression": "test_mse", "classification": "test_f1"}
TAUS = np.round(np.logspace(0, 2, 41), 6)  # performance profiles: error within 1x .. 100x the best


def entry_name(algorithm: str, loss=None) -> str:
    """An entry of the board: the algorithm, with its loss when it has one (the boosted classifier's three)."""
    return algorithm if loss is None or (isinstance(loss, float) and math.isnan(loss)) else f"{algorithm}:{loss}"


def errors(df: pd.DataFrame, metric: str | None = None) -> tuple[pd.DataFrame, str]:
    """Rows with a finite `metric` as errors (lower is better: 1 - score for a metric where higher is better),
    with their entry; and the metric's column name.  A run counts with what it released: an algorithm's own
    fallback (a status other than ok, with metrics) is its result; runs without metrics (harness errors,
    missing data) are left out."""
    from dpbench import metrics

    tasks = df["task"].dropna() if "task" in df else pd.Series(dtype=object)  # a missing_data row has no task
    column = metric or DEFAULT_METRIC[tasks.iloc[0] if len(tasks) else "regression"]
    m = metrics.of_column(column)
    if m is None:
        raise ValueError(f"unknown metric column {column!r}")
    out = df[np.isfinite(pd.to_numeric(df[column], errors="coerce"))].copy()
    loss = out["param_loss"] if "param_loss" in out else pd.Series(None, index=out.index, dtype=object)
    out["entry"] = [entry_name(a, lo) for a, lo in zip(out["algorithm"], loss, strict=True)]
    out["error"] = out[column].astype(float) if m.lower_is_better else 1.0 - out[column].astype(float)
    return out, column


def cells(errs: pd.DataFrame) -> pd.DataFrame:
    """One cell per (tuning_mode, epsilon, dataset, entry): the mean error over seeds, its 95% t interval and
    the number of seeds."""
    rows = []
    for key, g in errs.groupby(["tuning_mode", "epsilon", "dataset", "entry"], sort=True):
        mean, low, high = mean_interval(g["error"])
        rows.append((*key, mean, low, high, len(g)))
    return pd.DataFrame(rows, columns=["tuning_mode", "epsilon", "dataset", "entry", "error", "low", "high", "seeds"])


def scores(cell: pd.DataFrame, mode: str, epsilon: float) -> pd.DataFrame:
    """The (tasks x entries) matrix of mean errors of one mode and epsilon (all tasks; `complete_tasks` to rank)."""
    sel = cell[(cell["tuning_mode"] == mode) & np.isclose(cell["epsilon"], epsilon)]
    return sel.pivot(index="dataset", columns="entry", values="error")


def boards(cell: pd.DataFrame, alpha: float = 0.05) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per (mode, epsilon): the ranked entries (average rank, share of tasks won, median performance ratio,
    Nemenyi clique) and the tests (tasks ranked, tasks left out, Friedman, CD at alpha)."""
    ranked, tests = [], []
    for (mode, eps), _ in cell.groupby(["tuning_mode", "epsilon"], sort=True):
        every = scores(cell, mode, eps)
        s = complete_tasks(every)
        if s.shape[0] == 0 or s.shape[1] == 0:
            continue
        avg = average_ranks(s)
        first = (ranks(s) <= 1.0).mean(axis=0)
        ratio = performance_ratios(s).median(axis=0)
        cd = nemenyi_cd(s.shape[1], s.shape[0], alpha) if s.shape[1] > 1 else math.nan
        tests.append({"tuning_mode": mode, "epsilon": eps, **friedman(s), "cd": cd,
                      "tasks_left_out": every.shape[0] - s.shape[0], "alpha": alpha})
        for place, (entry, r) in enumerate(avg.items(), start=1):
            ranked.append({"tuning_mode": mode, "epsilon": eps, "place": place, "entry": entry, "average_rank": r,
                           "won": first[entry], "median_ratio": ratio[entry], "tasks": s.shape[0]})
    return pd.DataFrame(ranked), pd.DataFrame(tests)


# ---------------------------------------------------------------------------------------------------------
# the protocol's runs: adopted where another experiment ran them, the rest swept
# ---------------------------------------------------------------------------------------------------------
EXPERIMENTS = {"regression": "leaderboard", "classification": "leaderboard_clf"}
MODES = ("fixed", "private_selection", "tuned")


def modes_of(spec) -> tuple[str, ...]:
    """The protocol's modes for an algorithm: all three when it has a tuning space, else fixed only."""
    from dpbench.tuning.spaces import tuning_space

    return MODES if spec.private and tuning_space(spec.name) else ("fixed",)


def adoptable(runs, sweep_dir, source_dir) -> pd.DataFrame:
    """The newest rows, in `source_dir`'s sweeps (any experiment but `sweep_dir`'s), of the `runs` not yet finished
    in `sweep_dir`: a run's identity does not name its experiment (Figs 1-5's tuned BoostedAdaSSP is one run), so
    a finished run need not run again.  Harness failures are not adopted (the sweep retries them)."""
    from pathlib import Path

    from dpbench import results

    source, here = Path(source_dir), Path(sweep_dir).resolve()
    parts = sorted(source.glob(f"*/{results.PARTS}")) if source.is_dir() else []
    found = [results.load(p.parent, expand_params=False) for p in parts
             if p.parent.resolve() != here and any(p.glob("part-*.parquet"))]
    if not found:
        return pd.DataFrame()
    wanted = {r.run_id for r in runs} - (results.finished_run_ids(here) if here.is_dir() else set())
    rows = pd.concat(found, ignore_index=True)
    return results.newest(rows[rows["run_id"].isin(wanted) & ~rows["status"].isin(results.RETRIED_STATUSES)])


def adopt(runs, sweep_dir, source_dir) -> int:
    """Write `adoptable` rows as one part of `sweep_dir` (atomically, like any part); how many."""
    from dpbench import results
    from dpbench.runner.grid import stable_hash

    rows = adoptable(runs, sweep_dir, source_dir)
    if not rows.empty:
        results.write_part(rows.to_dict("records"), sweep_dir, f"adopted-{stable_hash(sorted(rows['run_id']))}")
    return len(rows)


# ---------------------------------------------------------------------------------------------------------
# the cost of honest tuning
# ---------------------------------------------------------------------------------------------------------
def tuning_cost(cell: pd.DataFrame) -> pd.DataFrame:
    """Per entry, epsilon and end-to-end private mode (fixed, private_selection): over the tasks where the entry
    has both, the geometric mean and median of its error over its non-privately tuned error (1 = tuning cost
    nothing; 2 = honest tuning doubles the error), with the share of tasks where the private mode was worse."""
    tuned = cell[cell["tuning_mode"] == "tuned"].set_index(["epsilon", "dataset", "entry"])["error"]
    rows = []
    for mode in ("fixed", "private_selection"):
        own = cell[cell["tuning_mode"] == mode].set_index(["epsilon", "dataset", "entry"])["error"]
        both = pd.concat({"own": own, "tuned": tuned}, axis=1, join="inner")
        both = both[(both["own"] > 0) & (both["tuned"] > 0)]
        for (eps, entry), g in both.groupby(level=["epsilon", "entry"]):
            ratio = g["own"] / g["tuned"]
            rows.append({"tuning_mode": mode, "epsilon": eps, "entry": entry, "tasks": len(g),
                         "geomean_ratio": float(np.exp(np.log(ratio).mean())), "median_ratio": float(ratio.median()),
                         "worse": float((ratio > 1).mean())})
    return pd.DataFrame(rows, columns=["tuning_mode", "epsilon", "entry", "tasks", "geomean_ratio", "median_ratio",
                                       "worse"])


def rank_agreement(ranked: pd.DataFrame, mode: str, reference: str = "tuned") -> pd.DataFrame:
    """Per epsilon: Kendall's tau between the average-rank orders of `mode` and `reference` over the entries both
    ranked (1: non-private tuning, paper 000's protocol, orders them as the private one does)."""
    rows = []
    for eps, g in ranked.groupby("epsilon"):
        a = g[g["tuning_mode"] == mode].set_index("entry")["average_rank"]
        b = g[g["tuning_mode"] == reference].set_index("entry")["average_rank"]
        common = a.index.intersection(b.index)
        tau = stats.kendalltau(a[common], b[common]).statistic if len(common) > 1 else math.nan
        rows.append({"epsilon": eps, "mode": mode, "reference": reference, "entries": len(common), "kendall_tau": tau})
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------------------------------------
# the board's files
# ---------------------------------------------------------------------------------------------------------
BOARD = "board"  # a sweep directory's board: <results_dir>/<name>/board/
TABLES = ("cells", "boards", "tests", "tuning_cost", "rank_agreement")
FIGURES = ("cd.png", "win_rates.png", "profiles.png")


def write_board(df: pd.DataFrame, out_dir, metric: str | None = None, alpha: float = 0.05,
                figures: bool = True) -> list:
    """The leaderboard of result rows `df` in `out_dir`: cells.csv (each cell's mean and interval), boards.csv
    (ranked entries per mode and epsilon), tests.csv (Friedman, CD, the metric), tuning_cost.csv,
    rank_agreement.csv, and the figures cd.png (critical-difference diagrams), win_rates.png and profiles.png.
    Returns the paths (figures=False: the tables only, seconds sooner)."""
    from pathlib import Path

    from dpbench import plots
    from dpbench.plots import common
    from dpbench.plots import leaderboard as lbplots

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    errs, column = errors(df, metric)
    cell = cells(errs)
    ranked, tests = boards(cell, alpha)
    agreement = pd.concat([rank_agreement(ranked, m) for m in ("fixed", "private_selection")], ignore_index=True)
    tables = {"cells": cell, "boards": ranked, "tests": tests.assign(metric=column), "tuning_cost": tuning_cost(cell),
              "rank_agreement": agreement}
    written = []
    for name, table in tables.items():
        table.to_csv(out / f"{name}.csv", index=False)
        written.append(out / f"{name}.csv")
    if not figures:
        return written
    written.append(common.save(plots.make({"kind": "leaderboard", "metric": column, "alpha": alpha}, df),
                               out / "cd.png"))
    written.append(common.save(lbplots.win_rate_figure(cell), out / "win_rates.png"))
    written.append(common.save(lbplots.profile_figure(cell), out / "profiles.png"))
    return written


# ---------------------------------------------------------------------------------------------------------
# a written board, read back: what it lacks of its grid, and what it says (the report's and the README's words)
# ---------------------------------------------------------------------------------------------------------
@dataclass
class Board:
    """A board as `write_board` left it (`read_board`): its tables, what it lacks of its grid, its figures."""

    tables: dict  # TABLES' name -> DataFrame, as written
    gaps: list  # what the board lacks of its grid, in words ([]: complete)
    grid: str  # which grid it is measured against
    figures: list  # FIGURES' names that are there

    @property
    def metric(self) -> str:
        """'test MSE', or '1 - test F1' for a metric where higher is better: what the board's errors are."""
        from dpbench.plots.common import lower_is_better, metric_label

        tests = self.tables["tests"]
        column = tests["metric"].iloc[0] if "metric" in tests and len(tests) else None
        if column is None:
            return "error"
        return metric_label(column) if lower_is_better(column) else f"1 - {metric_label(column)}"

    @property
    def epsilons(self) -> list[float]:
        """The epsilons the board ranks at, ascending."""
        return sorted(set(self.tables["tests"].get("epsilon", [])))


def grid_cells(runs) -> pd.DataFrame:
    """The cells a grid of runs fills when every run releases a result: (tuning_mode, epsilon, dataset, entry) and
    the number of seeds."""
    from dpbench.data import dataset_label

    keys = [(r.tuning_mode, float(r.epsilon), dataset_label(r.dataset), entry_name(r.algorithm, r.params.get("loss")),
             r.seed) for r in runs]
    frame = pd.DataFrame(keys, columns=["tuning_mode", "epsilon", "dataset", "entry", "seed"])
    return frame.groupby(["tuning_mode", "epsilon", "dataset", "entry"], as_index=False)["seed"].nunique() \
        .rename(columns={"seed": "seeds"})


def gaps(cell: pd.DataFrame, grid: pd.DataFrame, absent=()) -> list[str]:
    """What the board's cells lack of the grid's, in words ([] when every cell is there with every seed): the
    entries, tasks, modes and epsilons without any cell, then the other cells missing, then cells short of seeds.
    `absent`: the tasks whose data was missing when the sweep ran (said as such: nothing of theirs failed)."""
    from dpbench.plots.leaderboard import entry_label
    from dpbench.tuning import MODE_LABELS

    keys = ["tuning_mode", "epsilon", "dataset", "entry"]
    want = grid.set_index(keys)["seeds"]
    have = cell.set_index(keys)["seeds"].reindex(want.index) if len(cell) else pd.Series(math.nan, want.index)
    missing = have.isna()
    words = {"entry": ("entries", entry_label), "dataset": ("tasks", str),
             "tuning_mode": ("modes", lambda m: MODE_LABELS.get(m, m).lower()), "epsilon": ("eps", "{:g}".format)}
    out, covered = [], pd.Series(False, index=want.index)
    for level, (what, label) in words.items():
        every = missing.groupby(level=level).all()
        none = [v for v, lacking in every.items() if lacking]
        groups = ([("", [v for v in none if v not in absent]),
                   (", their data missing when it ran", [v for v in none if v in absent])]
                  if level == "dataset" else [("", none)])
        for why, these in groups:
            if these:
                names = [label(v) for v in these]
                out.append(f"no cell for {len(these)} of the grid's {len(every)} {what}{why} "
                           f"({_few(names if level == 'epsilon' else sorted(names))})")
        covered |= want.index.get_level_values(level).isin(none)
    rest = missing & ~covered
    if rest.any():
        tasks = sorted(set(rest[rest].index.get_level_values("dataset")))
        out.append(f"{int(rest.sum())} more of the grid's {len(want)} cells missing (on {tasks_text(len(tasks))}: "
                   f"{_few(tasks)})")
    short = int((have < want).sum())
    if short:
        out.append(f"{short} cell{'s' if short != 1 else ''} with fewer seeds than the grid's {int(want.max())}")
    return out


def _few(names, shown: int = 6) -> str:
    """'a, b, c' or, past `shown` names, 'a, b, ..., f and 12 more'."""
    names = list(names)
    return ", ".join(names) if len(names) <= shown else f"{', '.join(names[:shown])} and {len(names) - shown} more"


def protocol_runs(sweep_dir) -> tuple[list, str]:
    """The runs a board in `sweep_dir` should rank, and which grid that is: the shipped experiment's when the
    directory is one's (the reference leaderboard, judged against the full protocol), else the grid its sweep
    ran (config.json); ([], why) when neither is known."""
    import json
    from pathlib import Path

    from dpbench import config
    from dpbench.runner.grid import expand

    sweep_dir = Path(sweep_dir)
    if sweep_dir.name in config.experiment_names():
        exp = config.experiment(config.validate(config.compose([f"experiment={sweep_dir.name}"])))
        return expand(exp), f"experiment {sweep_dir.name}'s grid"
    grid = sweep_dir / "config.json"
    if grid.exists():
        return expand(json.loads(grid.read_text())), "the grid its sweep ran (config.json)"
    return [], "no grid known"


def absent_tasks(sweep_dir) -> set[str]:
    """The tasks of a sweep directory whose every row is missing_data (their data was not there when it ran)."""
    from dpbench import results

    rows = results.load(sweep_dir, expand_params=False)
    if rows.empty:
        return set()
    missing = (rows["status"] == "missing_data").groupby(rows["dataset"]).all()
    return set(missing[missing].index)


def read_board(sweep_dir) -> Board | None:
    """The board `write_board` left in `sweep_dir`/board (None when there is none), with its gaps against
    `protocol_runs`."""
    from pathlib import Path

    out = Path(sweep_dir) / BOARD
    if not (out / "boards.csv").exists():
        return None
    tables = {}
    for name in TABLES:
        try:
            tables[name] = pd.read_csv(out / f"{name}.csv")
        except (FileNotFoundError, pd.errors.EmptyDataError):  # a table written empty (no tuned cells, say)
            tables[name] = pd.DataFrame()
    runs, grid = protocol_runs(sweep_dir)
    missing = gaps(tables["cells"], grid_cells(runs), absent_tasks(sweep_dir)) if runs else [
        "its grid is unknown, so its completeness is not checked"]
    return Board(tables, missing, grid, [f for f in FIGURES if (out / f).exists()])


def _ratio(x: float) -> str:
    """Two significant digits, never an exponent: 0.0094x, 0.98x, 1.0x, 4.5x, 110x."""
    if not (np.isfinite(x) and x > 0):
        return f"{x}x"
    digits = 1 - math.floor(math.log10(x))
    return f"{round(x, digits):.{max(digits, 0)}f}x"


def tasks_text(n) -> str:
    """'1 task', '30 tasks'."""
    return f"{int(n)} task{'s' if int(n) != 1 else ''}"


def p_text(p: float) -> str:
    """'p = 0.032', 'p < 0.001' (a p-value of 0: perfectly concordant ranks)."""
    return f"p = {p:.2g}" if p >= 0.001 else "p < 0.001"


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def _series(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _at(table: pd.DataFrame, mode: str, eps: float) -> pd.DataFrame:
    return table[(table["tuning_mode"] == mode) & np.isclose(table["epsilon"], eps)] if len(table) else table


def findings(board: Board) -> list[str]:
    """What the board says, in a few sentences made from its files: partial or not, who ranks first privately
    selected, what honest tuning costs, how the ranking moves from non-private tuning (paper 000's protocol) to
    the private one."""
    from dpbench.plots.leaderboard import entry_label

    t = board.tables
    ranked, tests, cost, agree = t["boards"], t["tests"], t["tuning_cost"], t["rank_agreement"]
    out = [f"This board is partial: {'; '.join(board.gaps)}." if board.gaps else
           f"This board is complete: every cell of {board.grid}, with every seed."]
    first = []
    for eps in board.epsilons:
        test = _at(tests, "private_selection", eps)
        if test.empty:
            continue
        test, g = test.iloc[0], _at(ranked, "private_selection", eps)
        best = g[np.isclose(g["average_rank"], g["average_rank"].min())]
        p = f"Friedman {p_text(test['p_f'])}" if np.isfinite(test["p_f"]) else "no Friedman test on one task"
        if np.isfinite(test["p_f"]) and test["p_f"] >= test["alpha"]:  # no evidence at alpha that the ranks differ
            p += f": the ranks are not told apart at alpha {test['alpha']:g}"
        first.append(f"{' and '.join(entry_label(e) for e in best['entry'])} at eps {eps:g} (average rank "
                     f"{best['average_rank'].iloc[0]:.2f} of {int(test['k'])} entries over "
                     f"{tasks_text(test['n_tasks'])}, {p})")
    if first:
        out.append(f"With private selection, the first place goes to {_series(first)}.")
    for mode, what in (("private_selection", "Privately selected"), ("fixed", "With fixed defaults")):
        parts = []
        for eps in board.epsilons:
            g = _at(cost, mode, eps).sort_values("median_ratio")
            if len(g):
                lo, hi = g.iloc[0], g.iloc[-1]
                parts.append(f"{_ratio(lo['median_ratio'])} ({entry_label(lo['entry'])})" + (
                    f" to {_ratio(hi['median_ratio'])} ({entry_label(hi['entry'])})" if len(g) > 1 else "")
                    + f" at eps {eps:g}")
        if parts:
            out.append(f"{what}, an entry's {board.metric} over its non-privately tuned one is {_series(parts)} "
                       "(the median over tasks of the ratio).")
    taus = []
    for mode in ("private_selection", "fixed"):
        g = agree[(agree["mode"] == mode) & np.isfinite(agree["kendall_tau"])] if len(agree) else agree
        taus.append(_series([f"{r.kendall_tau:.2f} at eps {r.epsilon:g}" for r in g.itertuples()]) if len(g) else "")
    if taus[0]:
        move = _largest_move(ranked)
        out.append(f"Kendall's tau between the ranking under non-private tuning (paper 000's protocol) and under "
                   f"private selection is {taus[0]} (1: the same order)"
                   + (f", and against fixed defaults {taus[1]}" if taus[1] else "")
                   + (f"; the largest move is {entry_label(move[0])}'s, {_ordinal(move[1])} non-privately tuned "
                      f"and {_ordinal(move[2])} privately selected at eps {move[3]:g}" if move else "")
                   + ".")
    return out


def _largest_move(ranked: pd.DataFrame):
    """(entry, place tuned, place privately selected, eps) of the entry whose place moves most; None if none does."""
    if ranked.empty:
        return None
    place = ranked.pivot_table(index=["epsilon", "entry"], columns="tuning_mode", values="place")
    if not {"tuned", "private_selection"} <= set(place.columns):
        return None
    delta = (place["private_selection"] - place["tuned"]).abs().dropna()
    if delta.empty or delta.max() == 0:
        return None
    eps, entry = delta.idxmax()
    return entry, int(place.loc[(eps, entry), "tuned"]), int(place.loc[(eps, entry), "private_selection"]), eps


def rank_table(board: Board, eps: float) -> pd.DataFrame:
    """One epsilon's board as text: per entry its average rank in each mode, with the letters of its Nemenyi
    cliques (entries sharing a letter are not told apart); the last row each mode's tasks, Friedman p and CD.
    Entries in the order of private selection (else the first mode ranked)."""
    from dpbench.plots.leaderboard import entry_label
    from dpbench.tuning import MODE_LABELS

    ranked, tests = board.tables["boards"], board.tables["tests"]
    modes = [m for m in MODES if not _at(tests, m, eps).empty]
    columns, footer = {}, {}
    for mode in modes:
        g, test = _at(ranked, mode, eps), _at(tests, mode, eps).iloc[0]
        avg = pd.Series(g["average_rank"].to_numpy(), index=g["entry"])
        letters = {e: [] for e in avg.index}
        for j, group in enumerate(cliques(avg, test["cd"]) if np.isfinite(test["cd"]) else []):
            for e in group:
                letters[e].append(chr(ord("a") + j))
        columns[MODE_LABELS.get(mode, mode)] = {e: f"{r:.2f}" + (f" ({', '.join(letters[e])})" if letters[e] else "")
                                                for e, r in avg.items()}
        p = p_text(test["p_f"]).removeprefix("p = ").removeprefix("p ") if np.isfinite(test["p_f"]) else "-"
        left = f" ({int(test['tasks_left_out'])} left out)" if test["tasks_left_out"] else ""
        footer[MODE_LABELS.get(mode, mode)] = f"{int(test['n_tasks'])}{left} / {p} / {test['cd']:.2f}"
    if not columns:
        return pd.DataFrame()
    order = "private_selection" if "private_selection" in modes else modes[0]
    entries = list(_at(ranked, order, eps).sort_values("average_rank")["entry"])
    entries += [e for c in columns.values() for e in c if e not in entries]
    rows = [{"entry": entry_label(e), **{m: c.get(e, "-") for m, c in columns.items()}} for e in dict.fromkeys(entries)]
    rows.append({"entry": "tasks / Friedman p / CD", **footer})
    return pd.DataFrame(rows)


def cost_table(board: Board) -> pd.DataFrame:
    """The cost of honest tuning as text: per entry and epsilon, each private mode's error over the non-privately
    tuned one (median over tasks; geometric mean; on how many tasks it was worse)."""
    from dpbench.plots.leaderboard import entry_label
    from dpbench.tuning import MODE_LABELS

    cost = board.tables["tuning_cost"]
    if cost.empty:
        return pd.DataFrame()
    rows = {}
    for r in cost.sort_values(["epsilon", "entry"]).itertuples():
        row = rows.setdefault((r.epsilon, r.entry), {"eps": f"{r.epsilon:g}", "entry": entry_label(r.entry)})
        row[f"{MODE_LABELS[r.tuning_mode]} / tuned"] = (f"{_ratio(r.median_ratio)} (geo. mean "
                                                        f"{_ratio(r.geomean_ratio)}; worse on "
                                                        f"{round(r.worse * r.tasks)} of {r.tasks})")
    return pd.DataFrame(list(rows.values())).fillna("-")


def summary_table(board: Board) -> pd.DataFrame:
    """The board in one table (the README's): per entry and epsilon its average rank privately selected (and
    non-privately tuned) and what private selection costs it (median ratio to its tuned error)."""
    from dpbench.plots.leaderboard import entry_label

    ranked, cost = board.tables["boards"], board.tables["tuning_cost"]
    if ranked.empty:
        return pd.DataFrame()
    mid = board.epsilons[len(board.epsilons) // 2]
    order = _at(ranked, "private_selection", mid).sort_values("average_rank")["entry"].tolist()
    order += [e for e in dict.fromkeys(ranked["entry"]) if e not in order]
    rows = []
    for entry in order:
        row = {"entry": entry_label(entry)}
        for eps in board.epsilons:
            rank = {m: _at(ranked, m, eps).set_index("entry")["average_rank"].get(entry) for m in ("private_selection",
                                                                                                 "tuned")}
            ratio = _at(cost, "private_selection", eps).set_index("entry")["median_ratio"].get(entry) \
                if len(cost) else None
            row[f"eps {eps:g}: rank (tuned)"] = " ".join(
                [f"{rank['private_selection']:.2f}" if rank["private_selection"] is not None else "-",
                 f"({rank['tuned']:.2f})" if rank["tuned"] is not None else "(-)"])
            row[f"eps {eps:g}: cost"] = _ratio(ratio) if ratio is not None else "-"
        rows.append(row)
    return pd.DataFrame(rows)
