"""Paper 003's (TukeyEM) figures from the `paper003` analysis' rows: Fig. 2 left (PTR distance vs m), Fig. 5
(R^2 vs m per dataset) and Fig. 2 right (runtime vs m)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from dpbench.plots.common import FORMATS, plt, save


def r2_axis(ax, lowest: float) -> None:
    """R^2 is at most 1 but a failed or noisy model can be far below 0: linear down to -1 with ticks every 0.25
    (every 0.5 when it reaches -1), symlog below with a tick per decade, so the ticks always read as numbers."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    if lowest >= -1:
        lo = min(0.0, lowest)
        ax.set_ylim(lo - 0.05 * (1 - lo), 1.05)
        ticks = np.arange(-1, 1.01, 0.25 if lo > -0.5 else 0.5)
    else:
        ax.set_yscale("symlog", linthresh=1.0, linscale=2.0)
        decades = np.arange(1, int(np.ceil(np.log10(-lowest))) + 1)
        ticks = np.concatenate([-(10.0 ** decades[::-1]), [-1, -0.5, 0, 0.5, 1]])
        ax.set_ylim(min(ax.get_ylim()[0], -10.0), 1.05)  # down to -10 at least: a labelled tick below -1
        ax.yaxis.set_minor_locator(NullLocator())
    ax.yaxis.set_major_locator(FixedLocator(ticks))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))


def ptr_vs_m(df: pd.DataFrame, out_path: Path) -> Path:
    """Fig. 2 left: the mean PTR distance vs m, a line per d, and the pass threshold."""
    f2 = df[df["part"] == "fig2"]
    fig, ax = plt.subplots(figsize=(5.5, 3.8))
    for i, (d, g) in enumerate(f2.groupby("d")):
        mean = g.groupby("m")["ptr_distance"].mean()
        ax.plot(mean.index, mean.values, marker="o", ms=3, color=plt.get_cmap("viridis")(i / 4), label=f"d = {int(d)}")
    ax.axhline(f2["ptr_threshold"].iloc[0], ls="--", color="k", lw=1, label="pass threshold")
    ax.set_title("(ln 3, 1e-5) per record", fontsize=9)
    ax.set_xlabel("m (models), n = (d + 1) m")
    ax.set_ylabel("Lemma 3.6 distance to unsafety")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.suptitle("paper 003 Fig. 2 (left): PTR distance vs m; make_regression, noise 10, intercept", fontsize=10)
    fig.tight_layout()
    return save(fig, out_path, FORMATS)


def r2_vs_m(df: pd.DataFrame, out_path: Path) -> Path:
    """Fig. 5: TukeyEM's train R^2 (median, IQR) vs m, a panel per dataset in run order, with the share of
    trials whose PTR check passed, the table's other methods as dashed medians, and the diagnosis (TukeyEM with
    the paper's exponent, not private) as a dotted line of stars."""
    sweep = df[df["part"] == "m_sweep"]
    names = list(dict.fromkeys(sweep["dataset"]))
    fig, axes = plt.subplots(1, len(names), figsize=(4.8 * len(names), 3.8), squeeze=False)
    for ax, name in zip(axes[0], names, strict=True):
        part = sweep[sweep["dataset"] == name]
        for j, (label, g) in enumerate(part.groupby("method")):
            q = g.groupby("m")["train_r2"].quantile([0.25, 0.5, 0.75]).unstack()
            ax.plot(q.index, q[0.5], marker="o", ms=3, color=f"C{j}", label=label)
            ax.fill_between(q.index, q[0.25], q[0.75], color=f"C{j}", alpha=0.2)
            passed = g.groupby("m")["ptr_passed"].mean()
            for m_, r in passed.items():
                if r < 1:
                    ax.annotate(f"{r:.0%}", (m_, q.loc[m_, 0.5]), fontsize=6, color=f"C{j}")
        diag = df[(df["dataset"] == name) & (df["part"] == "diagnosis")].groupby(["method", "m"])["train_r2"].median()
        for label, curve in diag.groupby(level="method"):
            curve = curve.droplevel("method")
            ax.plot(curve.index, curve.values, marker="*", ms=6, ls=":", color="k", label=label)
        flat = df[(df["dataset"] == name) & (df["part"] == "table")].groupby("method")["train_r2"].median()
        rounded = flat.dropna().round(3)  # methods with the same median share one line (none hides another)
        for k, (value, labels) in enumerate(rounded.groupby(rounded).groups.items()):
            ax.axhline(value, ls="--", lw=1, color=f"C{part['method'].nunique() + k}",
                       label=f"{' = '.join(labels)}: {value:.3f}")
        r2_axis(ax, min(part["train_r2"].min(), flat.min(), diag.min() if len(diag) else 0.0))
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("m")
        ax.set_ylabel("train R^2 (median, IQR)")
        ax.grid(alpha=0.3)
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), fontsize=7, frameon=False)  # own medians
    fig.suptitle("paper 003 Fig. 5: R^2 on all rows vs m at (ln 3, 1e-5); dashed: median of the table's runs\n"
                 "percentages: share of trials whose PTR check passed (failed = zero model)", fontsize=9)
    fig.tight_layout()
    return save(fig, out_path, FORMATS)


def runtime(df: pd.DataFrame, out_path: Path) -> Path:
    """Fig. 2 right: TukeyEM's CPU seconds a fit vs m, the other methods as dashed lines."""
    rt = df[df["part"] == "runtime"]
    fig, ax = plt.subplots(figsize=(5, 3.6))
    tk = rt[rt["method"] == "TukeyEM"].set_index("m")["cpu_seconds"]
    ax.plot(tk.index, tk.values, marker="o", label="TukeyEM")
    for k, (label, g) in enumerate(rt[rt["method"] != "TukeyEM"].groupby("method")):
        ax.axhline(g["cpu_seconds"].min(), ls="--", lw=1, color=f"C{k + 1}", label=label)
    ax.set_yscale("log")
    ax.set_xlabel("m (parts of at least d rows)")
    ax.set_ylabel(f"CPU seconds a fit (median of {rt['repeats'].min():.0f})")
    ax.set_title(f"paper 003 Fig. 2 (right): runtime, {rt['dataset'].iloc[0]}", fontsize=9)
    ax.legend(fontsize=6)
    ax.grid(alpha=0.3)
    return save(fig, out_path, FORMATS)


def figures(df: pd.DataFrame, out: Path) -> list[Path]:
    """All three into the directory `out` (Fig. 5 and the runtime only when some dataset's m sweep ran)."""
    paths = [ptr_vs_m(df, out / "paper003_fig2_ptr.png")]
    if (df["part"] == "m_sweep").any():
        paths += [r2_vs_m(df, out / "paper003_fig5_r2_vs_m.png"), runtime(df, out / "paper003_runtime.png")]
    return paths
