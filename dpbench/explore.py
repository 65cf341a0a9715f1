"""What notebooks/explore_results.ipynb computes, as functions the tests can check against plain pandas.

A cell is one setting measured over seeds: (experiment, tuning mode, setting, dataset, epsilon, delta, split),
where a setting is an algorithm with the parameters that vary within its experiment (`settings`).  Rows of
different experiments, modes or parameters are different measurements and are never pooled; two settings are
compared run by run, each run paired with exactly one run of the other (same data, budget and seed).
"""

from __future__ import annotations

import re

import matplotlib.ticker
import numpy as np
import pandas as pd
from scipy import stats

from dpbench import metrics
from dpbench.plots import common  # selects matplotlib's file backend: a notebook says %matplotlib inline after it
from dpbench.results import has_metrics
from dpbench.summary import settings
from dpbench.tuning import MODE_LABELS

CELL = ["experiment", "tuning_mode", "setting", "dataset", "epsilon", "delta", "split"]
SEED = ["seed", "data_seed"]  # what tells a cell's runs apart
PAIR = ["experiment", "tuning_mode", "dataset", "epsilon", "delta", "split", *SEED]  # a run's partner shares these


def prepare(rows: pd.DataFrame) -> pd.DataFrame:
    """The runs that released a model, with `setting`, `metric` (test MSE, or test F1 for classifiers) and its
    `value`; raises if two runs of one cell share a seed (the cell's keys would be missing an identity column)."""
    runs = rows[has_metrics(rows)].copy()
    runs["tuning_mode"] = runs["tuning_mode"].fillna("fixed")
    runs["setting"] = settings(runs)
    clf = runs["task"] == "classification"
    runs["metric"] = np.where(clf, "test_f1", "test_mse")
    runs["value"] = runs["test_f1"].where(clf, runs["test_mse"])
    twins = runs.duplicated(CELL + SEED, keep=False)
    if twins.any():
        raise ValueError(f"{twins.sum()} runs share a cell and a seed with another:\n"
                         f"{runs.loc[twins, CELL + SEED].head().to_string()}")
    return runs


def cells(runs: pd.DataFrame) -> pd.DataFrame:
    """Count, mean and std (over seeds) of the metric in each cell, and how many runs were an algorithm's
    fallback (counted in the mean, as the papers count them).  Non-private settings have epsilon and delta NaN."""
    g = runs.assign(fallback=runs["status"] != "ok").groupby(CELL + ["metric"], dropna=False)
    return g.agg(count=("value", "size"), mean=("value", "mean"), std=("value", "std"),
                 fallbacks=("fallback", "sum"))


def most_runs(runs: pd.DataFrame) -> list[str]:
    """The two private settings with the most runs (ties by name): on paper 000's results BoostedAdaSSP and
    AdaSSP, its most frequent partner."""
    counts = runs.loc[runs["private"].astype(bool), "setting"].value_counts()
    return sorted(counts.index, key=lambda s: (-counts[s], s))[:2]


