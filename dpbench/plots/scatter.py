"""Paper 000 Figs. 1-5 and 12: one point per dataset, algorithm x's error against algorithm y's, a panel per
(setting, epsilon).

A setting is a pair of tuning modes [x mode, y mode] (paper 000's (a) both tuned, (b) y fixed vs x tuned,
(c) both fixed): `settings: [[tuned, tuned], [tuned, fixed], [fixed, fixed]]` draws one row of panels per
setting.  Without `settings` every run of x and y counts, whatever its mode.  Below the diagonal y is
better.  All panels share their axes, so points can be followed from one epsilon to the next; the datasets
with the largest gaps are named; a point where either algorithm had a failed outcome in some seed is a
cross.  `size_by: n_over_d` makes a marker's area proportional to the dataset's n/d (Fig. 12).
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


def win_summary(df: pd.DataFrame, x: str, y: str, metric: str = "test_mse", settings=None, size_by=None) -> str:
    """The report's lines for a scatter: per setting and epsilon, on how many datasets each has the lower error."""
    lines = []
    for s, pairs in setting_pairs(df, x, y, metric, settings).items():
        counts = win_counts(pairs, x, y) if len(pairs) else "no dataset with results of both"
        lines.append(f"{setting_label(s, x, y)}: datasets where {y} has lower {metric} than {x} (y_better), "
                     f"per epsilon:\n{counts if isinstance(counts, str) else counts.to_string()}")
    return "\n\n".join(lines)


def _sizes(df: pd.DataFrame, datasets, size_by) -> np.ndarray | float:
    """Marker areas: 22 points, or proportional to n/d (n = train + test rows), the largest dataset's 400 points
    (a floor of 4 keeps the smallest visible)."""
    if size_by is None:
        return 22.0
    if size_by != "n_over_d":
        raise ValueError(f"plot.size_by must be null or n_over_d, got {size_by!r}")
    first = df.groupby("dataset")[["n_train", "n_test", "d"]].first()
    all_ratios = (first["n_train"] + first["n_test"]) / first["d"]
    return np.maximum(4.0, 400.0 * all_ratios.reindex(datasets).to_numpy(float) / all_ratios.max())


@figure("scatter", summary=win_summary)
def scatter(df: pd.DataFrame, x: str, y: str, title: str = "", metric: str = "test_mse", settings=None,
            size_by=None):
    by_setting = {s: p for s, p in setting_pairs(df, x, y, metric, settings).items() if len(p)}
    if not by_setting:
        raise ValueError(f"no dataset has runs with metrics of both {x} and {y}")
    eps = sorted({e for p in by_setting.values() for e in p.index.get_level_values("epsilon")})
    cells = [(s, e) for s in by_setting for e in eps]
    fig, axes = common.panels(len(cells), ncols=len(eps) if len(by_setting) > 1 else 3, width=4.3, height=4.3,
                              sharex=True, sharey=True)
    values = np.concatenate([np.r_[p[x].to_numpy(), p[y].to_numpy()] for p in by_setting.values()])
    log = metric.endswith("mse") and (values > 0).all()
    lo, hi = common.log_limits(values, 3.0) if log else common.lin_limits(values, 0.1)
    xl, yl = common.algorithm_label(x), common.algorithm_label(y)
    for ax, (s, e) in zip(axes, cells, strict=True):
        pairs = by_setting[s]
        p = pairs.xs(e, level="epsilon") if e in pairs.index.get_level_values("epsilon") else pairs.iloc[:0]
        ax.plot([lo, hi], [lo, hi], color="grey", lw=1, zorder=1)
        fine, bad = p[~p["failed"]], p[p["failed"]]
        ax.scatter(fine[x], fine[y], s=_sizes(df, fine.index, size_by), alpha=0.75, color="tab:blue", zorder=3)
        ax.scatter(bad[x], bad[y], **{**common.FAILED, **({"s": _sizes(df, bad.index, size_by)} if size_by else {})})
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
        fig.legend(handles=[legend], loc="upper center", bbox_to_anchor=(0.5, 0.0), fontsize=8, frameon=False)
    shown = {d for p in by_setting.values() for d in p.index.get_level_values("dataset")}
    n_seeds, absent = ok["seed"].nunique(), df["dataset"].nunique() - len(shown)
    note = f"; {absent} datasets without results of both" if absent else ""
    size = "; marker area proportional to n/d" if size_by else ""
    fig.suptitle(f"{title}\nmean over {n_seeds} seeds; below the diagonal: {yl} better; named: the largest gaps"
                 f"{size}{note}".strip(), fontsize=10)
    fig.tight_layout()
    return fig


__all__ = ["paired_means", "scatter", "setting_label", "setting_pairs", "win_counts"]
