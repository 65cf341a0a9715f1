"""Paper 003 (TukeyEM, Amin et al. 2023) Sec. 4: the R^2 table (Fig. 1), the PTR distance vs m (Fig. 2 left),
R^2 vs m (Fig. 5), the m-selection rule and the runtime vs m (Fig. 2 right), at (ln 3, 1e-5).

Datasets (Sec. 4.2, App. 7.5): the data registry's `paper003_*` (dpbench/data/sets/paper003.py says how each is
read: the paper's make_regression Synthetic; the paper's own copies of California (Kaggle), Diamonds and Garbage
from the data mirror's paper003/; Traffic, NBA, Beijing, MLB are not in the mirror: rows with status
'missing_data').  Each gets an intercept column (`fit_intercept=True`, as the paper's d counts).  As in the
paper, every method is fitted on all rows and scored by its R^2 on them (the paper's metric; the datasets'
split policy 'all' leaves no test part).

Methods, all at (ln 3, 1e-5):
- NonDP: OLS.  AdaSSP (`adassp`) with x_bound = max ||(x, 1)|| and y_bound = max |y| of the rows: the data
  bounds the paper gives it, non-private.
- TukeyEM (`tukey`): private at (ln 3, 1e-5) for one *record* added or removed; one record swaps one of the m
  models, so it runs the paper's PTR check with the paper's constants, and only its exponential mechanism keeps
  the standard factor 2 (depth is not monotone under a swap; `tukey` docstring).
  m: the paper's rule, the smallest m in 250, 500, ..., 2000 where every trial's PTR check passes (Sec. 4.3).
- DP-GD (`dpgd`, full-batch DP gradient descent, dpbench's stand-in for the paper's Keras DP-SGD) over the grid
  x_bound 1..1e6 (x10), grad_bound 1e-2..1e6 (x100), n_rounds 20, 200 (70 settings; the paper: 2,184 settings of
  DP-SGD) at the largest stable step, learning_rate 1 (in units of 1 / x_bound^2: DP-GD is scale-aware, rows
  clipped to x_bound, so the row clip replaces the absolute step of the grid before), 3 trials a setting; "tuned" =
  the best median R^2, "90% tuned" = the setting ranked at the 90th percentile (better than 90% of the grid), both
  re-run with the table's trials.
  Non-private tuning, as in the paper.
Trials: 10, California and Diamonds 50 (Sec. 4.4); median and interquartile range.

Diagnosis (rows part = 'diagnosis', table paper003_diagnosis.csv; explains, judges nothing): TukeyEM with the
paper's exponent exp((eps/2) i) instead of dpbench's exp((eps/2) i / 2), at the m of the rule, with the same
seeds (so the same models and PTR outcomes: only the exponent differs), labelled "paper's accounting (not
private under dpbench's relation)" and `private = False`; and the same on OpenML's California copy (task 361089,
per-household averages), whose TukeyEM m sweep is run for its own m.

Runtime (Fig. 2 right): CPU seconds (time.process_time, unaffected by other processes on a shared machine),
the median of 5 fits, on Synthetic at the m where each part holds at least d rows (n / m >= d, d with the
intercept).  `smoke=True`: a few seconds.
"""

from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np
import pandas as pd

from dpbench import algorithms
from dpbench.algorithms.base import nonprivate_diagnostics
from dpbench.algorithms.tukey import TukeyEMRegressor
from dpbench.analyses import analysis, parallel_map
from dpbench.claims import ALPHA, MIN_CELLS, Verdict, claim, sign_test
from dpbench.claims import diagnosis as register_diagnosis
from dpbench.data import Dataset, MissingDataError, get_spec, load_dataset, resolve_data_dir
from dpbench.plots.paper003 import figures

EPS, DELTA = math.log(3), 1e-5
M_GRID = [250, 500, 750, 1000, 1250, 1500, 1750, 2000]
PAPER_TABLE = {  # paper 003 Fig. 1: NonDP, AdaSSP, TukeyEM, DPSGD (tuned), DPSGD (90% tuned); median train R^2
    "Synthetic": (0.997, 0.991, 0.997, 0.997, 0.997), "California": (0.637, -1.285, 0.099, 0.085, -1.03),
    "Diamonds": (0.907, 0.216, 0.307, 0.828, 0.371), "Traffic": (0.966, 0.944, 0.965, 0.938, 0.765),
    "NBA": (0.621, 0.018, 0.618, 0.531, 0.344), "Beijing": (0.702, 0.209, 0.698, 0.475, 0.302),
    "Garbage": (0.542, 0.119, 0.534, 0.215, 0.152), "MLB": (0.722, 0.519, 0.721, 0.718, 0.712)}
