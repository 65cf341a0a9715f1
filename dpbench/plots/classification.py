"""Paper 001's classification figures (Rho et al.): scores against epsilon, against rounds, the effect of boosting.

Kinds (each a `plot.kind`; `python -m dpbench analysis paper001_figures` draws them all from results/paper001):

- `clf_vs_epsilon` (Figs 2, 7): a metric against epsilon at `n_rounds`, a panel for the mean over datasets and
  one per dataset; a line per method (BoostedAdaSSP per loss, DP-EBM, DP-XGBoost), the mean over seeds.
- `clf_vs_rounds` (Figs 3, 8): a metric against rounds, a panel per privacy level (mean over datasets).
- `boosting_effect` (Figs 4, 9, 10): BoostedAdaSSP's mean test F1 after R rounds over its mean after 1 round,
  against epsilon, a panel per dataset, a line per R in {10, 100, 1000}, for one `loss`.
- `dpebm_leaves` (Fig. 5): DP-EBM's metric against epsilon, a line per max_leaves; a (rounds, epsilon) where
  every run failed is a gap in the line and a red cross on the axis (the paper's missing dots); a dataset whose
  data is missing is a panel that says so.
- `nonprivate_rounds` (Fig. 6): the non-private boosted linear models' metric against rounds, a panel per dataset.

Averages over datasets use only the (method, epsilon, rounds) present on every dataset shown.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpbench.plots import common, figure

ROUNDS_METHODS = ("boosted_adassp_clf", "dp_ebm_clf", "dp_xgboost")
LEAF_COLORS = {1: "tab:olive", 10: "tab:cyan", 100: "tab:red", 1000: "k"}


def _loss(df: pd.DataFrame) -> pd.Series:
    """A row's loss, for the algorithms that take one (BoostedAdaSSP's classifier, boosted linear); else NaN."""
    return df["param_loss"] if "param_loss" in df else pd.Series(np.nan, index=df.index)


def method_of(df: pd.DataFrame) -> pd.Series:
    """The name of a row's method: the algorithm's label, with its loss where it takes one and the tuning mode
    when it is not fixed (paper 001 tunes DP-XGBoost's subsample)."""
    label = common.by_mode(df)["algorithm"].map(common.algorithm_label)
    loss = _loss(df)
    return label.where(loss.isna(), label + " (" + loss.fillna("").astype(str) + ")")


def _ok(df: pd.DataFrame) -> pd.DataFrame:
    ok = df[df["status"] == "ok"].copy()
    ok["method"] = method_of(ok)
    return ok


def _colors(ok: pd.DataFrame) -> dict:
    """method -> colour, from the rows' fields: the loss's (common.LOSS_COLORS) where the algorithm takes one,
    else the algorithm's own (common.algorithm_colors, keyed by name)."""
    by_name = common.algorithm_colors(ok["algorithm"].unique())
    loss = _loss(ok)
    colors = [common.LOSS_COLORS.get(v, by_name[a]) if pd.notna(v) else by_name[a]
              for a, v in zip(ok["algorithm"], loss, strict=True)]
    return dict(zip(ok["method"], colors, strict=True))


def _legend(fig, axes) -> None:
    handles = {}
    for ax in axes:
        for h, label in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(label, h)
    handles = dict(sorted(handles.items(), key=lambda kv: (len(kv[0]), kv[0])))
    common.outside_legend(fig, "right", list(handles.values()), list(handles), fontsize=8, frameon=False)


def _dataset_mean(g: pd.DataFrame, metric: str, keys: list[str], datasets: list[str]) -> pd.Series:
    """Mean over seeds per dataset, then over datasets where every dataset has the cell."""
    per = g.groupby(keys + ["dataset"])[metric].mean().unstack("dataset")
    return per.reindex(columns=datasets).dropna().mean(axis=1)



def _style(ax, xlabel: str, ylabel: str, title: str) -> None:
    """The panels' shared look: a log x axis, labels, a small title, the grid."""
    ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=9)
    common.grid(ax)

