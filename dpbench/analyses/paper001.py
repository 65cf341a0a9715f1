"""Paper 001 (Rho et al., BoostedAdaSSP for classification): Fig. 1, the timing, all figures of the sweep, claims.

- `clf_fig1` (Fig. 1): mean training loss after each of 1000 rounds of the non-private boosted linear models
  (squared, logistic, hinge; `boosted_linear_clf`, alpha = 0, step 1) on telco and cod-rna (the paper's
  Fig. 1 does not name its data).
- `clf_timing`: wall time of one fit of 1000 rounds of DP-EBM (100 leaves) and of BoostedAdaSSP (squared loss)
  on telco at epsilon 1 (paper Sec. 3.3: 60.9 s and 4.5 s, data and machine not stated), 3 repetitions each.
- `paper001_figures`: every figure of results/paper001 (the `paper001` sweep): Figs 2/7 (F1, AUROC vs epsilon),
  3/8 (vs rounds), 4/9/10 (effect of boosting per loss), 5 (DP-EBM leaves, when run), 6 (non-private).
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pandas as pd

from dpbench import algorithms
from dpbench.analyses import analysis
from dpbench.claims import Verdict, claim

PAPER_SECONDS = {"dp_ebm_clf": 60.9, "boosted_adassp_clf": 4.5}
LOSSES = ("squared", "logistic", "hinge")


def _data(name: str):
    from dpbench.data import load_dataset
    from dpbench.data.catalog import resolve_data_dir

    return load_dataset({"name": name}, data_dir=resolve_data_dir())


@analysis("clf_fig1", "paper 001 Fig. 1: training loss vs rounds of non-private boosted linear models")
def clf_fig1(out: Path, smoke: bool) -> list[Path]:
    import matplotlib.pyplot as plt

    from dpbench.plots import common

    rounds = 50 if smoke else 1000
    rows = []
    for name in (["telco"] if smoke else ["telco", "cod-rna"]):
        d = _data(name)
        for loss in LOSSES:
            est = algorithms.make("boosted_linear_clf", loss=loss, n_rounds=rounds).fit(d.X_train, d.y_train)
            rows += [{"dataset": name, "loss": loss, "round": t + 1, "train_loss": v}
                     for t, v in enumerate(est.loss_curve_)]
    table = pd.DataFrame(rows)
    out.mkdir(parents=True, exist_ok=True)
    table.to_parquet(out / "clf_fig1.parquet")
    datasets = sorted(table["dataset"].unique())
    fig, axes = plt.subplots(1, len(datasets), figsize=(4.6 * len(datasets), 3.6), squeeze=False)
    colors = {"squared": "tab:green", "logistic": "tab:blue", "hinge": "tab:purple"}
    for ax, name in zip(axes[0], datasets, strict=True):
        for loss, g in table[table["dataset"] == name].groupby("loss"):
            ax.plot(g["round"], g["train_loss"], color=colors[loss], label=loss)
        ax.set_xscale("log")
        ax.set_xlabel("rounds")
        ax.set_ylabel("mean training loss")
        ax.set_title(common.dataset_title(name), fontsize=9)
        ax.legend(fontsize=8)
        common.grid(ax)
    fig.suptitle("Non-private boosted linear models: training loss vs rounds (paper 001 Fig. 1)", fontsize=10)
    fig.tight_layout()
    return [out / "clf_fig1.parquet", common.save(fig, out / "clf_fig1.png")]


@analysis("clf_timing", "paper 001 Sec. 3.3: seconds for 1000 rounds of DP-EBM vs BoostedAdaSSP on the same data")
def clf_timing(out: Path, smoke: bool) -> list[Path]:
    rounds, reps = (20, 1) if smoke else (1000, 3)
    d = _data("telco")
    rows = []
    types = {"feature_types": list(d.feature_types)}  # as the runner passes them
    for name, params in (("boosted_adassp_clf", {"loss": "squared"}), ("dp_ebm_clf", {"max_leaves": 100, **types})):
        for rep in range(reps):
            est = algorithms.make(name, epsilon=1.0, n_rounds=rounds, random_state=rep, **params)
            t0 = time.perf_counter()
            est.fit(d.X_train, d.y_train)
            rows.append({"algorithm": name, "dataset": "telco", "n_rounds": rounds, "repeat": rep,
                         "seconds": time.perf_counter() - t0, "paper_seconds": PAPER_SECONDS[name]})
    table = pd.DataFrame(rows)
    out.mkdir(parents=True, exist_ok=True)
    table.to_parquet(out / "clf_timing.parquet")
    print(table.groupby("algorithm")[["seconds", "paper_seconds"]].median().round(2).to_string())
    return [out / "clf_timing.parquet"]


FIGURES = [
    ("fig2_f1_vs_epsilon", {"kind": "clf_vs_epsilon", "metric": "test_f1"}),
    ("fig2_auroc_vs_epsilon", {"kind": "clf_vs_epsilon", "metric": "test_auroc"}),
    ("fig3_f1_vs_rounds", {"kind": "clf_vs_rounds", "metric": "test_f1"}),
    ("fig3_auroc_vs_rounds", {"kind": "clf_vs_rounds", "metric": "test_auroc"}),
    ("fig4_boosting_effect_squared", {"kind": "boosting_effect", "loss": "squared"}),
    ("fig9_boosting_effect_logistic", {"kind": "boosting_effect", "loss": "logistic"}),
    ("fig10_boosting_effect_hinge", {"kind": "boosting_effect", "loss": "hinge"}),
    ("fig5_dpebm_leaves_f1", {"kind": "dpebm_leaves", "metric": "test_f1"}),
    ("fig5_dpebm_leaves_auroc", {"kind": "dpebm_leaves", "metric": "test_auroc"}),
    ("fig6_nonprivate_f1", {"kind": "nonprivate_rounds", "metric": "test_f1"}),
    ("fig6_nonprivate_auroc", {"kind": "nonprivate_rounds", "metric": "test_auroc"}),
]


@analysis("paper001_figures", "paper 001 Figs 2-10 from the paper001 sweep (results/paper001)")
def paper001_figures(out: Path, smoke: bool) -> list[Path]:
    from dpbench import plots
    from dpbench.reproduction import load_results

    source = out.parent / ("paper001_smoke" if smoke else "paper001")
    if not (source / "parts").exists():
        experiment = "smoke/paper001" if smoke else "paper001"
        print(f"no results in {source}: run `python -m dpbench sweep experiment={experiment}` first")
        return []
    df = load_results(out.parent, source.name)  # the runs of the paper001 (and paper001_leaves) grids
    written = []
    for name, plot in FIGURES:
        if plot["kind"] == "dpebm_leaves" and ("param_max_leaves" not in df or df["param_max_leaves"].nunique() < 2):
            continue  # Fig. 5 needs the DP-EBM leaves grid (experiment paper001_leaves)
        written.append(plots.draw(plot, df, out / f"{name}.png", title="paper 001"))
    return written


# --------------------------------------------------------------------------- claims


def _cells(df: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Mean over seeds per (dataset, epsilon, rounds) and method: BoostedAdaSSP's best loss, DP-EBM, DP-XGBoost."""
    ok = df[(df["status"] == "ok") & df["algorithm"].isin(["boosted_adassp_clf", "dp_ebm_clf", "dp_xgboost"])]
    if "param_max_leaves" in ok:
        ok = ok[(ok["algorithm"] != "dp_ebm_clf") | (ok["param_max_leaves"] == 100)]
    keys = ["dataset", "epsilon", "param_n_rounds"]
    mean = ok.groupby(keys + ["algorithm", ok.get("param_loss", pd.Series(index=ok.index)).fillna("")])[metric].mean()
    mean = mean.unstack(["algorithm", mean.index.names[-1]])
    table = pd.DataFrame(index=mean.index)
    boosted = [c for c in mean.columns if c[0] == "boosted_adassp_clf"]
    if boosted:
        table["boosted"] = mean[boosted].max(axis=1)
    for name, col in (("dp_ebm_clf", "dpebm"), ("dp_xgboost", "dpxgb")):
        if (name, "") in mean:
            table[col] = mean[(name, "")]
    return table