PAPER_METHODS = ("NonDP", "AdaSSP (data bounds, non-private)", "TukeyEM", "DP-GD (tuned, non-private tuning)",
                 "DP-GD (90% tuned, non-private tuning)")
DATASETS = {name: f"paper003_{name.lower()}" for name in PAPER_TABLE}  # the data registry's names
COPIES = {"California (OpenML 361089)": ("California", "paper003_california_openml")}  # diagnosis: another copy
TRIALS = {"California": 50, "Diamonds": 50}  # Sec. 4.4: "All datasets use 10 trials, except for California and
DEFAULT_TRIALS = 10  # Diamonds, which use 50."
DPGD_GRID = [{"x_bound": xb, "grad_bound": c, "n_rounds": r, "learning_rate": 1.0} for xb in 10.0 ** np.arange(0, 7)
             for c in 10.0 ** np.arange(-2, 7, 2) for r in (20, 200)]
FIG2_D = [2, 5, 10, 20]
RUNTIME_REPEATS = 5
PAPER_EXPONENT = "TukeyEM, paper's accounting (not private under dpbench's relation)"


class PaperExponentTukey(TukeyEMRegressor):
    """TukeyEM with the exponent of the paper (Sec. 7.3) and the authors' code, exp((eps/2) i): not private under
    dpbench's relation (tukey.py Privacy (c)).  For the diagnosis only; never registered."""

    depth_exponent_divisor = 1


def load(name: str, smoke: bool = False) -> Dataset:
    """A paper 003 dataset (or a COPIES name) through the data registry, every row a training row;
    MissingDataError (saying why) when it is not available."""
    spec = {"name": DATASETS[name] if name in DATASETS else COPIES[name][1]}
    if name == "Synthetic":
        spec["n"] = 2_200 if smoke else 22_000
    # split_seed 0: the generator's draw is make_regression(random_state=0), the paper's
    return load_dataset(spec, split_seed=0, data_dir=resolve_data_dir())


def _make(name, params, seed):
    return algorithms.make(name, fit_intercept=True, random_state=seed, **params)


def _fit(est, X, y):
    start = time.perf_counter()
    est.fit(X, y)
    seconds = time.perf_counter() - start
    return {"train_r2": float(est.score(X, y)), "status": getattr(est, "fit_status_", "ok"), "fit_seconds": seconds,
            "est": est}


def _row(dataset, method, private, params, seed, res, **extra):
    return {"dataset": dataset, "method": method, "private": private, "params": repr(params), "seed": seed,
            **{k: v for k, v in res.items() if k != "est"}, **extra}


def tukey_rows(name: str, X, y, trials: int, m_grid, part: str) -> list[dict]:
    """TukeyEM over m (Fig. 5) with each fit's PTR distance, then the diagnosis: the paper's exponent at every m,
    same seeds."""
    rows = []
    for m in m_grid:
        for s in range(trials):
            p = {"epsilon": EPS, "delta": DELTA, "n_models": m}
            with nonprivate_diagnostics():  # the noiseless PTR distance, for the figure (not a private output)
                res = _fit(_make("tukey", p, s), X, y)
            est = res["est"]
            rows.append(_row(name, "TukeyEM", True, p, s, res, part=part, m=m,
                             ptr_distance=est.nonprivate_diagnostics_["ptr_distance"],
                             ptr_threshold=est.ptr_threshold_, ptr_passed=est.ptr_passed_))
    for m in m_grid:
        for s in range(trials):
            p = {"epsilon": EPS, "delta": DELTA, "n_models": m}
            res = _fit(PaperExponentTukey(fit_intercept=True, random_state=s, **p), X, y)
            rows.append(_row(name, PAPER_EXPONENT, False, p, s, res, part="diagnosis", m=m,
                             ptr_passed=res["est"].ptr_passed_))
    return rows


