"""Paper 000 Figs. 1-5: one point per dataset, algorithm x's error against algorithm y's, a panel per epsilon.

Below the diagonal y is better.  All panels share their axes, so points can be
followed from one epsilon to the next; the datasets with the largest gaps are
named; a point where either algorithm had a failed outcome in some seed is a
cross.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpbench.plots import common, figure

N_NAMED = 3  # datasets named per panel: the largest gaps


def paired_means(df: pd.DataFrame, x: str, y: str, metric: str) -> pd.DataFrame:
    """Mean metric over seeds per (epsilon, dataset) for both algorithms, and whether either had a failed
    outcome (column `failed`); datasets where either has no run with metrics are dropped."""
    ok = common.usable(df[df["algorithm"].isin([x, y])]) if len(df) else df.assign(failed=False)
    g = ok.groupby(["epsilon", "dataset", "algorithm"])
    means = g[metric].mean().unstack("algorithm").reindex(columns=[x, y]).dropna()
    failed = g["failed"].any().unstack("algorithm").reindex(columns=[x, y]).fillna(False).any(axis=1)
    return means.assign(failed=failed.reindex(means.index).astype(bool))


def win_counts(pairs: pd.DataFrame, x: str, y: str) -> pd.DataFrame:
    """Per epsilon: datasets where y's error is below x's (below the diagonal), above, and the total."""
    g = pairs.groupby(level="epsilon")
    return pd.DataFrame({"y_better": g.apply(lambda p: int((p[y] < p[x]).sum())),
                         "x_better": g.apply(lambda p: int((p[y] > p[x]).sum())),
                         "datasets": g.size()})


def _name(ax, points: pd.DataFrame, x: str, y: str, lo: float, hi: float, log: bool) -> None:
    """Name points beside them, to the left near the right edge, moved down while a label is close above."""
    scale = np.log10 if log else (lambda v: v)
    placed: list[tuple[float, float]] = []
    for name, row in points.sort_values(y, ascending=False).iterrows():
        fx, fy = ((scale(row[c]) - scale(lo)) / (scale(hi) - scale(lo)) for c in (x, y))  # axes fractions
        dy = 0
        while any(abs(fx - px) < 0.3 and abs(fy + dy / 300 - py) < 0.045 for px, py in placed):
            dy -= 9
        placed.append((fx, fy + dy / 300))
        right = fx > 0.6
        ax.annotate(common.dataset_label(name), (row[x], row[y]), xytext=(-5 if right else 5, dy),
                    textcoords="offset points", fontsize=7, color="dimgray", ha="right" if right else "left",
                    va="center", arrowprops={"arrowstyle": "-", "color": "silver", "lw": 0.6, "shrinkA": 0}
                    if dy < 0 else None)


def win_summary(df: pd.DataFrame, x: str, y: str, metric: str = "test_mse") -> str:
    """The report's lines for a scatter: per epsilon, on how many datasets each algorithm has the lower error."""
    counts = win_counts(paired_means(df, x, y, metric), x, y)
    return f"datasets where {y} has lower {metric} than {x} (y_better), per epsilon:\n{counts.to_string()}"


@figure("scatter", summary=win_summary)
def scatter(df: pd.DataFrame, x: str, y: str, title: str = "", metric: str = "test_mse"):
    pairs = paired_means(df, x, y, metric)
    if pairs.empty:
        raise ValueError(f"no dataset has runs with metrics of both {x} and {y}")
    eps = sorted(pairs.index.get_level_values("epsilon").unique())
    fig, axes = common.panels(len(eps), width=4.3, height=4.3, sharex=True, sharey=True)
    values = np.r_[pairs[x].to_numpy(), pairs[y].to_numpy()]
    log = metric.endswith("mse") and (values > 0).all()
    lo, hi = common.log_limits(values, 3.0) if log else common.lin_limits(values, 0.1)
    xl, yl = common.algorithm_label(x), common.algorithm_label(y)
    for ax, e in zip(axes, eps, strict=True):
        p = pairs.xs(e, level="epsilon")
        ax.plot([lo, hi], [lo, hi], color="grey", lw=1, zorder=1)
        fine, bad = p[~p["failed"]], p[p["failed"]]
        ax.scatter(fine[x], fine[y], s=22, alpha=0.85, color="tab:blue", zorder=3)
        ax.scatter(bad[x], bad[y], **common.FAILED)
        gap = (np.log(p[y] / p[x]) if log else p[y] - p[x]).abs()
        _name(ax, p.loc[gap.nlargest(N_NAMED).index], x, y, lo, hi, log)
        below, above = int((p[y] < p[x]).sum()), int((p[y] > p[x]).sum())
        ax.text(0.04, 0.96, f"{xl} better: {above}/{len(p)}", transform=ax.transAxes, va="top", fontsize=8)
        ax.text(0.96, 0.04, f"{yl} better: {below}/{len(p)}", transform=ax.transAxes, ha="right", fontsize=8)
        if log:
            ax.set_xscale("log")
            ax.set_yscale("log")
        ax.set_xlim(lo, hi)
        ax.set_ylim(lo, hi)
        ax.set_aspect("equal")
        ax.set_xlabel(f"{xl} {common.metric_label(metric)}")
        if ax.get_subplotspec().is_first_col():
            ax.set_ylabel(f"{yl} {common.metric_label(metric)}")
        ax.set_title(rf"$\varepsilon$ = {e:g}", fontsize=10)
        common.grid(ax)
    ok = common.usable(df[df["algorithm"].isin([x, y])])
    if pairs["failed"].any():
        legend = common.failed_legend(ok)
        legend.set_label(f"{int(pairs['failed'].sum())} points with a {legend.get_label()}")
        fig.legend(handles=[legend], loc="upper center", bbox_to_anchor=(0.5, 0.0), fontsize=8, frameon=False)
    n_seeds, absent = ok["seed"].nunique(), df["dataset"].nunique() - pairs.index.get_level_values("dataset").nunique()
    note = f"; {absent} datasets without results of both" if absent else ""
    fig.suptitle(f"{title}\nmean over {n_seeds} seeds; below the diagonal: {yl} better; named: the largest gaps{note}"
                 .strip(), fontsize=10)
    fig.tight_layout()
    return fig


__all__ = ["paired_means", "scatter", "win_counts"]
