"""The leaderboard's figures: critical-difference diagrams (Demsar 2006, Fig. 1), one per tuning mode and epsilon;
the text summary is the boards (`dpbench.leaderboard`), ranked."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpbench import leaderboard as lb
from dpbench.leaderboard import p_text, tasks_text
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
    ax.set_ylim(0, 1.08)
    ax.axis("off")
    ax.hlines(0.8, 1, k, color="black", lw=1)
    for r in range(1, k + 1):
        ax.vlines(r, 0.8, 0.83, color="black", lw=1)
        ax.text(r, 0.85, str(r), ha="center", va="bottom", fontsize=8)
    if np.isfinite(cd):  # (a CD wider than the axis, few tasks: drawn to its end)
        ax.hlines(0.97, 1, min(1 + cd, k), color="black", lw=1.5)
        ax.text(1 + min(cd, k - 1) / 2, 0.985, f"CD = {cd:.2f}", ha="center", va="bottom", fontsize=8)  # above it
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
        p = f"Friedman {p_text(t['p_f'])}" if np.isfinite(t["p_f"]) else "no Friedman test"
        cd_diagram(ax, avg, t["cd"], f"{MODE_LABELS.get(mode, mode)}, ε = {e:g}: {tasks_text(t['n_tasks'])}, {p}")
    fig.suptitle(title or f"Average rank by {common.metric_label(column)} (1 = best)", fontsize=11)
    fig.tight_layout()
    return fig


def _grid(cell: pd.DataFrame, width: float, height: float):
    """One panel per (mode, epsilon) that has a complete task: rows the modes, columns the epsilons."""
    keys = [(m, e) for m in dict.fromkeys(cell["tuning_mode"]) for e in sorted(set(cell["epsilon"]))]
    fig, axes = common.panels(len(keys), ncols=len(set(cell["epsilon"])), width=width, height=height)
    return fig, zip(axes, keys, strict=True)


def win_rate_figure(cell: pd.DataFrame, title: str = ""):
    """The win-rate matrix per (mode, epsilon): the share of tasks on which the row's entry beats the column's."""
    k = cell["entry"].nunique()
    fig, panels = _grid(cell, 1.6 + 0.55 * k, 1.2 + 0.5 * k)
    for ax, (mode, eps) in panels:
        s = lb.complete_tasks(lb.scores(cell, mode, eps))
        if s.empty:
            common.not_run(ax)
            continue
        order = list(lb.average_ranks(s).index)
        w = lb.win_rates(s[order])
        ax.imshow(w.to_numpy(dtype=float), cmap="RdBu", vmin=0, vmax=1)
        for i in range(len(order)):
            for j in range(len(order)):
                if i != j:  # white on the dark ends of the colour map
                    v = w.iloc[i, j]
                    ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=7,
                            color="white" if abs(v - 0.5) > 0.3 else "black")
        labels = [entry_label(e) for e in order]
        ax.set_xticks(range(len(order)), labels, rotation=45, ha="right", fontsize=8)
        ax.set_yticks(range(len(order)), labels, fontsize=8)
        ax.set_title(f"{MODE_LABELS.get(mode, mode)}, ε = {eps:g} ({tasks_text(len(s))})", fontsize=9)
    fig.suptitle(title or "Share of tasks on which the row beats the column (ties: half)", fontsize=11)
    fig.tight_layout()
    return fig


def profile_figure(cell: pd.DataFrame, title: str = ""):
    """Performance profiles per (mode, epsilon): the share of tasks within a factor tau of the best entry."""
    fig, panels = _grid(cell, 4.6, 3.6)
    colors = common.algorithm_colors(sorted({e.partition(":")[0] for e in cell["entry"]}))
    styles = {"": "-", "squared": "-", "logistic": "--", "hinge": ":"}
    top, drawn = 1.0, []
    for ax, (mode, eps) in panels:
        s = lb.complete_tasks(lb.scores(cell, mode, eps))
        if s.empty:
            common.not_run(ax)
            continue
        ratios = lb.performance_ratios(s).to_numpy()
        ratios = ratios[np.isfinite(ratios)]
        top = max(top, ratios.max(initial=1.0))
        # the profile steps exactly where a task's ratio lies, and runs on to the largest tau shown
        prof = lb.performance_profile(s, np.unique([1.0, *ratios, lb.TAUS[-1]]))
        drawn.append(ax)
        for entry in lb.average_ranks(s).index:
            algorithm, _, loss = entry.partition(":")
            ax.step(prof.index, prof[entry], where="post", color=colors[algorithm], ls=styles.get(loss, "-"),
                    label=entry_label(entry))
        ax.set_xscale("log")
        ax.set_ylim(-0.02, 1.02)
        ax.set_xlabel("τ (error / best error)")
        ax.set_ylabel("share of tasks")
        ax.set_title(f"{MODE_LABELS.get(mode, mode)}, ε = {eps:g} ({tasks_text(len(s))})", fontsize=9)
        common.grid(ax)
    right = min(lb.TAUS[-1], max(2.0, 1.15 * top))
    ticks = [t for t in (1, 1.5, 2, 3, 5, 10, 20, 50, 100) if t <= right]
    for ax in drawn:  # one tau axis for all panels, up to the largest ratio (at most TAUS' last)
        ax.set_xlim(1.0, right)
        ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
        ax.set_xticks([], minor=True)
    handles, labels = axes_legend(fig)
    fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 5), fontsize=8, frameon=False,
               bbox_to_anchor=(0.5, -0.02))
    fig.suptitle(title or "Performance profiles", fontsize=11)
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    return fig


def axes_legend(fig):
    """The legend entries of all panels, each label once."""
    seen = {}
    for ax in fig.axes:
        for h, label in zip(*ax.get_legend_handles_labels(), strict=True):
            seen.setdefault(label, h)
    return list(seen.values()), list(seen)