def run_dataset(name: str, smoke: bool) -> list[dict]:
    try:
        data = load(name, smoke)
    except MissingDataError as e:
        print(f"  {name}: {e}", flush=True)
        return [{"dataset": name, "method": m, "status": "missing_data", "part": "table"} for m in PAPER_METHODS]
    X, y = data.X_train, data.y_train  # every row
    trials = 2 if smoke else TRIALS.get(name, DEFAULT_TRIALS)
    rows = [_row(name, "NonDP", False, {}, 0, _fit(_make("ols", {}, 0), X, y), part="table")]
    bounds = {"x_bound": float(np.sqrt((X**2).sum(axis=1) + 1).max()), "y_bound": float(np.abs(y).max())}
    for s in range(trials):
        res = _fit(_make("adassp", {"epsilon": EPS, "delta": DELTA, **bounds}, s), X, y)
        rows.append(_row(name, PAPER_METHODS[1], False, bounds, s, res, part="table"))
    rows += tukey_rows(name, X, y, trials, [50, 100] if smoke else M_GRID, "m_sweep")
    # DP-GD: grid with 3 trials (smoke: 1 and a small grid), then the tuned and 90%-tuned settings
    grid = DPGD_GRID[::9] if smoke else DPGD_GRID
    grid_rows = []
    for i, p in enumerate(grid):
        for s in range(1 if smoke else 3):
            res = _fit(_make("dpgd", {"epsilon": EPS, "delta": DELTA, **p}, 1000 + s), X, y)
            grid_rows.append(_row(name, "DP-GD grid", True, p, s, res, part="dpgd_grid", setting=i))
    rows += grid_rows
    med = pd.DataFrame(grid_rows).groupby("setting")["train_r2"].median().sort_values(ascending=False)
    picks = {PAPER_METHODS[3]: int(med.index[0]), PAPER_METHODS[4]: int(med.index[int(math.ceil(0.1 * len(med))) - 1])}
    for label, i in picks.items():
        for s in range(trials):
            res = _fit(_make("dpgd", {"epsilon": EPS, "delta": DELTA, **grid[i]}, s), X, y)
            rows.append(_row(name, label, False, grid[i], s, res, part="table", setting=i))
    print(f"  {name}: done", flush=True)
    return rows


def run_copy(name: str, smoke: bool) -> list[dict]:
    """The diagnosis on another copy of a paper's dataset (COPIES): NonDP and TukeyEM as in the table."""
    try:
        data = load(name, smoke)
    except MissingDataError as e:
        print(f"  {name}: {e}", flush=True)
        return [{"dataset": name, "method": "TukeyEM", "status": "missing_data", "part": "diagnosis"}]
    X, y = data.X_train, data.y_train
    paper_name = COPIES[name][0]
    trials = 2 if smoke else TRIALS.get(paper_name, DEFAULT_TRIALS)
    rows = [_row(name, "NonDP", False, {}, 0, _fit(_make("ols", {}, 0), X, y), part="diagnosis")]
    rows += tukey_rows(name, X, y, trials, [50, 100] if smoke else M_GRID, "diagnosis")
    print(f"  {name}: done", flush=True)
    return rows


def choose_m(sweep: pd.DataFrame) -> tuple[int, bool]:
    """Sec. 4.3: the smallest m whose PTR checks all passed; (m, True), else the m passing most often, False."""
    rate = sweep.groupby("m")["ptr_passed"].mean()
    full = rate[rate == 1.0]
    if len(full):
        return int(full.index.min()), True
    return int(rate.idxmax()), False


def ptr_vs_m(smoke: bool) -> list[dict]:
    """Fig. 2 left: Lemma 3.6's distance vs m for several d on make_regression data with n = (d + 1) m, all rows."""
    draw = get_spec(DATASETS["Synthetic"]).source.make  # the registered generator's draw
    rows = []
    for d in [2, 5] if smoke else FIG2_D:
        for m in [100, 200] if smoke else M_GRID:
            for s in range(1 if smoke else 3):
                frame = draw(n=(d + 1) * m, d=d, seed=s)
                X, y = frame.drop(columns="y").to_numpy(), frame["y"].to_numpy()
                est = _make("tukey", {"epsilon": EPS, "delta": DELTA, "n_models": m}, s)
                with nonprivate_diagnostics():  # Fig. 2 plots the noiseless distance
                    est.fit(X, y)
                rows.append({"part": "fig2", "d": d, "m": m, "seed": s,
                             "ptr_distance": est.nonprivate_diagnostics_["ptr_distance"],
                             "ptr_threshold": est.ptr_threshold_})
    return rows


