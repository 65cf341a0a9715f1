"""Diagnosis of paper 000 Figs. 7 and 9 (TukeyEM vs fixed BoostedAdaSSP under label / feature outliers): does
TukeyEM win in more cells than the paper's region because fixed BoostedAdaSSP's x_bound = 1 (Table I) meets
Sec. V's unscaled covariates x ~ N(0, I_10) (row norms ~3.1)?

Clipping such rows to norm 1 (in fitting and in prediction) keeps only their direction, a bias that no noise
level and no n removes.  Two measured experiments:

- *floor*: BoostedAdaSSP with its registry defaults at epsilon 1e4 (mu ~137 at delta 1e-6: the noiseless limit; a
  private algorithm still, just with almost no noise), the same with the covering x_bound below, non-private OLS,
  and non-private least squares on the rows clipped to norm 1 (the best linear fit on such rows), on the clean
  model (eq. 9) and on each figure's corruption at the grid's smallest p, for several n and the sweep's seeds;
- *covering*: every BoostedAdaSSP run of the figure's sweep with p <= 0.1 (the cells the claims judge; p = 0.2
  is dpbench's extension and decides nothing) refitted with the same eps, delta, data and seed but x_bound = the
  99.9% quantile of ||x|| for x ~ N(0, I_d) (chi with d degrees of freedom): a public bound from the design (d and
  the covariate law the paper states), never from the data.  The claim's own check re-judges the cells with
  TukeyEM's rows of the sweep.  The runs of `CHECK_SEEDS` are also refitted with x_bound 1: the refit
  reproduces the sweep.

`smoke=True`: the smallest n and p, two seeds; seconds.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from dpbench import algorithms, claims, reference
from dpbench.algorithms.base import clip_rows
from dpbench.algorithms.shared_data import SharedData
from dpbench.analyses import analysis, parallel_map
from dpbench.analyses import paper000_robustness as rob
from dpbench.analyses.paper000_robustness import OURS, PAPER_MAX_P
from dpbench.claims import diagnosis, released
from dpbench.data import label_options, load_dataset
from dpbench.plots.robustness import settings
from dpbench.reproduction import paper_rows
from dpbench.runner.fitting import batch_groups, fit_group
from dpbench.runner.scoring import evaluate

NAME = "diagnose_robust"
FIGURES = {  # figure -> (claim's where, its corruption, the region where the paper says TukeyEM wins)
    "robust_label": ("Sec. V-A, Fig. 7", "label", rob._small_p_large_n, "p = 1%, n >= median n"),
    "robust_feature": ("Sec. V-B, Fig. 9", "feature", rob._few_samples_few_corrupted, "n <= median n, p <= 5%"),
}
D, N_TEST, NOISE_VAR = 10, 10_000, 0.1  # the experiments' d and test size (conf/base/robust.yaml); Var z (eq. 9)
COVER_QUANTILE = 0.999
NOISELESS_EPS = 1e4  # the accountant solves mu up to 1e3; mu(1e4, 1e-6) ~ 137: noise negligible at n >= 1e4
FLOOR_N, FLOOR_SEEDS = (10_000, 100_000, 1_000_000), (0, 1, 2)  # the run uses the sweep's seeds
CHECK_SEEDS = (0,)
SMOKE_N, SMOKE_SEEDS = 10_000, (0, 1)
METHODS = {  # floor method -> label
    "fixed_noiseless": "BoostedAdaSSP x_bound 1, eps 1e4",
    "covering_noiseless": "BoostedAdaSSP covering x_bound, eps 1e4",
    "ols_clipped": "OLS on rows clipped to norm 1 (non-private)",
    "ols": "OLS (non-private)",
}


def covering_x_bound(d: int = D, q: float = COVER_QUANTILE) -> float:
    """The q-quantile of ||x|| for x ~ N(0, I_d): a bound on the clean rows from the design alone."""
    return float(stats.chi(d).ppf(q))


def _spec(outlier: str, fraction: float, n_train: int) -> dict:
    return {"name": "synthetic", "outlier": outlier, "fraction": fraction, "n_train": int(n_train),
            "n_test": N_TEST, "d": D}


def _load(spec: dict, seed: int, split: str = "fixed"):
    """The sweep's loading of a synthetic unit (runner.workers: load_dataset with the run's data seed)."""
    return load_dataset(spec, split_seed=int(seed), data_dir=None, split=split)


def _boosted(epsilon, delta, random_state, x_bound, params=None):
    params = {**(params or {}), "x_bound": float(x_bound)}
    return algorithms.make(OURS, epsilon=float(epsilon), delta=float(delta), random_state=random_state, **params)


def _ols_clipped_mse(data, bound: float = 1.0) -> float:
    """Test MSE of least squares on the rows clipped to norm `bound`, predicting on clipped test rows."""
    theta = np.linalg.lstsq(clip_rows(data.X_train, bound), data.y_train, rcond=None)[0]
    return float(np.mean((clip_rows(data.X_test, bound) @ theta - data.y_test) ** 2))


def floor(corruptions: dict[str, float], ns=FLOOR_N, seeds=FLOOR_SEEDS, delta: float = 1e-6,
          smoke: bool = False) -> list[dict]:
    """Rows of the floor experiment: `corruptions` {outlier: fraction} ('none': the clean model); its cells on two
    processes (`parallel_map`), the largest n first."""
    cells = [(outlier, p, n, seed, delta) for (outlier, p), n, seed in
             ((c, n, s) for c in corruptions.items() for n in ns for s in seeds)]
    out = [row for part in parallel_map(_floor_cell, cells, smoke, cost=lambda cell: cell[2]) for row in part]
    for r in out:
        r["method_label"] = METHODS[r["method"]]
    return out


def _floor_cell(outlier: str, p: float, n: int, seed: int, delta: float) -> list[dict]:
    cover, out = covering_x_bound(), []
    data = _load(_spec(outlier, p, n), seed)
    base = {"experiment": "floor", "outlier": outlier, "fraction": p, "n_train": int(n), "seed": int(seed),
            "delta": delta}
    for method, x_bound in (("fixed_noiseless", 1.0), ("covering_noiseless", cover)):
        est = _boosted(NOISELESS_EPS, delta, seed, x_bound).fit(data.X_train, data.y_train)
        out.append({**base, "method": method, "private": True, "epsilon": NOISELESS_EPS, "x_bound": x_bound,
                    "status": getattr(est, "fit_status_", "ok"), "test_mse": evaluate(est, data)["test_mse"]})
    ols = algorithms.make("ols").fit(data.X_train, data.y_train)
    out.append({**base, "method": "ols", "private": False, "test_mse": evaluate(ols, data)["test_mse"]})
    out.append({**base, "method": "ols_clipped", "private": False, "x_bound": 1.0, "test_mse": _ols_clipped_mse(data)})
    return out


def covering(figure: str, runs: pd.DataFrame, check_seeds=CHECK_SEEDS, smoke: bool = False) -> list[dict]:
    """The figure's BoostedAdaSSP runs refitted with the covering x_bound, batched per unit as the runner does
    (and, for `check_seeds`, with their own x_bound: `test_mse_refit`, to compare with the sweep's); the units on
    two processes (`parallel_map`), the largest first."""
    units = [(figure, key, unit, check_seeds) for key, unit in
             runs.groupby(["dataset", "data_seed", "split"], sort=True)]
    size = lambda job: float(len(job[2]) * job[2]["n_train"].iloc[0])  # noqa: E731 - its fits' cost
    return [row for part in parallel_map(_cover_unit, units, smoke, cost=size) for row in part]


def _cover_unit(figure: str, key: tuple, unit: pd.DataFrame, check_seeds) -> list[dict]:
    (dataset, data_seed, split), cover, out = key, covering_x_bound(), []
    data = _load({**label_options(dataset), "n_test": int(unit["n_test"].iloc[0])}, data_seed, split)
    shared = SharedData(data.X_train, data.y_train)
    made = []  # (run, kind, estimator)
    for r in unit.itertuples():
        params = json.loads(r.params)
        made.append((r, "covering", _boosted(r.epsilon, r.delta, int(r.random_state), cover, params)))
        if int(r.seed) in check_seeds:
            made.append((r, "refit", _boosted(r.epsilon, r.delta, int(r.random_state), params["x_bound"], params)))
    seconds = {}
    for group in batch_groups([m[2] for m in made]):
        per_run = fit_group([made[i][2] for i in group], data.X_train, data.y_train, shared)
        seconds.update(dict.fromkeys(group, per_run))
    refits = {r.run_id: evaluate(e, data)["test_mse"] for r, kind, e in made if kind == "refit"}
    for i, (r, kind, est) in enumerate(made):
        if kind != "covering":
            continue
        opts = label_options(dataset)
        out.append({"experiment": "covering", "figure": figure, "source_run_id": r.run_id, "method":
                    "covering", "method_label": f"BoostedAdaSSP x_bound {cover:.3g}", "private": True,
                    "outlier": opts["outlier"], "fraction": opts["fraction"], "n_train": int(r.n_train),
                    "dataset": dataset, "seed": int(r.seed), "data_seed": int(data_seed),
                    "random_state": int(r.random_state), "epsilon": float(r.epsilon), "delta": float(r.delta),
                    "x_bound": cover, "params": json.dumps({**json.loads(r.params), "x_bound": cover},
                                                           sort_keys=True),
                    "status": getattr(est, "fit_status_", "ok"), "test_mse": evaluate(est, data)["test_mse"],
                    "test_mse_reference": float(r.test_mse), "test_mse_refit": refits.get(r.run_id, np.nan),
                    "fit_seconds": seconds[i]})
    return out


# ---- judging ------------------------------------------------------------------------------------------------

def with_covering(diag: pd.DataFrame, fig: pd.DataFrame, figure: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(the figure's rows as the sweep made them, the same with BoostedAdaSSP's refitted runs in place of its
    own), both restricted to the BoostedAdaSSP runs that were refitted (partners untouched)."""
    rows = diag[(diag["experiment"] == "covering") & (diag["figure"] == figure) & released(diag)]
    by_run = rows.set_index("source_run_id")
    ours = fig["algorithm"] == OURS
    kept = fig[~ours | fig["run_id"].isin(by_run.index)]
    mine = kept[kept["algorithm"] == OURS]
    new = mine.assign(**{c: mine["run_id"].map(by_run[c]) for c in ("test_mse", "status", "params")})
    if "zero_model" in new:
        new["zero_model"] = None  # the refit's status decides
    return kept, pd.concat([kept[kept["algorithm"] != OURS], new], ignore_index=True)


def tukey_wins(frame: pd.DataFrame, figure: str) -> dict[str, dict]:
    """Per TukeyEM setting: its wins over BoostedAdaSSP in the judged cells (the claim's cells), those outside the
    paper's region, the judged cells, BoostedAdaSSP's median cell mean, and the largest relative MSE margin of a
    TukeyEM win outside the region."""
    region = FIGURES[figure][2]
    out = {}
    for label, c in rob._comparisons(frame, "tukey").items():
        t, _ = rob._judged(c)
        wins = t[~t["ours_better"]]
        outside = wins[~region(wins, t)]
        out[label] = {"wins": len(wins), "outside": len(outside), "cells": len(t),
                      "ours_median": float(t["ours"].median()) if len(t) else np.nan,
                      "margin": float((outside["ours"] / outside["partner"]).max() - 1) if len(outside) else 0.0}
    return out


def verdict(frame: pd.DataFrame, figure: str) -> bool | None:
    """The registered claim's own verdict on `frame`."""
    (c,) = [c for c in claims.claims(figure) if c.where == FIGURES[figure][0]]
    return c.check(lambda _: frame).holds


VERDICT = {True: "reproduced", False: "not reproduced", None: "undecided"}


def _floor_text(diag: pd.DataFrame, outlier: str, fig: pd.DataFrame | None = None) -> str:
    """The floor experiment's numbers: clean data (and the figure's corruption at the smallest p, beside the
    sweep's own fixed BoostedAdaSSP there, `fig`), per n."""
    f = diag[(diag["experiment"] == "floor") & diag["test_mse"].notna()]
    if f.empty:
        return "floor not measured"
    m = f.groupby(["outlier", "method", "n_train"])["test_mse"].mean()
    ns = sorted(f["n_train"].unique())
    per = lambda o, k: " / ".join(f"{m.get((o, k, n), np.nan):.2f}" for n in ns)  # noqa: E731
    text = (f"noiseless limit (eps {NOISELESS_EPS:g}; n {' / '.join(f'{n:,}' for n in ns)}): on clean data fixed "
            f"BoostedAdaSSP (x_bound 1) has test MSE {per('none', 'fixed_noiseless')}, as OLS on rows clipped to "
            f"norm 1 ({per('none', 'ols_clipped')}), while OLS has {per('none', 'ols')} and BoostedAdaSSP with "
            f"x_bound {covering_x_bound():.2f} (chi_{D} {COVER_QUANTILE:.1%} quantile, from d alone) "
            f"{per('none', 'covering_noiseless')} (noise variance {NOISE_VAR:g})")
    ps = f.loc[f["outlier"] == outlier, "fraction"]
    if len(ps):
        text += (f"; with {outlier} outliers at p {ps.iloc[0]:g}: fixed {per(outlier, 'fixed_noiseless')}, "
                 f"covering {per(outlier, 'covering_noiseless')}, OLS {per(outlier, 'ols')}")
        if fig is not None:
            sweep = settings(fig[(fig["algorithm"] == OURS) & released(fig)])
            sweep = sweep[(sweep["fraction"] == ps.iloc[0]) & sweep["seed"].isin(f["seed"].unique())]
            by = sweep.groupby(["n_train", "epsilon"])["test_mse"].mean()
            if len(by):
                eps = sorted(sweep["epsilon"].unique())
                cell = lambda e: " / ".join(f"{by.get((n, e), np.nan):.2f}" for n in ns)  # noqa: E731
                text += f" (the sweep's fixed BoostedAdaSSP there: {'; '.join(f'eps {e:g}: {cell(e)}' for e in eps)})"
    return text


def diagnosis_text(diag: pd.DataFrame, fig: pd.DataFrame, figure: str) -> str:
    """The one-line diagnosis of a figure's claim from the floor and covering rows and the sweep's rows."""
    where, outlier, _, describe = FIGURES[figure]
    floor_text = _floor_text(diag, outlier, fig)
    before, after = with_covering(diag, fig, figure)
    if not (after["algorithm"] == OURS).any():
        return f"{floor_text}; no refitted BoostedAdaSSP run matches the {figure} results"
    wb, wa = tukey_wins(before, figure), tukey_wins(after, figure)
    labels = list(wa)
    j = lambda d, k: " / ".join(str(d[lab][k]) for lab in labels)  # noqa: E731
    inside = lambda d: " / ".join(str(d[lab]["wins"] - d[lab]["outside"]) for lab in labels)  # noqa: E731
    names = " / ".join(lab.replace("TukeyEM ", "") for lab in labels)
    vb, va = verdict(before, figure), verdict(after, figure)
    out_b, out_a = sum(wb[x]["outside"] for x in labels), sum(wa[x]["outside"] for x in labels)
    margin = max(wa[x]["margin"] for x in labels)
    if va is True:
        end = "the set-up (Table I's x_bound 1 on unscaled N(0, I) covariates) explains the disagreement"
    elif out_a < out_b:
        end = (f"the set-up explains {out_b - out_a} of TukeyEM's {out_b} wins outside the paper's region (the "
               f"reference's failure); left: {out_a} such win(s)" +
               (f", by at most {100 * margin:.2g}% in MSE" if out_a else "") +
               f", and TukeyEM wins in the region in {inside(wa)} cells (x_bound 1: {inside(wb)}), BoostedAdaSSP "
               f"now being near the noise floor in most cells")
    else:
        end = "the set-up does not explain it"
    return (f"{floor_text}. Refitted at the sweep's eps, n, p <= {PAPER_MAX_P:g} and seeds with x_bound "
            f"{covering_x_bound():.2f}, BoostedAdaSSP's median cell mean test MSE falls from "
            f"{wb[labels[0]]['ours_median']:.3g} to {wa[labels[0]]['ours_median']:.3g}; TukeyEM ({names}) is lower "
            f"in {j(wa, 'wins')} of {j(wa, 'cells')} judged cells (x_bound 1: {j(wb, 'wins')}), outside the paper's "
            f"region ({describe}) {j(wa, 'outside')} (x_bound 1: {j(wb, 'outside')}); the claim's check with the "
            f"covering bound: {VERDICT[va]} (x_bound 1: {VERDICT[vb]}): {end}")


def _explain(figure):
    def explain(load) -> str:
        """The diagnosis line from `load(name)` (the report's loader): this analysis's rows and the sweep's."""
        return diagnosis_text(load(NAME), load(figure), figure)
    return explain


# Fig. 7: the set-up explains the reference's out-of-region wins, but with the covering bound BoostedAdaSSP beats
# TukeyEM inside the paper's region too: a correct set-up does not give the paper's pattern (none found)
explain_fig7 = diagnosis("robust_label", FIGURES["robust_label"][0], "none found",
                         f"python -m dpbench analysis {NAME}")(_explain("robust_label"))
explain_fig9 = diagnosis("robust_feature", FIGURES["robust_feature"][0], "set-up",
                         f"python -m dpbench analysis {NAME}")(_explain("robust_feature"))


# ---- the analysis -------------------------------------------------------------------------------------------

def source_dir(out: Path) -> Path:
    """Where the sweeps' rows are read: the output's results directory if it has them, else the reference."""
    return out.parent if all((out.parent / f).is_dir() for f in FIGURES) else reference.DIR


def draw(diag: pd.DataFrame, figs: dict[str, pd.DataFrame]):
    """Cell mean test MSE against n: fixed and covering BoostedAdaSSP and TukeyEM, a row per figure, a column
    per judged p; eps 1 solid, eps 0.5 dashed."""
    import matplotlib.pyplot as plt

    from dpbench.plots.common import grid
    from dpbench.plots.robustness import variants

    ps = sorted(diag.loc[diag["experiment"] == "covering", "fraction"].unique())
    fig, axes = plt.subplots(len(figs), len(ps), figsize=(4.2 * len(ps), 3.4 * len(figs)), squeeze=False,
                             sharex=True, sharey=True)
    colors = ["tab:blue", "tab:green", "tab:orange", "tab:red", "tab:purple"]
    for row, (figure, df) in enumerate(figs.items()):
        before, after = with_covering(diag, df, figure)
        cov = variants(settings(after[after["algorithm"] == OURS])).assign(variant_label="BoostedAdaSSP covering")
        rows = pd.concat([variants(settings(before[before["algorithm"].isin([OURS, "tukey"])])), cov])
        cells = rows[released(rows)].groupby(["variant_label", "epsilon", "fraction", "n_train"])["test_mse"].mean()
        for col, p in enumerate(ps):
            ax = axes[row, col]
            for k, label in enumerate(sorted(rows["variant_label"].unique())):
                for eps, style in ((1.0, "-"), (0.5, "--")):
                    try:
                        s = cells.loc[(label, eps, p)]
                    except KeyError:
                        continue
                    ax.plot(s.index, s.to_numpy(), style, marker="o", ms=3, color=colors[k % len(colors)],
                            label=f"{label}, eps {eps:g}")
            ax.axhline(NOISE_VAR, color="black", lw=0.8, ls=":")
            ax.set(xscale="log", yscale="log", title=f"{figure}: p = {p:g}", xlabel="n (train)")
            if col == 0:
                ax.set_ylabel("mean test MSE")
            grid(ax)
    fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="lower center", ncol=4, fontsize=7)
    fig.suptitle(f"paper 000 Figs. 7 / 9: BoostedAdaSSP with x_bound 1 (sweep) and {covering_x_bound():.2f} "
                 f"(covering, refitted) vs TukeyEM; dotted: noise variance", fontsize=9)
    fig.tight_layout(rect=(0, 0.09, 1, 1))
    return fig


