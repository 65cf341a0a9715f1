"""Algorithms side by side at one epsilon: a dot chart per (dataset, epsilon), best algorithm on top.

Each row is an algorithm: its mean over seeds as a large marker (the bar spans the seeds' range, which, unlike
+/- std, stays on a log axis),
hollow for non-private ones, each seed as a small dot, failed outcomes as
crosses (counted in the row's label and the legend).  The dashed line is the
best non-private mean, the reference a private algorithm is measured against.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from dpbench.plots import common, figure


def _panels(ok: pd.DataFrame) -> list[tuple[str, float, pd.DataFrame]]:
    """(dataset, epsilon, rows): non-private rows (epsilon NaN) join every epsilon of their dataset."""
    out = []
    for name, sub in ok.groupby("dataset", sort=True):
        eps = sorted(sub["epsilon"].dropna().unique()) or [np.nan]
        for e in eps:
            out.append((name, e, sub[sub["epsilon"].isna() | (sub["epsilon"] == e)]))
    return out


@figure("dots")
def dots(df: pd.DataFrame, title: str = "", metric: str | None = None):
    ok = common.usable(common.by_mode(df))
    panels = _panels(ok)
    metrics = [metric or common.default_metric(rows) for _, _, rows in panels]
    share_x = len(set(metrics)) == 1 and common.scale_free(metrics[0])
    rows_max = max(rows["algorithm"].nunique() for _, _, rows in panels)
    fig, axes = common.panels(len(panels), ncols=2, width=5.6, height=0.42 * rows_max + 1.4, layout="constrained",
                              sharex=share_x)
    colors = common.algorithm_colors(ok["algorithm"].unique())
    for ax, (name, e, rows), m in zip(axes, panels, metrics, strict=True):
        stats = rows.groupby("algorithm").agg(mean=(m, "mean"), lo=(m, "min"), hi=(m, "max"),
                                              private=("private", "first"), failed=("failed", "sum"), runs=(m, "size"))
        stats = stats.sort_values("mean", ascending=not common.lower_is_better(m))  # best last: on top
        for y, (algo, s) in enumerate(stats.iterrows()):
            seeds = rows[rows["algorithm"] == algo]
            fine, bad = seeds[~seeds["failed"]], seeds[seeds["failed"]]
            ax.scatter(fine[m], np.full(len(fine), y + 0.22), s=10, alpha=0.55, color=colors[algo], zorder=3)
            ax.scatter(bad[m], np.full(len(bad), y + 0.22), **common.FAILED)
            ax.errorbar(s["mean"], y, xerr=[[s["mean"] - s["lo"]], [s["hi"] - s["mean"]]], fmt="o", ms=8, capsize=3,
                        zorder=4,
                        color=colors[algo], mfc=colors[algo] if s["private"] else "white", mew=1.8)
        public = stats[~stats["private"].astype(bool)]
        if len(public):
            best = public["mean"].min() if common.lower_is_better(m) else public["mean"].max()
            ax.axvline(best, ls="--", lw=1, color="grey", zorder=1)
        labels = [common.algorithm_label(a) + (f"  [{int(s['failed'])}/{int(s['runs'])} failed]" if s["failed"]
                                               else "") for a, s in stats.iterrows()]
        ax.set_yticks(range(len(stats)), labels, fontsize=8)
        ax.set_ylim(-0.6, len(stats) - 0.4)
        values = rows[m].dropna()
        if m.endswith("mse") and (values > 0).all():
            ax.set_xscale("log")
            ax.set_xlim(*common.log_limits(values))
        elif not share_x:
            ax.set_xlim(*common.lin_limits(values))
        ax.set_xlabel(common.metric_label(m) + ("  (lower is better)" if common.lower_is_better(m) else ""))
        ax.set_title(common.dataset_title(name) + ("" if np.isnan(e) else rf"   $\varepsilon$ = {e:g}"), fontsize=9)
        common.grid(ax)
    if share_x:
        axes[0].set_xlim(*common.lin_limits(ok[metrics[0]].dropna()))
    handles = [
        plt.Line2D([], [], ls="", marker="o", color="black", ms=7, label="mean over seeds (bar: min to max)"),
        plt.Line2D([], [], ls="", marker="o", color="black", mfc="white", ms=7, label="non-private"),
        plt.Line2D([], [], ls="", marker="o", color="black", alpha=0.55, ms=3, label="one seed"),
        plt.Line2D([], [], ls="--", color="grey", label="best non-private mean"),
    ]
    if ok["failed"].any():
        handles.append(common.failed_legend(ok))
    common.outside_legend(fig, "below", handles=handles, ncols=min(len(handles), 3), fontsize=8, frameon=False)
    fig.suptitle(f"{title}  ({ok['seed'].nunique()} seeds)".strip(), fontsize=10)
    return fig
