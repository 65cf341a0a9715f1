"""A metric against epsilon (log scale), mean +/- std over seeds, one panel per dataset."""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from dpbench.results import has_metrics  # noqa: E402

LABELS = {
    "boosted_adassp": "BoostedAdaSSP",
    "adassp": "AdaSSP",
    "ssp": "SSP",
    "ols": "OLS (non-private)",
    "ridge": "Ridge (non-private)",
}

METRIC_LABELS = {"test_mse": "test MSE", "test_f1": "test F1", "test_auroc": "test AUROC", "test_r2": "test $R^2$"}


def default_metric(df: pd.DataFrame) -> str:
    return "test_f1" if (df["task"] == "classification").all() else "test_mse"


def plot_privacy_curve(df: pd.DataFrame, out_path: str | Path, metric: str | None = None, title: str = "") -> Path:
    """Draw and save the figure; non-private algorithms are horizontal dashed lines.

    metric None: each panel shows its task's default (test MSE or test F1).
    """
    ok = df[has_metrics(df)]
    if ok.empty:
        raise ValueError("no successful runs to plot")
    datasets = sorted(ok["dataset"].unique())
    ncols = min(3, len(datasets))
    nrows = math.ceil(len(datasets) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(5.2 * ncols, 3.8 * nrows), squeeze=False)
    for ax, name in zip(axes.flat, datasets, strict=False):
        sub = ok[ok["dataset"] == name]
        panel_metric = metric or default_metric(sub)
        eps_all = sorted(sub["epsilon"].dropna().unique())
        colors = iter(plt.rcParams["axes.prop_cycle"].by_key()["color"] * 3)
        for algo, g in sub.groupby("algorithm", sort=True):
            color = next(colors)
            label = LABELS.get(algo, algo)
            if g["epsilon"].isna().all():
                m, s = g[panel_metric].mean(), g[panel_metric].std(ddof=0)
                ax.axhline(m, ls="--", color=color, label=label)
                if eps_all:
                    ax.fill_between(eps_all, m - s, m + s, color=color, alpha=0.1)
                continue
            stats = g.groupby("epsilon")[panel_metric].agg(["mean", "std"]).reset_index()
            ax.errorbar(stats["epsilon"], stats["mean"], yerr=stats["std"].fillna(0), marker="o", capsize=3,
                        color=color, label=label)
            ax.fill_between(stats["epsilon"], stats["mean"] - stats["std"].fillna(0),
                            stats["mean"] + stats["std"].fillna(0), alpha=0.15, color=color)
        ax.set_xscale("log")
        if panel_metric.endswith("mse") and (sub[panel_metric] > 0).any():
            ax.set_yscale("log")
        ax.set_xlabel(r"$\varepsilon$")
        ax.set_ylabel(METRIC_LABELS.get(panel_metric, panel_metric))
        ax.set_title(name, fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    for ax in list(axes.flat)[len(datasets):]:
        ax.axis("off")
    n_seeds = ok["seed"].nunique()
    fig.suptitle(f"{title}  (mean $\\pm$ std over {n_seeds} seeds)".strip())
    fig.tight_layout()
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out_path, dpi=130)
    plt.close(fig)
    return out_path
