"""Paper 000 Figs. 1-5: one point per dataset, algorithm x's error against algorithm y's, per epsilon."""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from dpbench.plots.privacy_curve import LABELS, METRIC_LABELS  # noqa: E402
from dpbench.results import has_metrics  # noqa: E402


def paired_means(df: pd.DataFrame, x: str, y: str, metric: str) -> pd.DataFrame:
    """Mean metric over seeds per (epsilon, dataset) for both algorithms; datasets where either failed are dropped."""
    ok = df[has_metrics(df) & df["algorithm"].isin([x, y])]
    means = ok.groupby(["epsilon", "dataset", "algorithm"])[metric].mean().unstack("algorithm")
    return means.dropna(subset=[c for c in (x, y) if c in means.columns]).reindex(columns=[x, y]).dropna()


def win_counts(pairs: pd.DataFrame, x: str, y: str) -> pd.DataFrame:
    """Per epsilon: datasets where y's error is below x's (below the diagonal), above, and the total."""
    g = pairs.groupby(level="epsilon")
    return pd.DataFrame({"y_better": g.apply(lambda p: int((p[y] < p[x]).sum())),
                         "x_better": g.apply(lambda p: int((p[y] > p[x]).sum())),
                         "datasets": g.size()})


def plot_scatter(df: pd.DataFrame, out_path: str | Path, x: str, y: str, metric: str = "test_mse",
                 title: str = "") -> Path:
    pairs = paired_means(df, x, y, metric)
    if pairs.empty:
        raise ValueError(f"no dataset has successful runs of both {x} and {y}")
    eps = sorted(pairs.index.get_level_values("epsilon").unique())
    ncols = min(3, len(eps))
    nrows = math.ceil(len(eps) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.2 * ncols, 4.0 * nrows), squeeze=False)
    for ax, e in zip(axes.flat, eps, strict=False):
        p = pairs.xs(e, level="epsilon")
        ax.scatter(p[x], p[y], s=18, alpha=0.8)
        lo = min(p[x].min(), p[y].min()) * 0.8
        hi = max(p[x].max(), p[y].max()) * 1.25
        ax.plot([lo, hi], [lo, hi], color="gray", lw=1)
        below, above = int((p[y] < p[x]).sum()), int((p[y] > p[x]).sum())
        ax.text(0.04, 0.95, f"above: {above}/{len(p)}", transform=ax.transAxes, va="top", fontsize=8)
        ax.text(0.96, 0.05, f"below: {below}/{len(p)}", transform=ax.transAxes, ha="right", fontsize=8)
        if metric.endswith("mse"):
            ax.set_xscale("log")
            ax.set_yscale("log")
        ax.set_xlim(lo, hi)
        ax.set_ylim(lo, hi)
        ax.set_aspect("equal")
        label = METRIC_LABELS.get(metric, metric)
        ax.set_xlabel(f"{LABELS.get(x, x)} {label}")
        ax.set_ylabel(f"{LABELS.get(y, y)} {label}")
        ax.set_title(rf"$\varepsilon$ = {e:g}", fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
    for ax in list(axes.flat)[len(eps):]:
        ax.axis("off")
    n_seeds = df[has_metrics(df)]["seed"].nunique()
    fig.suptitle(f"{title}  (mean over {n_seeds} seeds; below the diagonal: {LABELS.get(y, y)} better)".strip(),
                 fontsize=10)
    fig.tight_layout()
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out_path, dpi=130)
    plt.close(fig)
    return out_path


__all__ = ["paired_means", "plot_scatter", "win_counts"]
