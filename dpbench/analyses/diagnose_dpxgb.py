"""Diagnosis of paper 001's "DP-XGBoost, due to its inefficient privacy accounting, underperforms in most cases":
is dpbench's DP-XGBoost stronger than the paper's because its accounting is tighter?

dpbench composes DP-XGBoost's Poisson-subsampled rounds with the PLD accountant at delta
(`dpbench.algorithms.dp_xgboost`, "Accounting"); the `dp-xgboost` package paper 001 ran sums the rounds' amplified
epsilons (pure DP: T log(1 + q (e^eps_t - 1)) = eps), which leaves each round a smaller eps_t, the more so the
more rounds.  This analysis refits every released DP-XGBoost run of the sweep `paper001` (same parameters, tuned
subsample, split, epsilon, delta and seed) with the package's eps_t (`package_accounting`); nothing else changes.
Those fits are private (they spend less than asked), but they are not dpbench's algorithm: their rows say
`method` and are judged only here.  Judgment (`explain`) replaces DP-XGBoost's test F1 in the paper001 rows with
the refits' and reads the claim's own test (`paper001._sign`).
`smoke=True`: the cheapest dataset at its smallest epsilon.
"""

from __future__ import annotations

import contextlib
import json
import math
import time
from pathlib import Path

import pandas as pd

from dpbench import algorithms, reference
from dpbench.algorithms import dp_xgboost
from dpbench.analyses import analysis, parallel_map
from dpbench.analyses.paper001 import _sign
from dpbench.claims import diagnosis, released
from dpbench.data import MissingDataError, load_dataset, resolve_data_dir
from dpbench.reproduction import paper_rows
from dpbench.runner.scoring import evaluate

NAME, FIGURE, ALGORITHM = "diagnose_dpxgb", "paper001", "dp_xgboost"
METHOD = "DP-XGBoost, the dp-xgboost package's accounting (amplified epsilons summed)"


def package_epsilon(epsilon: float, delta: float, n_rounds: int, q: float) -> float:
    """The per-round eps_t whose amplified epsilons, summed over n_rounds, are epsilon (delta unused: pure DP)."""
    return math.log1p(math.expm1(epsilon / n_rounds) / q)


@contextlib.contextmanager
def package_accounting():
    """Within the block DP-XGBoost solves its per-round epsilon as the package does (`package_epsilon`)."""
    saved = dp_xgboost.per_round_epsilon
    dp_xgboost.per_round_epsilon = package_epsilon
    try:
        yield
    finally:
        dp_xgboost.per_round_epsilon = saved


def estimator(row, data):
    """The run's estimator as the sweep made it (`runner.fitting.make_estimator`): its parameters, the study's
    subsample, the dataset's feature types, its budget and seed."""
    tuned = json.loads(row.tuned_params) if isinstance(row.tuned_params, str) else {}
    params = {**json.loads(row.params), **tuned}
    if params.get("feature_types") is None:
        params["feature_types"] = list(data.feature_types)
    return algorithms.make(ALGORITHM, random_state=int(row.random_state), epsilon=float(row.epsilon),
                           delta=float(row.delta), **params)


def refit(runs: pd.DataFrame, data_dir) -> list[dict]:
    """One row per run of one (dataset, data seed, split): its refit with the package's accounting."""
    first = runs.iloc[0]
    try:
        data = load_dataset(first["dataset"], split_seed=int(first["data_seed"]), data_dir=data_dir,
                            split=first["split"])
    except MissingDataError:
        return []
    out = []
    for r in runs.itertuples():
        est = estimator(r, data)
        start = time.process_time()
        with package_accounting():
            est.fit(data.X_train, data.y_train)
        out.append({"experiment": NAME, "method": METHOD, "source_run_id": r.run_id, "dataset": r.dataset,
                    "epsilon": r.epsilon, "n_rounds": est.n_rounds, "subsample": est.subsample, "seed": r.seed,
                    "epsilon_per_round": est.epsilon_per_round_, "epsilon_per_round_reference": None,
                    "test_f1": evaluate(est, data)["test_f1"], "test_f1_reference": r.test_f1,
                    "cpu_seconds": time.process_time() - start})
    return out


