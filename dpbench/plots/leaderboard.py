"""The leaderboard's figures: critical-difference diagrams (Demsar 2006, Fig. 1), one per tuning mode and epsilon;
the text summary is the boards (`dpbench.leaderboard`), ranked."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpbench import leaderboard as lb
from dpbench.plots import common, figure
from dpbench.tuning import MODE_LABELS


def entry_label(entry: str) -> str:
    algorithm, _, loss = entry.partition(":")
    return common.algorithm_label(algorithm) + (f" ({loss})" if loss else "")


def cd_diagram(ax, avg: pd.Series, cd: float, title: str) -> None:
    """Average ranks on an axis from 1 (best, left) to k; each entry's label on a leader line, the better half
    to the left, the rest to the right; thick bars join entries whose ranks differ by less than cd; the CD itself
    drawn above."""
    k = len(avg)
    ax.set_xlim(0.5, k + 0.5)
    ax.set_ylim(0, 1)
    ax.axis("off")
    ax.hlines(0.8, 1, k, color="black", lw=1)
    for r in range(1, k + 1):
        ax.vlines(r, 0.8, 0.83, color="black", lw=1)
        ax.text(r, 0.85, str(r), ha="center", va="bottom", fontsize=8)
    if np.isfinite(cd):
        ax.hlines(0.97, 1, 1 + cd, color="black", lw=1.5)
        ax.text(1 + cd / 2, 0.93, f"CD = {cd:.2f}", ha="center", va="top", fontsize=8)
    half = (k + 1) // 2
    step = 0.7 / max(half, k - half, 1)
    colors = common.algorithm_colors([e.partition(":")[0] for e in avg.index])
    for i, (entry, r) in enumerate(avg.items()):
        left = i < half
        y = 0.72 - step * (i if left else k - 1 - i)
        x_end = 0.55 if left else k + 0.45
        color = colors[entry.partition(":")[0]]
        ax.plot([r, r, x_end], [0.8, y, y], color=color, lw=1)
        ax.text(x_end + (0.03 if not left else -0.03), y, f"{entry_label(entry)}  {r:.2f}" if left else
                f"{r:.2f}  {entry_label(entry)}", ha="right" if left else "left", va="center", fontsize=8,
                color=color)
    for j, group in enumerate(lb.cliques(avg, cd) if np.isfinite(cd) else []):
        y = 0.77 - 0.035 * j
        ax.hlines(y, avg[group[0]] - 0.04, avg[group[-1]] + 0.04, color="0.25", lw=3)
    ax.set_title(title, fontsize=10)


def _boards(df: pd.DataFrame, metric: str | None):
    errs, column = lb.errors(df, metric)
    return lb.cells(errs), column


def board_summary(df: pd.DataFrame, metric: str | None = None, alpha: float = 0.05) -> str:
    """Per tuning mode and epsilon: the entries by average rank, the Friedman test and Nemenyi's CD."""
    cell, column = _boards(df, metric)
    ranked, tests = lb.boards(cell, alpha)
    lines = [f"Average ranks over tasks by {column} (1 = best; mean over seeds per task; tasks lacking an entry "
             f"left out); Friedman test and Nemenyi's critical difference at alpha {alpha}:"]
    for t in tests.itertuples():
        board = ranked[(ranked["tuning_mode"] == t.tuning_mode) & (ranked["epsilon"] == t.epsilon)]
        lines.append(f"\n{MODE_LABELS.get(t.tuning_mode, t.tuning_mode)}, eps {t.epsilon:g}: {t.n_tasks} tasks "
                     f"({t.tasks_left_out} left out), Friedman chi2 {t.chi2:.1f} (p {t.p_chi2:.2g}), "
                     f"Iman-Davenport F {t.f:.2f} (p {t.p_f:.2g}), CD {t.cd:.2f}")
        lines.append(board[["place", "entry", "average_rank", "won", "median_ratio"]].to_string(
            index=False, float_format=lambda v: f"{v:.3g}"))
    return "\n".join(lines)


@figure("leaderboard", summary=board_summary)
def leaderboard(df: pd.DataFrame, title: str = "", metric: str | None = None, alpha: float = 0.05):
    """A critical-difference diagram per (tuning mode, epsilon): rows the modes, columns the epsilons."""
    cell, column = _boards(df, metric)
    ranked, tests = lb.boards(cell, alpha)
    if tests.empty:
        raise ValueError("no tuning mode and epsilon with a task every entry ran on")
    modes, eps = list(dict.fromkeys(tests["tuning_mode"])), sorted(set(tests["epsilon"]))
    k = int(tests["k"].max())
    fig, axes = common.panels(len(modes) * len(eps), ncols=len(eps), width=6.2, height=1.2 + 0.28 * k)
    for ax, (mode, e) in zip(axes, [(m, e) for m in modes for e in eps], strict=True):
        t = tests[(tests["tuning_mode"] == mode) & (tests["epsilon"] == e)]
        if t.empty:
            common.not_run(ax)
            continue
        board = ranked[(ranked["tuning_mode"] == mode) & (ranked["epsilon"] == e)]
        avg = pd.Series(board["average_rank"].to_numpy(), index=board["entry"])
        t = t.iloc[0]
        cd_diagram(ax, avg, t["cd"], f"{MODE_LABELS.get(mode, mode)}, ε = {e:g}: {t['n_tasks']} tasks, "
                                     f"Friedman p = {t['p_f']:.2g}")
    fig.suptitle(title or f"Average rank by {common.metric_label(column)} (1 = best)", fontsize=11)
    fig.tight_layout()
    return fig
