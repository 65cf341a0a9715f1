"""What every figure kind shares: names and colours of algorithms, metric labels, failed outcomes, saving.

Display labels come from `styles.LABELS` (by algorithm name), else the
published name the registry's description starts with, else the registry
name, so a new algorithm needs no entry here.  Colours are chosen here (COLORS), a new
algorithm gets the next spare one, so an algorithm has one colour in every figure.
"""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib
import matplotlib.colors

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from dpbench import metrics  # noqa: E402
from dpbench.results import has_metrics  # noqa: E402

FAILED = {"marker": "X", "s": 46, "color": "crimson", "edgecolors": "white", "linewidths": 0.5, "zorder": 5}
_PUBLISHED_NAME = re.compile(r"^([^\s:;(]+)(?:\s*[(:;]|$)")  # 'AdaSSP (Wang 2018): ...' -> 'AdaSSP'


def algorithm_label(name: str) -> str:
    """Display name of a registered algorithm; non-private ones say so (as the design notes ask of legends).
    'name [mode]' (`by_mode`) is labelled with its tuning mode, e.g. 'AdaSSP (non-privately tuned)'."""
    from dpbench import algorithms

    if name.endswith("]") and " [" in name:
        from dpbench.tuning import MODE_LABELS

        base, mode = name[:-1].split(" [", 1)
        return f"{algorithm_label(base)} ({MODE_LABELS.get(mode, mode).lower()})"

    try:
        spec = algorithms.get_spec(name)
    except ValueError:  # results of an algorithm that is no longer registered
        return name
    from dpbench.plots.styles import LABELS

    match = _PUBLISHED_NAME.match(spec.description)
    label = LABELS.get(name) or (match.group(1) if match else name)
    return label if spec.private else f"{label} (non-private)"


COLORS = {  # hues that stay apart within a figure; a classifier takes its regressor's, non-private references dark
    "boosted_adassp": "tab:green", "adassp": "tab:blue", "ssp": "tab:cyan", "tukey": "tab:orange",
    "dpgd": "tab:purple", "ambssgd": "tab:brown", "robgd": "tab:pink", "dp_ebm": "tab:red",
    "private_selection": "tab:olive", "ols": "black", "ridge": "tab:gray",
    "boosted_adassp_clf": "tab:green", "dp_ebm_clf": "tab:red", "dp_xgboost": "tab:orange",
    "private_selection_clf": "tab:olive", "boosted_linear_clf": "tab:gray", "logreg": "black",
}
MORE_COLORS = ["#393b79", "#8c6d31", "#843c39", "#637939", "#7b4173"]  # dark shades, for algorithms not above
# a boosted classifier's loss (paper 001's figures draw a line per loss): keyed by the row's `loss` parameter
LOSS_COLORS = {"squared": "tab:green", "logistic": "tab:blue", "hinge": "tab:purple"}


def algorithm_colors(names) -> dict[str, tuple]:
    """One colour per algorithm, the same in every figure: COLORS, else the next of MORE_COLORS by the
    algorithm's place in the registry (then by name for unregistered ones)."""
    from dpbench import algorithms

    order = [n for n in algorithms.available() + sorted(set(names) - set(algorithms.available())) if n not in COLORS]
    return {n: matplotlib.colors.to_rgba(COLORS[n] if n in COLORS else MORE_COLORS[order.index(n) % len(MORE_COLORS)])
            for n in names}


def dataset_label(name: str) -> str:
    """A short name for annotations: the registry's title or config name (openml_361072 -> cpu_act)."""
    from dpbench.data import get_spec

    try:
        spec = get_spec(name)
    except ValueError:  # generated data carries its options in its name
        return name
    return spec.slug or spec.title or name


def dataset_title(name: str) -> str:
    """A panel title: the short name, and the results' name when it differs."""
    short = dataset_label(name)
    return name if short == name else f"{short} ({name})"


def metric_label(metric: str) -> str:
    """'test MSE' for 'test_mse': the split and the registered metric's label (dpbench.metrics)."""
    m = metrics.of_column(metric)
    return f"{metric.split('_', 1)[0]} {m.label}" if m else metric


def lower_is_better(metric: str) -> bool:
    m = metrics.of_column(metric)
    return bool(m and m.lower_is_better)


def scale_free(metric: str) -> bool:
    """Metrics on one scale for every dataset (F1, AUROC, accuracy, R^2), so panels may share that axis."""
    m = metrics.of_column(metric)
    return bool(m is None or m.scale_free)


def default_metric(df: pd.DataFrame) -> str:
    return "test_f1" if (df["task"] == "classification").all() else "test_mse"


def by_mode(df: pd.DataFrame) -> pd.DataFrame:
    """Runs in a tuning mode other than fixed as their own series: algorithm 'name [mode]'."""
    if "tuning_mode" not in df or (df["tuning_mode"].fillna("fixed") == "fixed").all():
        return df
    mode = df["tuning_mode"].fillna("fixed")
    return df.assign(algorithm=df["algorithm"].where(mode == "fixed", df["algorithm"] + " [" + mode + "]"))


