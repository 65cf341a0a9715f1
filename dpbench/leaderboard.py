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

    task = df["task"].iloc[0] if len(df) else "regression"
    column = metric or DEFAULT_METRIC[task]
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
    ranked (1: the papers' protocol orders them as the private one does)."""
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
def write_board(df: pd.DataFrame, out_dir, metric: str | None = None, alpha: float = 0.05) -> list:
    """The leaderboard of result rows `df` in `out_dir`: cells.csv (each cell's mean and interval), boards.csv
    (ranked entries per mode and epsilon), tests.csv (Friedman, CD), tuning_cost.csv, rank_agreement.csv, and the
    figures cd.png (critical-difference diagrams), win_rates.png and profiles.png.  Returns the paths."""
    from pathlib import Path

    from dpbench import plots
    from dpbench.plots import common
    from dpbench.plots import leaderboard as figures

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    errs, column = errors(df, metric)
    cell = cells(errs)
    ranked, tests = boards(cell, alpha)
    agreement = pd.concat([rank_agreement(ranked, m) for m in ("fixed", "private_selection")], ignore_index=True)
    tables = {"cells": cell, "boards": ranked, "tests": tests, "tuning_cost": tuning_cost(cell),
              "rank_agreement": agreement}
    written = []
    for name, table in tables.items():
        table.to_csv(out / f"{name}.csv", index=False)
        written.append(out / f"{name}.csv")
    written.append(common.save(plots.make({"kind": "leaderboard", "metric": column, "alpha": alpha}, df),
                               out / "cd.png"))
    written.append(common.save(figures.win_rate_figure(cell), out / "win_rates.png"))
    written.append(common.save(figures.profile_figure(cell), out / "profiles.png"))
    return written
