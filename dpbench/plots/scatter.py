"""Paper 000 Figs. 1-5 and 12: one point per dataset, algorithm x's error against algorithm y's, a panel per
(setting, epsilon).

A setting is a pair of tuning modes [x mode, y mode] (paper 000's (a) both tuned, (b) y fixed vs x tuned,
(c) both fixed): `settings: [[tuned, tuned], [tuned, fixed], [fixed, fixed]]` draws one row of panels per
setting.  Without `settings` every run of x and y counts, whatever its mode.  Below the diagonal y is
better.  All panels share their axes, so points can be followed from one epsilon to the next; the datasets
with the largest gaps are named; a point where either algorithm returned its fallback in some seed (TukeyEM's
zero model after a failed PTR check) is a cross, and counts in the panels and the summary with its real error,
as the claims do (`claims.paired_cells`: a run counts with what it released).  `size_by: n_over_d` makes a marker's area
proportional to the dataset's n/d (Fig. 12).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpbench.claims import Cells, paired_cells
from dpbench.plots import common, figure

N_NAMED = 3  # datasets named per panel: the largest gaps
PT = 1 / 240  # a typographic point as a fraction of a panel's side (4.3 inch panels), to keep texts clear


def paired_means(df: pd.DataFrame, x: str, y: str, metric: str) -> pd.DataFrame:
    """Mean metric over seeds per (epsilon, dataset) for both algorithms, and whether either had a failed
    outcome (column `failed`); datasets where either has no run with metrics are dropped."""
    ok = common.usable(df[df["algorithm"].isin([x, y])]) if len(df) else df.assign(failed=False)
    g = ok.groupby(["epsilon", "dataset", "algorithm"])
    means = g[metric].mean().unstack("algorithm").reindex(columns=[x, y]).dropna()
    failed = g["failed"].any().unstack("algorithm").reindex(columns=[x, y]).fillna(False).any(axis=1)
    return means.assign(failed=failed.reindex(means.index).astype(bool))


def setting_rows(df: pd.DataFrame, x: str, y: str, setting) -> pd.DataFrame:
    """The runs of x in mode setting[0] and of y in mode setting[1] (all runs of both when setting is None)."""
    if setting is None:
        return df
    (xm, ym), alg, mode = setting, df["algorithm"], df["tuning_mode"]
    return df[((alg == x) & (mode == xm)) | ((alg == y) & (mode == ym))]


def _settings(settings) -> list:
    if settings is None:
        return [None]
    from dpbench.tuning import MODES

    out = [tuple(s) for s in settings]
    if any(len(s) != 2 or set(s) - set(MODES) for s in out):
        raise ValueError(f"plot.settings must be a list of [x mode, y mode] pairs of {', '.join(MODES)}; "
                         f"got {settings!r}")
    return out


def setting_label(setting, x: str, y: str) -> str:
    """'Fixed BoostedAdaSSP vs. non-privately tuned AdaSSP' (the paper's panel titles; y first)."""
    if setting is None:
        return f"{common.algorithm_label(y)} vs. {common.algorithm_label(x)}"
    from dpbench.tuning import MODE_LABELS

    return (f"{MODE_LABELS[setting[1]]} {common.algorithm_label(y)} vs. "
            f"{MODE_LABELS[setting[0]].lower()} {common.algorithm_label(x)}")


def setting_pairs(df: pd.DataFrame, x: str, y: str, metric: str = "test_mse", settings=None) -> dict:
    """{setting: paired_means} for each setting (None: all runs)."""
    return {s: paired_means(setting_rows(df, x, y, s), x, y, metric) for s in _settings(settings)}


def comparable_cells(df: pd.DataFrame, x: str, y: str, metric: str = "test_mse", setting=None) -> Cells:
    """The (epsilon, dataset) cells the win counts are over, by the claims' rule (`claims.paired_cells`): every run
    that released a model counts, a fallback with its real error; a run that released nothing (an error) does
    not.  Columns: ours (y), partner (x)."""
    return paired_cells(setting_rows(df, x, y, setting), ["epsilon", "dataset"], "algorithm", y, x, metric)


def win_counts(cells: Cells) -> pd.DataFrame:
    """Per epsilon: compared datasets where y's error is below x's (below the diagonal), above, how many were
    compared, and how many were excluded (only within `claims.fallbacks_excluded`)."""
    t = cells.table
    g = t.assign(y_better=t["ours"] < t["partner"], x_better=t["ours"] > t["partner"]).groupby(level="epsilon")
    counts = g[["y_better", "x_better"]].sum().assign(datasets=g.size())
    at = cells.excluded_at if cells.excluded_at is not None else t.index[:0]
    excluded = pd.Series(1, index=at.get_level_values("epsilon")).groupby(level=0).sum()
    counts = counts.reindex(counts.index.union(excluded.index), fill_value=0)
    return counts.assign(excluded=excluded.reindex(counts.index, fill_value=0)).astype(int)


def _fractions(p: pd.DataFrame, x: str, y: str, lo: float, hi: float, log: bool) -> pd.DataFrame:
    """Where each point sits, as axes fractions (fx, fy)."""
    scale = np.log10 if log else (lambda v: v)
    return pd.DataFrame({f"f{a}": (scale(p[c]) - scale(lo)) / (scale(hi) - scale(lo)) for a, c in (("x", x), ("y", y))},
                        index=p.index)


def _name(ax, where: pd.DataFrame, radius: pd.Series) -> list[tuple]:
    """Name points beside them, clear of their marker (offset by its radius), to the left near the right edge,
    moved down while a label is close above.  Returns the labels' boxes (axes fractions, approximate)."""
    placed, boxes = [], []
    for name, (fx, fy) in where.sort_values("fy", ascending=False).iterrows():
        dy = 0
        while any(abs(fx - px) < 0.3 and abs(fy + dy / 300 - py) < 0.045 for px, py in placed):
            dy -= 9
        placed.append((fx, fy + dy / 300))
        label, right, off = common.dataset_label(name), fx > 0.6, radius[name] + 3
        ax.annotate(label, (fx, fy), xycoords="axes fraction", xytext=(-off if right else off, dy),
                    textcoords="offset points", fontsize=7, color="dimgray", ha="right" if right else "left",
                    va="center", arrowprops={"arrowstyle": "-", "color": "silver", "lw": 0.6, "shrinkA": 0}
                    if dy < 0 else None)
        w, x0, y = 0.6 * 7 * len(label) * PT, fx + (-1 if right else 1) * off * PT, fy + dy * PT
        boxes.append((x0 - w if right else x0, y - 4 * PT, x0 if right else x0 + w, y + 4 * PT))
    return boxes


def _count(ax, text: str, boxes: list[tuple], below: bool) -> None:
    """Write a count in its triangle (below the diagonal: lower right; above: upper left) at the first of four
    spots along the edge whose box no marker or name touches (else the one touching fewest)."""
    w, h = 0.6 * 8 * len(text) * PT, 12 * PT
    spots = [(0.96, 0.04 + 0.14 * i) for i in range(4)] if below else [(0.04, 0.96 - 0.14 * i) for i in range(4)]

    def touched(spot):
        x0, y0 = (spot[0] - w, spot[1]) if below else (spot[0], spot[1] - h)
        return sum(a < x0 + w and c > x0 and b < y0 + h and d > y0 for a, b, c, d in boxes)

    sx, sy = min(spots, key=touched)
    ax.text(sx, sy, text, transform=ax.transAxes, fontsize=8, ha="right" if below else "left",
            va="bottom" if below else "top")


def win_summary(df: pd.DataFrame, x: str, y: str, metric: str = "test_mse", settings=None, size_by=None) -> str:
    """The report's lines for a scatter: per setting and epsilon, on how many datasets each has the lower error,
    every released run counted (`comparable_cells`), and how many outputs were fallbacks."""
    lines, names = [], (common.algorithm_label(y), common.algorithm_label(x))
    for s in _settings(settings):
        cells = comparable_cells(df, x, y, metric, s)
        counts = win_counts(cells).to_string() if cells.total else "no dataset with results of both"
        lines.append(f"{setting_label(s, x, y)}: datasets where {y} has lower {metric} than {x} (y_better), "
                     f"per epsilon{cells.note(*names)}:\n{counts}")
    return "\n\n".join(lines)


def _sizes(df: pd.DataFrame, datasets, size_by) -> pd.Series:
    """Marker areas (points^2) per dataset: 22, or proportional to n/d (n = train + test rows), the largest
    dataset's 250 (a floor of 4 keeps the smallest visible)."""
    if size_by is None:
        return pd.Series(22.0, index=datasets)
    if size_by != "n_over_d":
        raise ValueError(f"plot.size_by must be null or n_over_d, got {size_by!r}")
    first = df.groupby("dataset")[["n_train", "n_test", "d"]].first()
    all_ratios = (first["n_train"] + first["n_test"]) / first["d"]
    return np.maximum(4.0, 250.0 * all_ratios.reindex(datasets) / all_ratios.max())


@figure("scatter", summary=win_summary)
def scatter(df: pd.DataFrame, x: str, y: str, title: str = "", metric: str = "test_mse", settings=None,
            size_by=None):
    by_setting = {s: p for s, p in setting_pairs(df, x, y, metric, settings).items() if len(p)}
    compared = {s: comparable_cells(df, x, y, metric, s) for s in by_setting}  # what the counts are over
    if not by_setting:
        raise ValueError(f"no dataset has runs with metrics of both {x} and {y}")
    eps = sorted({e for p in by_setting.values() for e in p.index.get_level_values("epsilon")})
    cells = [(s, e) for s in by_setting for e in eps]
    fig, axes = common.panels(len(cells), ncols=len(eps) if len(by_setting) > 1 else 3, width=4.3, height=4.3,
                              layout="constrained", sharex=True, sharey=True)
    values = np.concatenate([np.r_[p[x].to_numpy(), p[y].to_numpy()] for p in by_setting.values()])
    log = metric.endswith("mse") and (values > 0).all()
    lo, hi = common.log_limits(values, 3.0) if log else common.lin_limits(values, 0.1)
    xl, yl = common.algorithm_label(x), common.algorithm_label(y)
    for ax, (s, e) in zip(axes, cells, strict=True):
        pairs = by_setting[s]
        p = pairs.xs(e, level="epsilon") if e in pairs.index.get_level_values("epsilon") else pairs.iloc[:0]
        ax.plot([lo, hi], [lo, hi], color="grey", lw=1, zorder=1)
        fine, bad = p[~p["failed"]], p[p["failed"]]
        area = _sizes(df, p.index, size_by)
        alpha = 0.5 if size_by else 0.75  # large markers overlap: see through them
        ax.scatter(fine[x], fine[y], s=area[fine.index], alpha=alpha, color="tab:blue", zorder=3)
        ax.scatter(bad[x], bad[y], **{**common.FAILED, **({"s": area[bad.index], "alpha": alpha} if size_by else {})})
        where, radius = _fractions(p, x, y, lo, hi, log), np.sqrt(area) / 2
        gap = (np.log(p[y] / p[x]) if log else p[y] - p[x]).abs()
        boxes = _name(ax, where.loc[gap.nlargest(N_NAMED).index], radius)
        boxes += [(fx - r * PT, fy - r * PT, fx + r * PT, fy + r * PT)
                  for (fx, fy), r in zip(where.to_numpy(), radius[where.index], strict=True)]
        t = compared[s].table
        t = t.xs(e, level="epsilon") if e in t.index.get_level_values("epsilon") else t.iloc[:0]
        below, above = int((t["ours"] < t["partner"]).sum()), int((t["ours"] > t["partner"]).sum())
        _count(ax, f"{xl} better: {above}/{len(t)}", boxes, below=False)
        _count(ax, f"{yl} better: {below}/{len(t)}", boxes, below=True)
        if log:
            ax.set_xscale("log")
            ax.set_yscale("log")
        ax.set_xlim(lo, hi)
        ax.set_ylim(lo, hi)
        ax.set_aspect("equal")
        ax.set_xlabel(f"{xl} {common.metric_label(metric)}")
        if ax.get_subplotspec().is_first_col():
            ax.set_ylabel(f"{yl} {common.metric_label(metric)}")
        if s is None:
            ax.set_title(rf"$\varepsilon$ = {e:g}", fontsize=10)
        else:  # '(a) Non-privately tuned BoostedAdaSSP / vs. non-privately tuned AdaSSP, eps = 1'
            head, _, tail = setting_label(s, x, y).partition(" vs. ")
            letter = f'({"abcdefgh"[list(by_setting).index(s)]}) ' if len(by_setting) > 1 else ""
            ax.set_title(rf"{letter}{head}" "\n" rf"vs. {tail}, $\varepsilon$ = {e:g}", fontsize=9)
        common.grid(ax)
    ok = common.usable(df[df["algorithm"].isin([x, y])])
    n_failed = sum(int(p["failed"].sum()) for p in by_setting.values())
    if n_failed:
        legend = common.failed_legend(ok)
        legend.set_label(f"{n_failed} points with a {legend.get_label()}")
        common.outside_legend(fig, "below", handles=[legend], fontsize=8, frameon=False)
    shown = {d for p in by_setting.values() for d in p.index.get_level_values("dataset")}
    n_seeds, absent = ok["seed"].nunique(), df["dataset"].nunique() - len(shown)
    note = f"; {absent} datasets without results of both" if absent else ""
    size = "; marker area proportional to n/d" if size_by else ""
    excluded, total = sum(c.excluded for c in compared.values()), sum(c.total for c in compared.values())
    counts = (f"\ncounts: {excluded} of {total} points excluded (a side returned its fallback)" if excluded else
              "\ncounts include the crosses (a fallback counts with its error)" if n_failed else "")
    fig.suptitle(f"{title}\nmean over {n_seeds} seeds; below the diagonal: {yl} better; named: the largest gaps"
                 f"{size}{note}{counts}".strip(), fontsize=10)
    return fig


__all__ = ["comparable_cells", "paired_means", "scatter", "setting_label", "setting_pairs", "win_counts"]
