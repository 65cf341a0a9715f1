"""The privacy audit's figure: measured lower bound against the budget asked for (eps, and mu for GDP algorithms)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

MARKERS = "osD^vP*Xh<>p"


def _positions(df: pd.DataFrame, x: str) -> tuple[pd.Series, list, list, int]:
    """Categorical x: a column per budget asked, in it a slot per algorithm, the designs side by side in a slot.
    Returns each row's position, the budgets, the algorithms and the column width (slots + a gap)."""
    budgets = sorted(df[x].unique())
    algos, designs = sorted(df["algorithm"].unique()), sorted(df["design"].unique())
    width, step = len(algos) + 1, 0.6 / len(designs)
    pos = df.apply(lambda r: budgets.index(r[x]) * width + algos.index(r["algorithm"])
                   + (designs.index(r["design"]) - (len(designs) - 1) / 2) * step, axis=1)
    return pos, budgets, algos, width


def plot_audit(table: pd.DataFrame, out_path: str | Path, title: str = "empirical privacy audit") -> Path:
    """One marker per (algorithm, design, budget): colour = algorithm, shape = design, red ring = violation.

    The x axis is categorical, so a position never reads as a budget it is not: a column per budget asked
    (labelled on top), in it one slot per algorithm (labelled below), the designs side by side in a slot.
    Points above their column's solid segment (lower bound = budget) are violations; the dotted line is the
    largest bound the number of runs can certify (perfect separation), so points far below it say "no
    evidence", not "tight".  The y axis is symlog so that bounds of 0 (no evidence) stay visible.
    """
    from dpbench.audit import epsilon_lower_bound, mu_lower_bound

    gdp = table[table["mu"].notna()]
    panels = [("epsilon", "eps_lb", "$\\varepsilon$", table)] + ([("mu", "mu_lb", "$\\mu$", gdp)] if len(gdp) else [])
    fig, axes = plt.subplots(1, len(panels), figsize=(6.4 * len(panels), 5.2), squeeze=False)
    designs = sorted(table["design"].unique())
    # regressors and classifiers side by side: a colour per name (algorithm_colors gives a classifier its
    # regressor's hue, and dp_xgboost TukeyEM's, which would read as one algorithm here)
    cmap = plt.get_cmap("tab20")
    colors = {a: cmap(i % cmap.N) for i, a in enumerate(sorted(table["algorithm"].unique()))}
    shapes = {d: MARKERS[i % len(MARKERS)] for i, d in enumerate(designs)}  # more designs than markers: reuse
    half = int(table["runs"].min()) // 2
    for ax, (x, y, sym, df) in zip(axes[0], panels, strict=False):
        pos, budgets, algos, width = _positions(df, x)
        for (_, r), xv in zip(df.iterrows(), pos, strict=True):
            ax.scatter(xv, r[y], color=colors[r["algorithm"]], marker=shapes[r["design"]], s=40, zorder=3)
            if r["verdict"] == "violation":
                ax.scatter(xv, r[y], facecolors="none", edgecolors="red", s=180, linewidths=1.8, zorder=4)
        for b, budget in enumerate(budgets):
            ax.plot([b * width - 0.45, b * width + len(algos) - 0.55], [budget, budget], color="black", lw=1.2,
                    label=f"lower bound = {sym} asked" if b == 0 else None)
        cap = (float(epsilon_lower_bound(0, half, half, half, float(table["delta"].iloc[0]))) if y == "eps_lb"
               else float(mu_lower_bound(0, half, half, half)))
        ax.axhline(cap, color="grey", ls=":", lw=1, label=f"most {half} + {half} runs can certify")
        slots = [b * width + a for b in range(len(budgets)) for a in range(len(algos))]
        ax.set_xticks(slots, algos * len(budgets), rotation=45 if len(slots) > 4 else 0, fontsize=8,
                      ha="right" if len(slots) > 4 else "center", rotation_mode="anchor")
        ax.set_xlim(-0.7, slots[-1] + 0.7)
        top = ax.secondary_xaxis("top")
        top.set_xticks([b * width + (len(algos) - 1) / 2 for b in range(len(budgets))],
                       [f"{sym} asked = {v:.3g}" for v in budgets])
        top.tick_params(length=0)
        for b in range(1, len(budgets)):
            ax.axvline(b * width - 1, color="0.8", lw=0.8)  # between columns
        lo = min(0.05, min(budgets) / 2)
        ax.set_yscale("symlog", linthresh=lo)  # log above the smallest budget, linear near 0
        ax.set_ylim(-0.08 * lo, max(max(budgets), cap) * 1.5)  # a little below 0: bounds of 0 are drawn whole
        ax.set_xlabel("algorithm (designs side by side: marker shape)")
        ax.set_ylabel(f"{sym} lower bound (95%, Clopper-Pearson)")
        ax.grid(alpha=0.3, which="both", axis="y")
        ax.legend(loc="upper left", fontsize=8)
    handles = [plt.Line2D([], [], ls="", marker="o", color=c, label=a) for a, c in colors.items()]
    handles += [plt.Line2D([], [], ls="", marker=shapes[d], color="black", mfc="none", label=d) for d in designs]
    handles += [plt.Line2D([], [], ls="", marker="o", mfc="none", mec="red", ms=11, label="violation")]
    fig.legend(handles=handles, loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=8, frameon=False)
    fig.suptitle(title)
    fig.tight_layout()
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out_path, dpi=120, bbox_inches="tight")
    plt.close(fig)
    return out_path