def runtime(smoke: bool) -> list[dict]:
    """Fig. 2 right on Synthetic: CPU seconds of a fit, the median of RUNTIME_REPEATS (CPU time, as other
    processes share the machine), for TukeyEM at each m whose parts hold at least d rows, and the others."""
    data = load("Synthetic", smoke)
    X, y = data.X_train, data.y_train
    d = X.shape[1] + 1  # the intercept
    dpgd = {"learning_rate": 0.1, "grad_bound": 1.0, "n_rounds": 20}  # the paper's DPSGD ran 20 epochs
    cases = [("TukeyEM", "tukey", {"epsilon": EPS, "delta": DELTA, "n_models": m}, m)
             for m in ([50, 100] if smoke else M_GRID) if len(y) / m >= d]
    cases += [("NonDP", "ols", {}, np.nan), ("AdaSSP", "adassp", {"epsilon": EPS, "delta": DELTA}, np.nan),
              ("DP-GD (20 rounds)", "dpgd", {"epsilon": EPS, "delta": DELTA, **dpgd}, np.nan)]
    rows = []
    for label, name, params, m in cases:
        times = []
        for s in range(3 if smoke else RUNTIME_REPEATS):
            est = _make(name, params, s)
            start = time.process_time()
            est.fit(X, y)
            times.append(time.process_time() - start)
        rows.append({"part": "runtime", "dataset": "Synthetic", "method": label, "m": m,
                     "cpu_seconds": float(np.median(times)), "repeats": len(times)})
    return rows


def _call(fn, *args):
    return fn(*args)


def table(df: pd.DataFrame) -> pd.DataFrame:
    """Median [IQR] R^2 on all rows per dataset and method (TukeyEM at the m of the paper's rule)."""
    out = []
    for name in PAPER_TABLE:
        part = df[df["dataset"] == name]
        if part.empty or (part["status"] == "missing_data").all():
            out.append({"dataset": name, "method": "all", "status": "missing_data"})
            continue
        chosen = {"TukeyEM": choose_m(part[(part["part"] == "m_sweep") & (part["method"] == "TukeyEM")])}
        for method in PAPER_METHODS:
            if method in chosen:
                m, ok = chosen[method]
                runs = part[(part["part"] == "m_sweep") & (part["method"] == method) & (part["m"] == m)]
            else:
                runs, m, ok = part[(part["part"] == "table") & (part["method"] == method)], np.nan, True
            q = runs["train_r2"].quantile([0.25, 0.5, 0.75])
            paper = PAPER_TABLE[name][PAPER_METHODS.index(method)]
            out.append({"dataset": name, "method": method, "paper_train_r2": paper, "train_r2": q.loc[0.5],
                        "train_q1": q.loc[0.25], "train_q3": q.loc[0.75],
                        "trials": len(runs), "m": m, "m_rule_met": ok,
                        "failed": int((runs["status"] != "ok").sum()), "status": "ok"})
    return pd.DataFrame(out)


def diagnosis(df: pd.DataFrame) -> pd.DataFrame:
    """Per dataset (and copy) with diagnosis rows: TukeyEM's median R^2 at the m of the paper's rule, private
    (dpbench's exponent) and with the paper's exponent, beside the paper's; `exponent_effect` is the part of the
    gap the exponent explains (same seeds: the same models and PTR outcomes)."""
    if "part" not in df or not (df["part"] == "diagnosis").any():
        return pd.DataFrame()
    out = []
    for name in dict.fromkeys(df.loc[df["part"] == "diagnosis", "dataset"]):
        part = df[df["dataset"] == name]
        paper_exp = part[(part["part"] == "diagnosis") & (part["method"] == PAPER_EXPONENT)]
        if paper_exp.empty:
            continue
        sweep = part[part["part"].isin(["m_sweep", "diagnosis"]) & (part["method"] == "TukeyEM")]
        m, ok = choose_m(sweep)
        ours = sweep.loc[sweep["m"] == m, "train_r2"].median()
        theirs = paper_exp.loc[paper_exp["m"] == m, "train_r2"].median()
        paper_name = COPIES[name][0] if name in COPIES else name
        nondp = part.loc[part["method"] == "NonDP", "train_r2"]
        out.append({"dataset": name, "copy": DATASETS.get(name) or COPIES[name][1], "m": m,
                    "m_rule_met": ok, "trials": int((sweep["m"] == m).sum()),
                    "nondp_r2": float(nondp.iloc[0]) if len(nondp) else np.nan, "tukey_r2": ours,
                    "paper_exponent_r2": theirs, "paper_r2": PAPER_TABLE[paper_name][2],
                    "exponent_effect": theirs - ours})
    return pd.DataFrame(out)