@figure("clf_vs_epsilon")
def clf_vs_epsilon(df: pd.DataFrame, title: str = "", metric: str = "test_f1", n_rounds: int = 100):
    ok = _ok(df)
    ok = ok[ok["param_n_rounds"] == n_rounds] if "param_n_rounds" in ok else ok.iloc[:0]
    ok = ok[ok["algorithm"].isin(ROUNDS_METHODS)]
    datasets = sorted(ok["dataset"].unique())
    fig, axes = common.panels(len(datasets) + 1, sharex=True, sharey=True, layout="constrained")
    colors = _colors(ok)
    for ax, name in zip(axes, ["average"] + datasets, strict=True):
        for method, g in ok.groupby("method"):
            line = (_dataset_mean(g, metric, ["epsilon"], datasets) if name == "average"
                    else g[g["dataset"] == name].groupby("epsilon")[metric].mean())
            if len(line):
                ax.plot(line, marker="o", ms=4, lw=1.5, color=colors[method], label=method)
        panel = "mean over datasets" if name == "average" else common.dataset_title(name)
        _style(ax, r"$\varepsilon$", common.metric_label(metric), panel)
        if not ax.lines:
            common.not_run(ax, f"no runs at {n_rounds} rounds")
    _legend(fig, axes)
    seeds = f"mean over {ok['seed'].nunique()} seeds" if len(ok) else "not run"
    fig.suptitle(f"{title}  {common.metric_label(metric)} vs epsilon, {n_rounds} rounds ({seeds})".strip(),
                 fontsize=10)
    return fig


@figure("clf_vs_rounds")
def clf_vs_rounds(df: pd.DataFrame, title: str = "", metric: str = "test_f1",
                  epsilons: tuple = (0.01, 0.1, 1.0, 10.0)):
    ok = _ok(df)
    ok = ok[ok["algorithm"].isin(ROUNDS_METHODS)]
    datasets = sorted(ok["dataset"].unique())
    fig, axes = common.panels(len(epsilons), ncols=len(epsilons), sharex=True, sharey=True, layout="constrained")
    colors = _colors(ok)
    for ax, eps in zip(axes, epsilons, strict=True):
        sub = ok[np.isclose(ok["epsilon"], eps)]
        for method, g in sub.groupby("method"):
            line = _dataset_mean(g, metric, ["param_n_rounds"], datasets)
            if len(line):
                ax.plot(line, marker="o", ms=4, lw=1.5, color=colors[method], label=method)
        _style(ax, "rounds", common.metric_label(metric), rf"$\varepsilon$ = {eps:g}")
        if not ax.lines:
            common.not_run(ax, rf"no runs at $\varepsilon$ = {eps:g}")
    _legend(fig, axes)
    fig.suptitle(f"{title}  {common.metric_label(metric)} vs rounds (mean over {', '.join(datasets)})".strip(),
                 fontsize=10)
    return fig


def boosting_ratio(df: pd.DataFrame, loss: str = "squared", metric: str = "test_f1") -> pd.DataFrame:
    """BoostedAdaSSP's mean metric after R rounds over its mean after 1 round, per (dataset, epsilon, R)."""
    ok = _ok(df)
    ok = ok[(ok["algorithm"] == "boosted_adassp_clf") & (ok["param_loss"] == loss)]
    return ratio_to_one_round(ok.groupby(["dataset", "epsilon", "param_n_rounds"])[metric].mean())


def ratio_to_one_round(mean: pd.Series) -> pd.DataFrame:
    """Mean metric per (dataset, epsilon, param_n_rounds) -> rows (dataset, epsilon, rounds, ratio): the mean after
    R > 1 rounds over the mean after 1 round (inf where the latter is 0); empty without 1-round cells."""
    mean = mean.unstack("param_n_rounds")
    if 1 not in mean:
        return pd.DataFrame()
    ratio = mean.drop(columns=1).div(mean[1], axis=0)
    return ratio.stack().rename("ratio").reset_index().rename(columns={"param_n_rounds": "rounds"})


