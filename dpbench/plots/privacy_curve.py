"""A metric against epsilon (log scale), one panel per dataset: the mean over seeds as a line with a band of
+/- one standard deviation over seeds, each seed as a dot.

Non-private algorithms are horizontal dashed lines (their band spans the panel).  With a single epsilon
there is no curve to draw, so the figure is the dot chart (plots/dots.py).
"""

from __future__ import annotations

import pandas as pd
from matplotlib.patches import Patch

from dpbench.plots import common, dots, figure


@figure("privacy_curve")
def privacy_curve(df: pd.DataFrame, title: str = "", metric: str | None = None):
    """metric None: each panel shows its task's default (test MSE or test F1)."""
    ok = common.usable(common.by_mode(df))
    if ok["epsilon"].nunique() <= 1:
        return dots.dots(df, title=title, metric=metric)
    datasets = sorted(ok["dataset"].unique())
    metrics = {name: metric or common.default_metric(ok[ok["dataset"] == name]) for name in datasets}
    share_y = len(set(metrics.values())) == 1 and common.scale_free(next(iter(metrics.values())))
    fig, axes = common.panels(len(datasets), layout="constrained", sharex=True, sharey=share_y)
    colors = common.algorithm_colors(ok["algorithm"].unique())
    eps = sorted(ok["epsilon"].dropna().unique())
    for ax, name in zip(axes, datasets, strict=True):
        sub, m = ok[ok["dataset"] == name], metrics[name]
        for algo, g in sub.groupby("algorithm", sort=True):
            kw = {"color": colors[algo], "label": common.algorithm_label(algo)}
            if g["epsilon"].isna().all():
                ax.axhline(g[m].mean(), ls="--", lw=1.3, **kw)
                ax.axhspan(g[m].mean() - g[m].std(ddof=1), g[m].mean() + g[m].std(ddof=1), color=colors[algo],
                           alpha=0.08, lw=0)
                continue
            g = g.dropna(subset=["epsilon"])
            stats = g.groupby("epsilon")[m].agg(["mean", "std"])
            ax.plot(stats["mean"], marker="o", ms=5, lw=1.6, **kw)
            ax.fill_between(stats.index, stats["mean"] - stats["std"], stats["mean"] + stats["std"],
                            color=colors[algo], alpha=0.15, lw=0)
            fine = g[~g["failed"]]
            ax.scatter(fine["epsilon"], fine[m], s=9, alpha=0.45, color=colors[algo], zorder=3)
            bad = g[g["failed"]]
            ax.scatter(bad["epsilon"], bad[m], **common.FAILED)
        ax.set_xscale("log")
        log_y = m.endswith("mse") and (sub[m] > 0).all()
        if log_y:
            ax.set_yscale("log")
        if not share_y:
            ax.set_ylim(*(common.log_limits if log_y else common.lin_limits)(sub[m].dropna()))
        ax.set_xlim(eps[0] / 1.5, eps[-1] * 1.5)
        ax.set_xlabel(r"$\varepsilon$")
        ax.set_ylabel(common.metric_label(m))
        ax.set_title(common.dataset_title(name), fontsize=9)
        common.grid(ax)
    if share_y:
        axes[0].set_ylim(*common.lin_limits(ok[metrics[datasets[0]]].dropna()))
    handles = {}
    for ax in axes:
        for h, label in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(label, h)
    extra = [Patch(color="grey", alpha=0.25, label="band: mean +/- std over seeds")]
    extra += [common.failed_legend(ok)] if ok["failed"].any() else []
    common.outside_legend(fig, "right", list(handles.values()) + extra, list(handles) + [h.get_label() for h in extra],
                          fontsize=8, frameon=False)
    n_seeds = ok["seed"].nunique()
    fig.suptitle(f"{title}  (line: mean over {n_seeds} seeds, band: +/- std; dots: each seed)".strip(), fontsize=10)
    return fig