def with_refits(rows: pd.DataFrame, diag: pd.DataFrame) -> pd.DataFrame:
    """paper001's rows with DP-XGBoost's test F1 replaced by its refit's (runs not refitted are dropped)."""
    f1 = diag.set_index("source_run_id")["test_f1"]
    xgb = rows["algorithm"] == ALGORITHM
    out = rows.assign(test_f1=rows["test_f1"].where(~xgb, rows["run_id"].map(f1)))
    return out[~xgb | out["test_f1"].notna()]


# none found: with the package's accounting (each round's epsilon 7.8x smaller at 1000 rounds) DP-XGBoost's F1 falls
# mostly at eps 10 (by 0.033 on average there), and the claim's test moves from 58/112 to 60/112 cells: undecided
@diagnosis(FIGURE, "Sec. 3.2, Fig. 2 (caption)", "none found", f"python -m dpbench analysis {NAME}")
def explain(load) -> str:
    diag, rows = load(NAME), load(FIGURE)
    if diag.empty:
        raise FileNotFoundError(f"no rows in {NAME}")
    ours = _sign(lambda _: with_refits(rows, diag), "test_f1", "boosted", "dpxgb", "below BoostedAdaSSP's")
    theirs = _sign(lambda _: rows[rows["run_id"].isin(diag["source_run_id"]) | (rows["algorithm"] != ALGORITHM)],
                   "test_f1", "boosted", "dpxgb", "below BoostedAdaSSP's")
    ratio = diag.groupby("n_rounds").apply(lambda g: (g["epsilon_per_round_reference"] / g["epsilon_per_round"])
                                          .median(), include_groups=False)
    from dpbench.reproduction import VERDICTS

    return ("with the dp-xgboost package's accounting (amplified per-round epsilons summed, pure DP: each round's "
            "epsilon smaller than dpbench's PLD composition gives by a median "
            + ", ".join(f"{v:.2g}x at {int(k)}" for k, v in ratio.items()) + " rounds) DP-XGBoost's F1 is "
            f"{ours.measured} ({VERDICTS[ours.holds]}); with dpbench's accounting, on the same runs: "
            f"{theirs.measured} ({VERDICTS[theirs.holds]})")


def source_dir(out: Path) -> Path:
    return out.parent if (out.parent / FIGURE).is_dir() else reference.DIR


@analysis(NAME, "paper 001's DP-XGBoost refitted with the dp-xgboost package's accounting: does its 'inefficient "
                "privacy accounting' explain the paper's result?")
def run(out: Path, smoke: bool = False) -> list[Path]:
    src = source_dir(out)
    rows = paper_rows(src, FIGURE)
    runs = rows[(rows["algorithm"] == ALGORITHM) & released(rows) & rows["test_f1"].notna()]
    if smoke:
        runs = runs[runs["dataset"] == "telco"]
        runs = runs[(runs["epsilon"] == runs["epsilon"].min()) & (runs["seed"] == runs["seed"].min())]
    groups = [g for _, g in runs.groupby(["dataset", "data_seed", "split", "epsilon"], sort=True)]
    print(f"{NAME}: refitting {len(runs)} DP-XGBoost runs of {src / FIGURE} in {len(groups)} groups")
    data_dir = resolve_data_dir()
    done = parallel_map(refit, [(g, data_dir) for g in groups], smoke)
    diag = pd.DataFrame([r for part in done for r in part])
    per_round = {r.run_id: r for r in runs.itertuples()}
    diag["epsilon_per_round_reference"] = [
        dp_xgboost.per_round_epsilon(float(per_round[i].epsilon), float(per_round[i].delta), int(n), float(q))
        for i, n, q in zip(diag["source_run_id"], diag["n_rounds"], diag["subsample"], strict=True)]
    diag["private"], diag["source"] = True, str(src / FIGURE)
    path = out / f"{NAME}.parquet"
    diag.to_parquet(path, index=False)
    if not smoke:
        print(explain(lambda name: diag if name == NAME else rows))
    return [path]