@figure("boosting_effect")
def boosting_effect(df: pd.DataFrame, title: str = "", loss: str = "squared", metric: str = "test_f1"):
    ratio = boosting_ratio(df, loss, metric)
    datasets = sorted(ratio["dataset"].unique()) if len(ratio) else []
    fig, axes = common.panels(max(len(datasets), 1), sharex=True, layout="constrained")
    for ax, name in zip(axes, datasets, strict=False):
        for r, g in ratio[ratio["dataset"] == name].groupby("rounds"):
            ax.plot(g["epsilon"], g["ratio"], marker="o", ms=4, lw=1.5, label=f"{r} rounds / 1 round")
        ax.axhline(1.0, color="k", lw=0.8, ls=":")
        finite = ratio.loc[(ratio["dataset"] == name) & np.isfinite(ratio["ratio"]), "ratio"]
        if len(finite) and finite.max() > 10 * max(finite.min(), 1e-12):
            ax.set_yscale("log")
        _style(ax, r"$\varepsilon$", f"{common.metric_label(metric)} ratio", common.dataset_title(name))
    if not datasets:
        common.not_run(axes[0], f"no BoostedAdaSSP ({loss}) runs at 1 round and more")
    _legend(fig, axes)
    fig.suptitle(f"{title}  effect of boosting, BoostedAdaSSP ({loss} loss); no point where the mean F1 after "
                 "1 round is 0".strip(), fontsize=10)
    return fig


@figure("dpebm_leaves")
def dpebm_leaves(df: pd.DataFrame, title: str = "", metric: str = "test_f1", n_rounds: int = 100):
    runs = df[(df["algorithm"] == "dp_ebm_clf") & (df.get("param_n_rounds") == n_rounds)]
    datasets = sorted(runs["dataset"].unique())
    fig, axes = common.panels(max(len(datasets), 1), sharex=True, sharey=True, layout="constrained")
    for ax, name in zip(axes, datasets, strict=False):
        sub = runs[(runs["dataset"] == name) & (runs["status"] != "missing_data")]  # absent data: no run failed
        if sub.empty:
            common.not_run(ax, f"{common.dataset_title(name)}: data missing")
            continue
        for leaves, g in sub.groupby("param_max_leaves"):
            color = LEAF_COLORS.get(int(leaves), "tab:gray")
            cells = g.groupby("epsilon")
            mean = cells.apply(lambda c: c.loc[c["status"] == "ok", metric].mean(), include_groups=False)
            ax.plot(mean.index, mean.values, marker="o", ms=4, lw=1.5, color=color, label=f"max_leaves {leaves:g}")
            missing = mean.index[mean.isna()]
            ax.scatter(missing, np.zeros(len(missing)), **{**common.FAILED, "color": color})
        _style(ax, r"$\varepsilon$", common.metric_label(metric), common.dataset_title(name))
    if not datasets:
        common.not_run(axes[0], f"no DP-EBM runs at {n_rounds} rounds")
    _legend(fig, axes)
    fig.suptitle(f"{title}  DP-EBM by max leaves, {n_rounds} rounds (x at 0: every run failed)".strip(), fontsize=10)
    return fig


@figure("nonprivate_rounds")
def nonprivate_rounds(df: pd.DataFrame, title: str = "", metric: str = "test_f1"):
    ok = _ok(df)
    ok = ok[ok["algorithm"] == "boosted_linear_clf"]
    datasets = sorted(ok["dataset"].unique())
    fig, axes = common.panels(max(len(datasets), 1), sharex=True, layout="constrained")
    colors = _colors(ok)
    for ax, name in zip(axes, datasets, strict=False):
        for method, g in ok[ok["dataset"] == name].groupby("method"):
            ax.plot(g.groupby("param_n_rounds")[metric].mean(), marker="o", ms=4, color=colors[method], label=method)
        _style(ax, "rounds", common.metric_label(metric), common.dataset_title(name))
    if not datasets:
        common.not_run(axes[0], "no non-private boosted linear runs")
    _legend(fig, axes)
    fig.suptitle(f"{title}  non-private boosted linear models, test set".strip(), fontsize=10)
    return fig
