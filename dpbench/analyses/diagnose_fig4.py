"""Diagnosis of paper 000 Fig. 4 (c), both fixed: does BoostedAdaSSP win because of the ranges DP-EBM is given?

DP-EBM (interpret) bins every feature over a range and scales its leaf noise to the label's range; the DP-EBM
paper takes both as public and paper 000 does not say which it used (Table I tunes a "data clipping bound").
dpbench's fixed DP-EBM releases the ranges privately on 5% of the budget (issue 36); before that it used the public
box [-1, 1] for every feature and the label, which on raw tasks leaves one bin per feature and clips the labels.
This analysis refits every fixed DP-EBM run of the sweep `fig4` (same eps, delta, split and seed) with that public
box (`PUBLIC_BOX`: private_bounds False, feature_bound = y_bound = 1; still private: the box is data-independent)
and judges the claim's cells (fixed BoostedAdaSSP against fixed DP-EBM, `paper000_comparisons.cells`) with the
refits in DP-EBM's place and with the sweep's own runs.  `smoke=True`: the two cheapest datasets at epsilon 1.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pandas as pd

from dpbench import algorithms
from dpbench.analyses import analysis, parallel_map
from dpbench.analyses.diagnose_fig2 import (
    SMOKE_DATASETS,
    SMOKE_EPSILONS,
    _load_data,
    refit_units,
    source_dir,
    win_table,
)
from dpbench.analyses.paper000_comparisons import BOTH_FIXED, PARTNERS
from dpbench.claims import diagnosis, released
from dpbench.data import resolve_data_dir
from dpbench.reproduction import paper_rows
from dpbench.runner.scoring import evaluate

NAME, FIGURE, PARTNER = "diagnose_fig4", "fig4", "dp_ebm"
PUBLIC_BOX = {"private_bounds": False, "feature_bound": 1.0, "y_bound": 1.0}
WHERE = f"{PARTNERS[FIGURE][1]} (both fixed)"


def runs_to_refit(fig4: pd.DataFrame) -> pd.DataFrame:
    """DP-EBM's fixed runs of the sweep that released a model."""
    return fig4[(fig4["algorithm"] == PARTNER) & (fig4["tuning_mode"] == "fixed") & released(fig4)]


def refit(runs: pd.DataFrame, load_data) -> list[dict]:
    """One row per run: DP-EBM with PUBLIC_BOX over the run's own parameters, eps, delta, data and seed."""
    out = []
    for unit, base, data in refit_units(runs, load_data, {"experiment": NAME, "private": True}, out):
        for b, r in zip(base, unit.itertuples(), strict=True):
            params = {**json.loads(r.params), **PUBLIC_BOX}
            est = algorithms.make(PARTNER, random_state=int(r.random_state), epsilon=float(r.epsilon),
                                  delta=float(r.delta), **params)
            start = time.perf_counter()
            est.fit(data.X_train, data.y_train)
            out.append({**b, "params": json.dumps(params, sort_keys=True), "status": getattr(est, "fit_status_", "ok"),
                        "fit_seconds": time.perf_counter() - start, **evaluate(est, data)})
    return out


def comparison(diag: pd.DataFrame, fig4: pd.DataFrame) -> pd.DataFrame:
    """Per epsilon: fixed BoostedAdaSSP's wins over fixed DP-EBM with the refits (public box) in DP-EBM's place and
    with the sweep's runs, on the (dataset, epsilon) cells refitted; the sign test's p and the median MSE ratio."""
    if "test_mse" not in diag:  # nothing refitted (e.g. every dataset missing)
        return pd.DataFrame()
    done = diag[released(diag) & diag["test_mse"].notna()].set_index("source_run_id")
    keys = pd.MultiIndex.from_frame(done[["epsilon", "dataset"]]).unique()
    theirs = lambda df: (df["algorithm"] == PARTNER) & (df["tuning_mode"] == "fixed")  # noqa: E731
    boxed = fig4[~theirs(fig4) | fig4["run_id"].isin(done.index)].copy()
    ids = boxed.loc[theirs(boxed), "run_id"]
    boxed.loc[ids.index, "test_mse"] = ids.map(done["test_mse"])
    boxed.loc[ids.index, "status"] = ids.map(done["status"])
    if "zero_model" in boxed:  # the refit's status decides (no zero-model fallback with a public box)
        boxed.loc[ids.index, "zero_model"] = None
    return win_table({"public_box": boxed, "private": fig4}, FIGURE, PARTNER, BOTH_FIXED, keys)