@analysis(NAME, "paper 000 Figs. 7 / 9: fixed BoostedAdaSSP's x_bound 1 on unscaled N(0, I_10) rows: its bias "
                "floor, and the claims re-judged with an x_bound that covers the clean rows")
def run(out: Path, smoke: bool = False) -> list[Path]:
    from dpbench.plots.common import FORMATS, save

    src = source_dir(out)
    figs = {f: paper_rows(src, f) for f in FIGURES}
    rows, timing = [], {}
    for figure, df in figs.items():
        runs = settings(df[(df["algorithm"] == OURS) & released(df)])
        runs = runs[runs["fraction"] <= PAPER_MAX_P]
        if smoke:
            runs = runs[(runs["n_train"] == SMOKE_N) & (runs["fraction"] == runs["fraction"].min())
                        & runs["seed"].isin(SMOKE_SEEDS)]
        start = time.perf_counter()
        rows += covering(figure, runs, smoke=smoke)
        timing[figure] = time.perf_counter() - start
        print(f"{NAME}: {figure}: refitted {len(runs)} BoostedAdaSSP runs of {src / figure} in {timing[figure]:.0f} s")
    smallest = {FIGURES[f][1]: float(settings(df)["fraction"].min()) for f, df in figs.items()}
    start = time.perf_counter()
    seeds = sorted(set().union(*(df.loc[df["algorithm"] == OURS, "seed"].astype(int) for df in figs.values())))
    rows += floor({"none": 0.0, **smallest}, ns=(SMOKE_N,) if smoke else FLOOR_N,
                  seeds=SMOKE_SEEDS if smoke else seeds or FLOOR_SEEDS, smoke=smoke)
    print(f"{NAME}: floor experiment in {time.perf_counter() - start:.0f} s")
    diag = pd.DataFrame(rows).assign(source=str(src))
    path = out / f"{NAME}.parquet"
    diag.to_parquet(path, index=False)
    check = diag[diag["test_mse_refit"].notna()] if "test_mse_refit" in diag else diag.iloc[:0]
    if len(check):
        gap = (check["test_mse_refit"] / check["test_mse_reference"] - 1).abs().max()
        print(f"refit with x_bound 1 vs the sweep's test MSE: max relative difference {gap:.2g} over {len(check)} runs")
    fl = diag[diag["experiment"] == "floor"]
    print(fl.groupby(["outlier", "method", "n_train"])["test_mse"].mean().unstack("n_train").to_string(
        float_format=lambda v: f"{v:.4f}"))
    for figure, df in figs.items():
        before, after = with_covering(diag, df, figure)
        print(f"{figure}: TukeyEM wins, x_bound 1: {tukey_wins(before, figure)}")
        print(f"{figure}: TukeyEM wins, covering: {tukey_wins(after, figure)}")
        print(f"{figure} ({FIGURES[figure][0]}): {diagnosis_text(diag, df, figure)}")
    fig = draw(diag, figs)
    return [path, save(fig, out / f"{NAME}.png", FORMATS)]