def diagnosis_text(diag: pd.DataFrame) -> str:
    """One line for the report: TukeyEM private and with the paper's exponent, beside the paper's value."""
    return "; ".join(f"{r.dataset}: {r.tukey_r2:.3f}, with the paper's exponent (not private) "
                     f"{r.paper_exponent_r2:.3f} ({r.exponent_effect:+.3f}) at m = {r.m} (paper {r.paper_r2})"
                     for r in diag.itertuples())


@analysis("paper003", "paper 003 (TukeyEM): R^2 table at (ln 3, 1e-5), PTR distance vs m, R^2 and runtime vs m")
def run(out: Path, smoke: bool = False) -> list[Path]:
    # the runtime alone, before the other parts run on two processes, and after Fig. 2's PTR distances (seconds of
    # work here): timed first in a process, TukeyEM's CPU times on this 2-core VM were 1.5x and their correlation
    # with m 0.66, against 0.99 (measured)
    rows = ptr_vs_m(smoke) + runtime(smoke)
    jobs = [(run_dataset, name, smoke) for name in (["Synthetic"] if smoke else PAPER_TABLE)]
    jobs += [(run_copy, name, smoke) for name in ([] if smoke else COPIES)]
    df = pd.DataFrame(rows + [row for part in parallel_map(_call, jobs, smoke) for row in part])
    df["params"] = df["params"].astype(str)
    path = out / "paper003.parquet"
    df.to_parquet(path)
    tab_path, diag_path = out / "paper003_table.csv", out / "paper003_diagnosis.csv"
    table(df).to_csv(tab_path, index=False)
    diagnosis(df).to_csv(diag_path, index=False)
    return [path, tab_path, diag_path, *figures(df, out)]


# ---- claims ---------------------------------------------------------------------------------------------------

def _table(load):
    return table(load("paper003"))


PAPER_TUKEY = "TukeyEM"


PRINTED_DECIMALS = 3  # the paper's Fig. 1 table prints R^2 to 3 decimals


@claim("paper003", "003", "Sec. 4.4, Fig. 1",
       "First, on most datasets TukeyEM obtains R^2 exceeding or matching that of both AdaSSP and DPSGD.",
       "the paper's bolding rule of Fig. 1 at its printed precision (R^2 rounded to 3 decimals): on more than half "
       "of the datasets with results, TukeyEM's median train R^2 (m by the paper's rule) at least the best of "
       "AdaSSP's and tuned DP-GD's, or its interquartile range overlapping that method's; a dataset where AdaSSP "
       "or DP-GD failed in any trial is excluded; 4 of the paper's 8 datasets (Traffic, NBA, Beijing, MLB) are not in "
       "the data mirror",
       effect=False)
def claim_tukey_matches(load):
    return _matches(_table(load))


def _matches(tab: pd.DataFrame) -> Verdict:
    """The bolding rule of Fig. 1 on a `table`: TukeyEM at least the best partner or overlapping it."""
    missing = int((tab["status"] == "missing_data").sum())
    tab = tab[tab["status"] == "ok"]
    wins, excluded = [], []
    for name, g in tab.groupby("dataset"):
        g = g.set_index("method")
        if (g.loc[[PAPER_METHODS[1], PAPER_METHODS[3]], "failed"] > 0).any():
            excluded.append(name)
            continue
        tk = g.loc[PAPER_TUKEY]
        others = g.loc[[PAPER_METHODS[1], PAPER_METHODS[3]]]
        best = others["train_r2"].idxmax()
        r = lambda v: round(float(v), PRINTED_DECIMALS)  # noqa: E731 - the paper bolds what it prints
        ok = ("ok" if r(tk["train_r2"]) >= r(others.loc[best, "train_r2"]) else
              "ok, quartiles overlap" if r(tk["train_q3"]) >= r(others.loc[best, "train_q1"]) else "")
        wins.append((name, ok, tk["train_r2"], best, others.loc[best, "train_r2"]))
    n_ok = sum(bool(w[1]) for w in wins)
    return Verdict(n_ok > len(wins) / 2 if wins else None,
                   "; ".join(f"{n}: TukeyEM {t:.3f} vs {b} {v:.3f} ({o or 'worse'})" for n, o, t, b, v in wins)
                   + f" ({missing} of {len(PAPER_TABLE)} datasets missing"
                   + (f"; excluded, a partner failed: {', '.join(excluded)})" if excluded else ")"))