def pair(runs: pd.DataFrame, first: str, second: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Runs of `first` and `second` matched one to one on PAIR, within the (experiment, tuning mode)s where both
    ran; and the runs there without a partner (`side` says whose).  Raises if a run could match two."""
    keep = PAIR + ["metric", "value"]
    merged = runs.loc[runs["setting"] == first, keep].merge(
        runs.loc[runs["setting"] == second, keep], on=PAIR, how="outer", suffixes=("_first", "_second"),
        validate="one_to_one", indicator=True)
    both_ran = merged.groupby(["experiment", "tuning_mode"])["_merge"].transform(
        lambda m: m.ne("right_only").any() and m.ne("left_only").any())
    merged = merged[both_ran.astype(bool)]
    paired = merged[merged["_merge"] == "both"]
    paired = paired[PAIR].assign(metric=paired["metric_first"], first=paired["value_first"],
                                 second=paired["value_second"]).reset_index(drop=True)
    alone = merged[merged["_merge"] != "both"]
    alone = alone[PAIR].assign(side=np.where(alone["_merge"] == "left_only", first, second)).reset_index(drop=True)
    return paired, alone


def compare(paired: pd.DataFrame) -> pd.DataFrame:
    """Per (experiment, tuning mode, epsilon, delta): pairs, datasets, pairs where `first` is better, and the
    Wilcoxon signed-rank p of the paired differences (of the logs for MSE, so that datasets whose MSE differs by
    decades weigh alike; NaN with fewer than 2 pairs or none that differ)."""
    rows = []
    for key, g in paired.groupby(["experiment", "tuning_mode", "epsilon", "delta"], dropna=False):
        metric = metrics.of_column(g["metric"].iloc[0])
        lower = bool(metric and metric.lower_is_better)
        a, b = g["first"].to_numpy(float), g["second"].to_numpy(float)
        if metric and not metric.scale_free and (a > 0).all() and (b > 0).all():
            a, b = np.log(a), np.log(b)
        diff = a - b
        p = stats.wilcoxon(diff).pvalue if len(diff) > 1 and (diff != 0).any() else np.nan
        rows.append((*key, len(g), g["dataset"].nunique(), int(((diff < 0) if lower else (diff > 0)).sum()), p))
    return pd.DataFrame(rows, columns=["experiment", "tuning_mode", "epsilon", "delta", "pairs", "datasets",
                                       "first_better", "wilcoxon_p"]).set_index(["experiment", "tuning_mode",
                                                                                "epsilon", "delta"])


def figure(runs: pd.DataFrame, experiment: str, ncols: int = 5):
    """One experiment's metric against epsilon, a panel per dataset wrapped into rows of `ncols`: a line of means
    per (setting, tuning mode), colour by algorithm, line style by mode, each run a dot, fallbacks a red cross.
    A panel's y axis is logarithmic where its MSE spans more than a decade."""
    runs = runs[runs["experiment"] == experiment]
    datasets = sorted(runs["dataset"].unique(), key=_numbers_first)
    eps = sorted(runs["epsilon"].dropna().unique())
    width, height = (3.3, 2.6) if len(datasets) > 2 else (4.6, 3.4)  # small panels only when they are many
    fig, axes = common.panels(len(datasets), ncols=ncols, width=width, height=height, sharex=True)
    colors = common.algorithm_colors(runs["algorithm"].unique())
    styles = {mode: ["-", "--", ":", "-."][i % 4] for i, mode in enumerate(sorted(runs["tuning_mode"].unique()))}
    markers = {}  # an algorithm's settings (a sub-grid's parameter values) by marker
    for names in runs.groupby("algorithm")["setting"].unique():
        markers.update({s: "osD^v"[i % 5] for i, s in enumerate(sorted(names))})
    for ax, dataset in zip(axes, datasets, strict=True):
        sub = runs[runs["dataset"] == dataset]
        for (setting, mode), g in sub.groupby(["setting", "tuning_mode"]):
            algorithm = g["algorithm"].iloc[0]
            label = setting.replace(algorithm, common.algorithm_label(algorithm), 1)
            if len(styles) > 1:
                label += f" ({MODE_LABELS.get(mode, mode)})"
            kw = {"color": colors[algorithm], "ls": styles[mode], "label": label}
            if g["epsilon"].isna().all():  # non-private: no privacy level
                ax.axhline(g["value"].mean(), lw=1.2, **kw)
                continue
            ax.plot(g.groupby("epsilon")["value"].mean(), marker=markers[setting], ms=4, lw=1.4, **kw)
            fine, bad = g[g["status"] == "ok"], g[g["status"] != "ok"]
            ax.scatter(fine["epsilon"], fine["value"], s=8, alpha=0.45, color=colors[algorithm], lw=0)
            ax.scatter(bad["epsilon"], bad["value"], **{**common.FAILED, "s": 20})
        values = sub["value"]
        if not common.scale_free(sub["metric"].iloc[0]) and (values > 0).all() and values.max() > 10 * values.min():
            ax.set_yscale("log")
            ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())  # a decade's tick or more is labelled
        ax.set_xscale("log")
        ax.set_xticks(eps, [f"{e:g}" for e in eps])  # the grid's levels, not 6x10^-1 ...
        ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
        ax.set_title(common.dataset_label(dataset), fontsize=9)
        ax.tick_params(which="both", labelsize=7)
        common.grid(ax)
    for ax in axes[-ncols:]:
        ax.set_xlabel(r"$\varepsilon$", fontsize=8)
    for ax in axes[::ncols]:
        ax.set_ylabel(common.metric_label(runs["metric"].iloc[0]), fontsize=8)
    handles = {}
    for ax in axes:
        for h, label in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(label, h)
    if (runs["status"] != "ok").any():
        failed = common.failed_legend(runs.assign(failed=runs["status"] != "ok"))
        handles[failed.get_label()] = failed
    fig.suptitle(f"{experiment}: mean over seeds (line), each run (dot)", fontsize=10)
    fig.tight_layout()
    fig.legend(list(handles.values()), list(handles), loc="upper center", bbox_to_anchor=(0.5, 0.0),
               ncol=max(1, min(4, len(handles), len(axes) + 1)), fontsize=8, frameon=False)
    return fig


def _numbers_first(name: str) -> list:
    """Sort key reading the numbers in a name as numbers (synthetic_label_p0.05_n30000 before ..._n100000)."""
    return [(0, float(t)) if i % 2 else (1, t) for i, t in enumerate(re.split(r"(\d+(?:\.\d+)?)", name))]