@claim("paper001", "001", "BoostedAdaSSP (best loss) has a higher test F1 than DP-EBM at most privacy levels and "
                          "numbers of rounds.")
def _boosted_f1_beats_dpebm(load) -> Verdict:
    t = _cells(load("paper001"), "test_f1")
    if not {"boosted", "dpebm"} <= set(t):
        return Verdict(None, "no BoostedAdaSSP and DP-EBM runs on the same cells")
    t = t[["boosted", "dpebm"]].dropna()
    wins = (t["boosted"] > t["dpebm"]).mean()
    return Verdict(bool(wins > 0.5) if len(t) >= 4 else None,
                   f"BoostedAdaSSP's best-loss F1 above DP-EBM's in {wins:.0%} of {len(t)} (dataset, eps, rounds) "
                   f"cells; "
                   f"mean F1 {t['boosted'].mean():.3f} vs {t['dpebm'].mean():.3f}")


@claim("paper001", "001", "DP-EBM's test AUROC is slightly better than BoostedAdaSSP's.")
def _dpebm_auroc_slightly_better(load) -> Verdict:
    t = _cells(load("paper001"), "test_auroc")
    if not {"boosted", "dpebm"} <= set(t):
        return Verdict(None, "no BoostedAdaSSP and DP-EBM runs on the same cells")
    t = t[["boosted", "dpebm"]].dropna()
    better, gap = (t["dpebm"] > t["boosted"]).mean(), (t["dpebm"] - t["boosted"]).mean()
    return Verdict(bool(better > 0.5 and 0 < gap < 0.05) if len(t) >= 4 else None,
                   f"DP-EBM's AUROC above BoostedAdaSSP's best loss in {better:.0%} of {len(t)} cells; "
                   f"mean difference {gap:+.3f}")