def _paper_exponent_rows(df: pd.DataFrame) -> pd.DataFrame:
    """The diagnosis rows of TukeyEM with the paper's exponent on the paper's datasets (FileNotFoundError: none,
    the report's 'not run')."""
    rows = df[(df["part"] == "diagnosis") & (df["method"] == PAPER_EXPONENT) & df["dataset"].isin(PAPER_TABLE)]
    if rows.empty:
        raise FileNotFoundError("no diagnosis rows in paper003")
    return rows


@register_diagnosis("paper003", "Sec. 4.4, Fig. 1", "accounting", "python -m dpbench analysis paper003")
def explain_tukey_matches(load) -> str:
    """The bolding rule with TukeyEM's rows replaced by the paper's exponent's at the same m and seeds."""
    from dpbench.reproduction import VERDICTS

    df = load("paper003")
    theirs = _paper_exponent_rows(df)
    tab = table(df)
    for i in tab.index[tab["method"] == PAPER_TUKEY]:
        runs = theirs.loc[(theirs["dataset"] == tab.at[i, "dataset"]) & (theirs["m"] == tab.at[i, "m"]), "train_r2"]
        q = runs.quantile([0.25, 0.5, 0.75]) if len(runs) else pd.Series(np.nan, [0.25, 0.5, 0.75])
        tab.loc[i, ["train_q1", "train_r2", "train_q3"]] = q.to_numpy()
    v = _matches(tab)
    return (f"with the paper's exponent exp((eps/2) i) (not private under dpbench's relation; same m and seeds) the "
            f"same rule is {VERDICTS[v.holds]}: {v.measured}")


@claim("paper003", "003", "Sec. 4.4, Fig. 1 (table)",
       "TukeyEM: Synthetic 0.997, California 0.099, Diamonds 0.307, Garbage 0.534 (median R^2)",
       "the paper's numbers with a tolerance: TukeyEM's median train R^2 (m by the paper's rule)"
       " within 0.05 of the paper's on every dataset with results")
def claim_tukey_values(load):
    tab = _table(load)
    tk = tab[tab["status"] == "ok"].set_index(["method", "dataset"])
    names = sorted(tk.loc[PAPER_TUKEY].index)
    diffs = {n: tk.loc[(PAPER_TUKEY, n), "train_r2"] - PAPER_TABLE[n][2] for n in names}

    def one(n):
        row = tk.loc[(PAPER_TUKEY, n)]
        return f"{n}: {row['train_r2']:.3f} at m = {row['m']:.0f} (paper {PAPER_TABLE[n][2]})"

    return Verdict(all(abs(v) <= 0.05 for v in diffs.values()) if diffs else None, "; ".join(map(one, names)))


@register_diagnosis("paper003", "Sec. 4.4, Fig. 1 (table)", "accounting", "python -m dpbench analysis paper003")
def explain_tukey_values(load) -> str:
    """The exponent (accounting) and, for California, the copy (data): TukeyEM with the paper's exponent."""
    diag = diagnosis(load("paper003"))
    if diag.empty:
        raise FileNotFoundError("no diagnosis rows in paper003")
    return ("the paper's exponent exp((eps/2) i), not private under dpbench's add/remove relation where dpbench "
            "keeps exp((eps/2) i / 2), and the data copy (OpenML's California, per-household averages, against "
            "the paper's Kaggle totals): " + diagnosis_text(diag))


@claim("paper003", "003", "Sec. 4.3, Fig. 2 (left)",
       "As d grows, the number of models required to pass the PTR threshold grows.",
       "the smallest m whose mean PTR distance clears the threshold is non-decreasing in d and "
       "larger at the largest d than at the smallest; and a one-sided sign test over (m, consecutive d) pairs that "
       "the mean distance falls as d grows, p < 0.05 (needs 5 pairs); not reproduced when the smallest m is not "
       "growing so or the distance falls in at most half of the pairs")