def usable(df: pd.DataFrame) -> pd.DataFrame:
    """Rows with metrics, with a `failed` column: an algorithm outcome other than 'ok' (TukeyEM's ptr_failed
    zero model, an empty private histogram) that still predicts, so it counts, drawn with the FAILED marker."""
    ok = df[has_metrics(df)]
    if ok.empty:
        raise ValueError("no runs with metrics to plot")
    return ok.assign(failed=ok["status"] != "ok")


def failed_legend(df: pd.DataFrame):
    """The legend entry of failed outcomes, with how many runs and which statuses (None when there are none)."""
    failed = df[df["failed"]]
    if failed.empty:
        return None
    counts = ", ".join(f"{s} {n}" for s, n in failed["status"].value_counts().sort_index().items())
    return plt.Line2D([], [], ls="", marker=FAILED["marker"], color=FAILED["color"], ms=7,
                      label=f"failed outcome: {len(failed)} of {len(df)} runs ({counts})")


def log_limits(values, pad: float = 1.35) -> tuple[float, float]:
    """Limits of a log axis that keep every marker whole (a factor `pad` beyond the extremes)."""
    positive = [v for v in values if v > 0]
    return min(positive) / pad, max(positive) * pad


def lin_limits(values, pad: float = 0.06) -> tuple[float, float]:
    lo, hi = min(values), max(values)
    span = (hi - lo) or abs(hi) or 1.0
    return lo - pad * span, hi + pad * span


def grid(ax) -> None:
    ax.grid(True, which="major", alpha=0.35)
    ax.grid(True, which="minor", alpha=0.12)


def not_run(ax, what: str = "") -> None:
    """A panel without data says so in words (empty axes would read as a plot of nothing).  Only this panel's
    ticks are hidden: its limits and scale may be shared with the others."""
    ax.grid(False, which="both")
    ax.tick_params(which="both", left=False, bottom=False, labelleft=False, labelbottom=False)
    ax.set_xlabel("")
    ax.set_ylabel("")
    ax.text(0.5, 0.5, "not run" + (f"\n{what}" if what else ""), transform=ax.transAxes, ha="center",
            va="center", fontsize=10, color="0.35")


def panels(n: int, ncols: int = 3, width: float = 4.6, height: float = 3.8, layout: str | None = None, **share):
    """A grid of n panels (spare ones hidden).  layout="constrained": matplotlib's constrained layout places the
    panels, titles and `outside_legend`s when the figure is drawn, inside the figure, so that `save` writes it
    without the tight-bounding-box pass (a second layout of every text); the kind then calls no tight_layout."""
    ncols = min(ncols, n)
    nrows = -(-n // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(width * ncols, height * nrows), squeeze=False, layout=layout,
                             **share)
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    for ax in axes.flat[:n]:  # shared axes hide inner tick labels, also above a hidden spare panel: show them
        ax.tick_params(labelbottom=True, labelleft=True)
    return fig, list(axes.flat[:n])


LEGEND_GAP = 0.1  # inches between an outside legend and the panels


def outside_legend(fig, side: str, *args, **kw):
    """A legend right of the panels, its top at the top panels' ('right'), or centred below them ('below'), in a
    constrained-layout figure (`panels(layout="constrained")`), which makes room for it; the figure grows by the
    legend's size, so that the panels keep theirs, as they did when the saved figure was cropped to a tight
    bounding box around a legend beyond its edge.  `args`, `kw`: those of fig.legend.  (The right one belongs to
    the top right panel: constrained layout then widens that column's margin, not the figure's top, which the
    title spans.)"""
    if side == "right":
        top = [ax for ax in fig.axes if ax.get_visible() and ax.get_subplotspec().rowspan.start == 0]
        ax = max(top, key=lambda a: a.get_subplotspec().colspan.stop)
        legend = ax.legend(*args, loc="upper left", bbox_to_anchor=(1.0, 1.0), **kw)
    else:
        legend = fig.legend(*args, loc="outside lower center", **kw)
    box = legend.get_window_extent(fig.canvas.get_renderer())  # its texts only: in pixels at the figure's dpi
    width, height = fig.get_size_inches()
    if side == "right":
        fig.set_size_inches(width + box.width / fig.dpi + LEGEND_GAP, height)
    else:
        fig.set_size_inches(width, height + box.height / fig.dpi + LEGEND_GAP)
    return legend


FORMATS = ("png", "pdf")  # what a figure can be saved as (plot.formats); the analyses' paper figures: both
DPI = 130  # the PNG's


def save(fig, out_path: str | Path, formats=("png",)) -> Path:
    """Write the figure (the whole of it: legends outside the axes included) to out_path and, beside it, in each
    other of `formats` (a sweep asks for a PDF only with plot.formats: it is time after every sweep); free it.
    A constrained-layout figure (`panels(layout="constrained")`) holds everything inside it and is written as it
    is; any other is cropped to the tight bounding box of what it draws (a second layout pass of its texts)."""
    from matplotlib.layout_engine import ConstrainedLayoutEngine

    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    crop = {} if isinstance(fig.get_layout_engine(), ConstrainedLayoutEngine) else {"bbox_inches": "tight"}
    fig.savefig(out_path, dpi=DPI, **crop)
    for fmt in dict.fromkeys(formats):
        if f".{fmt}" != out_path.suffix.lower():
            fig.savefig(out_path.with_suffix(f".{fmt}"), **crop)
    plt.close(fig)
    return out_path