def diagnosis_text(table: pd.DataFrame) -> str:
    if table.empty:
        return "no dataset with both a refitted fixed DP-EBM run and fixed BoostedAdaSSP runs of fig4 to compare"
    eps = list(table.index)
    per = lambda col: "/".join(f"{int(v)}" for v in table[col])  # noqa: E731
    of = lambda col: "/".join(dict.fromkeys(f"{int(v)}" for v in table[col]))  # noqa: E731
    g = lambda es: ", ".join(f"{e:g}" for e in es)  # noqa: E731
    boxed = [e for e in eps if table.at[e, "claim_holds_public_box"]]
    private = [e for e in eps if table.at[e, "claim_holds_private"]]
    return (f"with DP-EBM given the public box [-1, 1] for every feature and the label (dpbench's DP-EBM before "
            f"issue 36; paper 000 does not say which ranges its DP-EBM had) instead of ranges released privately on "
            f"5% of the budget, fixed BoostedAdaSSP has the lower mean test MSE on {per('wins_public_box')} of "
            f"{of('n_public_box')} datasets at eps {'/'.join(f'{e:g}' for e in eps)} (median MSE ratio "
            f"{' / '.join(f'{v:.2g}' for v in table['median_ratio_public_box'])}; the claim's sign test holds at eps "
            f"{g(boxed) or 'none'}); with the private ranges {per('wins_private')} of {of('n_private')} (holds at "
            f"eps {g(private) or 'none'})")


@diagnosis(FIGURE, WHERE, "set-up", f"python -m dpbench analysis {NAME}")
def explain(load) -> str:
    """The diagnosis line from this analysis' refits and, read now, the `fig4` sweep's runs."""
    return diagnosis_text(comparison(load(NAME), load(FIGURE)))


@analysis(NAME, "paper 000 Fig. 4 (c): fixed DP-EBM refitted with the public box [-1, 1] for every range (its "
                "set-up before issue 36): does the paper's 'both fixed' result turn on DP-EBM's ranges?")
def run(out: Path, smoke: bool = False) -> list[Path]:
    src = source_dir(out, FIGURE)
    fig4 = paper_rows(src, FIGURE)
    runs = runs_to_refit(fig4)
    if smoke:
        small = runs.groupby("dataset")[["n_train", "d"]].first().prod(axis=1).nsmallest(SMOKE_DATASETS).index
        runs = runs[runs["dataset"].isin(small) & runs["epsilon"].isin(SMOKE_EPSILONS)]
    print(f"{NAME}: refitting {len(runs)} fixed DP-EBM runs of {src / FIGURE} with {PUBLIC_BOX}")
    units = [unit for _, unit in runs.groupby(["dataset", "data_seed", "split"], sort=True)]
    load = _load_data(resolve_data_dir())
    size = lambda job: float(job[0]["n_train"].iloc[0] * job[0]["d"].iloc[0])  # noqa: E731 - a unit's fits' cost
    done = parallel_map(refit, [(unit, load) for unit in units], smoke, cost=size)
    diag = pd.DataFrame([row for part in done for row in part])
    diag["source"] = str(src / FIGURE)
    path = out / f"{NAME}.parquet"
    diag.to_parquet(path, index=False)
    table = comparison(diag, fig4)
    with pd.option_context("display.width", 200, "display.max_columns", 30):
        print(table.to_string(float_format=lambda v: f"{v:.4g}"))
    print(diagnosis_text(table))
    return [path]
