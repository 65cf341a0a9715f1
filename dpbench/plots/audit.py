"""The privacy audit's figure: measured lower bound against the budget asked for (eps, and mu for GDP algorithms)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

MARKERS = "osD^vP*Xh<>p"


def plot_audit(table: pd.DataFrame, out_path: str | Path, title: str = "empirical privacy audit") -> Path:
    """One marker per (algorithm, design, budget): colour = algorithm, shape = design, red ring = violation.

    Points above the diagonal y = x are violations; the dotted line is the largest bound the number of runs
    can certify (perfect separation), so points far below it say "no evidence", not "tight".  The y axis is
    symlog so that bounds of 0 (no evidence) stay visible; each (algorithm, design) is offset slightly along x
    (within a factor 1.25 of the budget) so that the points of one budget do not hide each other.
    """
    from dpbench.privacy.audit import epsilon_lower_bound, mu_lower_bound

    gdp = table[table["mu"].notna()]
    panels = [("epsilon", "eps_lb", "$\\varepsilon$", table)] + ([("mu", "mu_lb", "$\\mu$", gdp)] if len(gdp) else [])
    fig, axes = plt.subplots(1, len(panels), figsize=(6.4 * len(panels), 5.2), squeeze=False)
    algos = sorted(table["algorithm"].unique())
    designs = sorted(table["design"].unique())
    cmap = plt.get_cmap("tab10" if len(algos) <= 10 else "tab20")
    colors = {a: cmap(i % cmap.N) for i, a in enumerate(algos)}
    shapes = dict(zip(designs, MARKERS, strict=False))
    half = int(table["runs"].min()) // 2
    for ax, (x, y, sym, df) in zip(axes[0], panels, strict=False):
        pairs = sorted(set(zip(df["algorithm"], df["design"], strict=True)))
        jitter = {pr: 1.25 ** ((2 * i - len(pairs) + 1) / max(len(pairs), 1)) for i, pr in enumerate(pairs)}
        for _, r in df.iterrows():
            xv = r[x] * jitter[(r["algorithm"], r["design"])]
            ax.scatter(xv, r[y], color=colors[r["algorithm"]], marker=shapes[r["design"]], s=40, zorder=3)
            if r["verdict"] == "violation":
                ax.scatter(xv, r[y], facecolors="none", edgecolors="red", s=180, linewidths=1.8, zorder=4)
        lo, hi = df[x].min() / 2, df[x].max() * 2
        grid = np.geomspace(lo, hi, 200)
        ax.plot(grid, grid, color="black", lw=1, label=f"lower bound = {sym} asked")
        cap = (float(epsilon_lower_bound(0, half, half, half, float(table["delta"].iloc[0]))) if y == "eps_lb"
               else float(mu_lower_bound(0, half, half, half)))
        ax.axhline(cap, color="grey", ls=":", lw=1, label=f"most {half} + {half} runs can certify")
        ax.set_xscale("log")
        if hi / lo > 10:  # a decade tick is in range: minor labels would only collide
            ax.xaxis.set_minor_formatter(plt.NullFormatter())
        ax.set_yscale("symlog", linthresh=min(0.05, lo))  # log above the smallest budget, linear near 0
        ax.set_xlim(lo, hi)
        ax.set_ylim(-0.08 * min(0.05, lo), max(hi, cap) * 1.5)  # a little below 0: bounds of 0 are drawn whole
        ax.set_xlabel(f"{sym} asked")
        ax.set_ylabel(f"{sym} lower bound (95%, Clopper-Pearson)")
        ax.grid(alpha=0.3, which="both")
        ax.legend(loc="upper left", fontsize=8)
    handles = [plt.Line2D([], [], ls="", marker="o", color=colors[a], label=a) for a in algos]
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