def claim_m_grows_with_d(load):
    df = load("paper003")
    f2 = df[df["part"] == "fig2"]
    mean = f2.groupby(["d", "m"])["ptr_distance"].mean().reset_index()
    dist = mean.pivot(index="m", columns="d", values="ptr_distance").sort_index(axis=1)
    step = np.diff(dist.to_numpy(), axis=1)
    falls, rises = int((step < 0).sum()), int((step > 0).sum())
    p = sign_test(falls, falls + rises)
    need = {}
    for d, g in mean.groupby("d"):
        ok = g[g["ptr_distance"] >= f2["ptr_threshold"].iloc[0]]
        need[int(d)] = int(ok["m"].min()) if len(ok) else math.inf
    ordered = [need[d] for d in sorted(need)]
    grows = all(a <= b for a, b in zip(ordered, ordered[1:], strict=False)) and ordered[0] < ordered[-1]
    text = ("smallest m whose mean distance clears the threshold: "
            + ", ".join(f"d={d}: {v}" for d, v in sorted(need.items()))
            + f"; distance falls with d in {falls}/{falls + rises} (m, d) steps (p = {p:.3g})")
    if falls + rises < MIN_CELLS:
        return Verdict(None, text)
    if not grows or falls <= rises:
        return Verdict(False, text)
    return Verdict(True if p < ALPHA else None, text)


@claim("paper003", "003", "Sec. 4.3",
       "Furthermore, across many datasets, simply selecting m = 1000 typically produces nearly optimal R^2",
       "on more than half of the datasets, the median train R^2 at m = 1000 within 0.05 of "
       "the best median over the m whose PTR checks all pass", effect=False)
def claim_m1000(load):
    df = load("paper003")
    return _m1000(df[(df["part"] == "m_sweep") & (df["method"] == PAPER_TUKEY)])


def _m1000(sw: pd.DataFrame) -> Verdict:
    """m = 1000 within 0.05 of the best median R^2 over the m whose PTR checks all pass, on most datasets."""
    passed = sw.groupby(["dataset", "m"])["ptr_passed"].mean().unstack("m") == 1.0  # Fig. 5 starts where all pass
    med = sw.groupby(["dataset", "m"])["train_r2"].median().unstack("m").where(passed)
    if 1000 not in med.columns:
        return Verdict(None, "m = 1000 not run")
    gap = med.max(axis=1) - med[1000]
    return Verdict(bool((gap <= 0.05).mean() > 0.5),
                   "; ".join(f"{n}: R^2(m=1000) {med.loc[n, 1000]:.3f}, best {med.loc[n].max():.3f}"
                             for n in med.index))


# none found: with the paper's exponent the reading still fails on California and Diamonds (m = 1000 0.075 vs
# 0.307 at m = 1250, 0.159 vs 0.585), where TukeyEM's median R^2 over 50 trials swings between neighbouring m
@register_diagnosis("paper003", "Sec. 4.3", "none found", "python -m dpbench analysis paper003")
def explain_m1000(load) -> str:
    """The same reading of TukeyEM with the paper's exponent at every m (not private under dpbench's relation)."""
    from dpbench.reproduction import VERDICTS

    v = _m1000(_paper_exponent_rows(load("paper003")))
    return (f"with the paper's exponent exp((eps/2) i) (not private under dpbench's relation) the same reading is "
            f"{VERDICTS[v.holds]}: {v.measured}")


@claim("paper003", "003", "Sec. 4.5, Fig. 2 (right)",
       "TukeyEM is slower than the covariance matrix-based methods NonDP and AdaSSP, but it still runs in under one "
       "second [...] TukeyEM's runtime also, as expected, depends linearly on the number of models m.",
       "Synthetic, at every m whose parts hold at least d rows: the median CPU seconds of 5 fits below 1 s, and "
       "Pearson correlation of CPU seconds with m above 0.9 (at most ~0.1% for 8 m's with times unrelated to m)")
def claim_runtime(load):
    df = load("paper003")
    rt = df[(df["part"] == "runtime") & (df["method"] == "TukeyEM")]
    t = rt.set_index("m")["cpu_seconds"]
    r = float(np.corrcoef(t.index, t.values)[0, 1])
    return Verdict(bool(t.max() < 1.0 and r > 0.9),
                   f"CPU seconds (median of {rt['repeats'].min():.0f}) from {t.min():.3f} (m={t.idxmin():.0f}) to "
                   f"{t.max():.3f} (m={t.idxmax():.0f}) over {len(t)} m's; correlation with m {r:.2f}")
