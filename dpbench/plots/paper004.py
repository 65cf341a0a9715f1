"""Paper 004's (DP-ROBGD) figures from the `paper004_*` analyses' rows: excess error vs the swept variable."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from dpbench.plots.common import FORMATS, plt, save

XLABELS = {"n": "n", "kappa": "kappa (Sigma[0,0])", "sigma": "sigma (noise U[-sigma, sigma])",
           "alpha": "fraction of labels set to 1000"}


def excess_error(df: pd.DataFrame, out_path: Path, sweeps: list[str], title: str, order: list[str],
                 n_only: str) -> Path:
    """A panel per sweep (its x the swept variable): each algorithm's mean excess error over trials, dashed when
    non-private, red crosses where a trial failed.  `order`: labels in colour order (one colour per algorithm in
    every figure); `n_only`: a label drawn in the n panel only (a cell it shares with another sweep has it too)."""
    fig, axes = plt.subplots(1, len(sweeps), figsize=(4.6 * len(sweeps), 3.8), squeeze=False)
    labels = list(dict.fromkeys(df["algorithm"]))
    colors = {lab: plt.get_cmap("tab10")(order.index(lab) if lab in order else 7 + i) for i, lab in enumerate(labels)}
    for ax, x in zip(axes[0], sweeps, strict=True):
        part = df[(df["sweep"] == x) & ((df["algorithm"] != n_only) | (df["sweep"] == "n"))]
        for lab in labels:
            runs = part[part["algorithm"] == lab]
            if runs.empty:
                continue
            summ = runs.groupby(x)["excess_error"].mean()
            style = "--" if not runs["private"].iloc[0] else "-"
            ax.plot(summ.index, summ.values, style, marker="o", ms=4, color=colors[lab], label=lab)
            failed = runs[runs["status"] != "ok"].groupby(x)["excess_error"].mean()
            if len(failed):
                ax.scatter(failed.index, failed.values, marker="X", s=60, color="crimson", zorder=5)
        ax.set_xscale("symlog", linthresh=0.01) if x == "alpha" else ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(XLABELS[x])
        ax.set_ylabel("||w - w*||_S^2 (mean of trials)")
        ax.grid(alpha=0.3, which="both")
    handles, names = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, names, loc="lower center", ncol=min(4, len(names)), bbox_to_anchor=(0.5, -0.12),
               fontsize=8, title="red X: a trial's histogram came back empty (zero model or stalled steps)",
               title_fontsize=7)
    fig.suptitle(title + "\nDP-SSP: x_bound = 1, y_bound = 1 + sigma (public)", fontsize=10)
    fig.tight_layout()
    return save(fig, out_path, FORMATS)