@claim("paper001", "001", "The effect of boosting (F1 after 10/100/1000 rounds over F1 after 1 round, squared loss) "
                          "is a bell curve in epsilon: largest at an intermediate privacy level.")
def _bell_curve(load) -> Verdict:
    from dpbench.plots.classification import boosting_ratio

    ratio = boosting_ratio(load("paper001"), "squared")
    ratio = ratio[np.isfinite(ratio["ratio"])] if len(ratio) else ratio  # F1 after 1 round 0: no ratio
    if ratio.empty or ratio["epsilon"].nunique() < 4:
        return Verdict(None, "too few privacy levels with a defined ratio for a curve")
    shapes = []
    for (_, _), g in ratio.groupby(["dataset", "rounds"]):
        g = g.sort_values("epsilon")
        if len(g) < 4:
            continue
        i = int(np.argmax(g["ratio"].to_numpy()))
        peak = g["ratio"].iloc[i]
        shapes.append(0 < i < len(g) - 1 and peak > max(g["ratio"].iloc[0], g["ratio"].iloc[-1]) and peak > 1)
    if not shapes:
        return Verdict(None, "no (dataset, rounds) curve with 4 privacy levels of defined ratio")
    share = float(np.mean(shapes))
    peaks = ratio.loc[ratio.groupby(["dataset", "rounds"])["ratio"].idxmax(), ["dataset", "rounds", "epsilon"]]
    where = "; ".join(f"{r.dataset} {r.rounds} rounds: eps {r.epsilon:g}" for r in peaks.itertuples())
    return Verdict(share > 0.5, f"interior peak above both ends and above 1 in {share:.0%} of {len(shapes)} "
                                f"(dataset, rounds) curves; peaks at {where}")


@claim("paper001", "001", "DP-XGBoost underperforms (test F1 below BoostedAdaSSP's best loss) in most cases.")
def _dpxgb_worse(load) -> Verdict:
    t = _cells(load("paper001"), "test_f1")
    if "dpxgb" not in t or "boosted" not in t:
        return Verdict(None, "no DP-XGBoost runs")
    both = t[["boosted", "dpxgb"]].dropna()
    worse = (both["dpxgb"] < both["boosted"]).mean()
    vs_ebm = ""
    if "dpebm" in t:
        e = t[["dpebm", "dpxgb"]].dropna()
        vs_ebm = f"; below DP-EBM in {(e['dpxgb'] < e['dpebm']).mean():.0%} of {len(e)} cells"
    return Verdict(bool(worse > 0.5) if len(both) >= 4 else None,
                   f"DP-XGBoost's F1 below BoostedAdaSSP's best loss in {worse:.0%} of {len(both)} (dataset, eps, "
                   f"rounds) cells (mean F1 {both['dpxgb'].mean():.3f} vs {both['boosted'].mean():.3f}){vs_ebm}")


@claim("clf_timing", "001", "1000 rounds of DP-EBM take about 60.9 s and of BoostedAdaSSP about 4.5 s (13.5x).")
def _timing(load) -> Verdict:
    t = load("clf_timing")
    med = t.groupby("algorithm")["seconds"].median()
    if not {"dp_ebm_clf", "boosted_adassp_clf"} <= set(med.index) or (t["n_rounds"] < 1000).any():
        return Verdict(None, "clf_timing has not been run with 1000 rounds")
    ratio = med["dp_ebm_clf"] / med["boosted_adassp_clf"]
    return Verdict(bool(ratio >= 3), f"telco, 1000 rounds: DP-EBM {med['dp_ebm_clf']:.1f} s, BoostedAdaSSP "
                                     f"{med['boosted_adassp_clf']:.1f} s (ratio {ratio:.1f}x; paper 13.5x); holds "
                                     "means BoostedAdaSSP at least 3x faster")


@claim("clf_fig1", "001", "Without privacy, boosting a linear model with the squared loss does not lower the training "
                          "loss after the first round; with the logistic and hinge losses it does.")
def _fig1(load) -> Verdict:
    t = load("clf_fig1")
    drop = t.sort_values("round").groupby(["dataset", "loss"])["train_loss"].agg(lambda v: v.iloc[0] - v.iloc[-1])
    sq = drop.xs("squared", level="loss")
    others = drop.drop("squared", level="loss")
    holds = bool((sq.abs() < 1e-6).all() and (others > 1e-4).all())
    return Verdict(holds, "training-loss decrease from round 1 to the last: " + ", ".join(
        f"{d}/{loss} {v:.2e}" for (d, loss), v in drop.items()))
