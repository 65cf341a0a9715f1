"""Paper 000 Figs. 6-11: a metric against the number of training samples, one line per corruption fraction p.

Kind `sample_curve`.  One row of panels per comparison partner (the paper's figures: Fig. 6 is BoostedAdaSSP
vs AdaSSP under label corruption, Fig. 7 the same data vs TukeyEM, ...), one panel per epsilon; in a panel a
colour per p, `ours` as a solid line, the partner dashed: the mean over trials with a light band over the
interquartile range of the trials (25th to 75th percentile), edged in the line's style so that overlapping bands
stay apart (min-max bands of several p ran together into grey).  x is n_train in millions (log scale), as the
paper's '# Samples'.  A run whose status is an algorithm outcome other than 'ok' (TukeyEM's ptr_failed zero
model) counts in the mean and is drawn as a red cross, counted in the legend; the summary's win counts count
it too, with its error, as the claims do (`claims.paired_cells`: a run counts with what it released).

The rows' p and corruption are the synthetic dataset's options, which the data registry reads back from
each row's dataset name (`data.label_options`).  An algorithm run with several
hyperparameter settings (TukeyEM with 1000 and 10,000 models) is one *variant* per setting, a row each, named
by the parameters that differ (`variants`).
"""

from __future__ import annotations

import json
import re

import pandas as pd
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter

from dpbench import data
from dpbench.claims import paired_cells
from dpbench.plots import common, figure


def settings(df: pd.DataFrame) -> pd.DataFrame:
    """df with the columns outlier and fraction: the options of each row's dataset (a ValueError for a dataset
    without them)."""
    options = {}
    for name in df["dataset"].unique():
        try:
            options[name] = data.label_options(name)
        except ValueError:
            options[name] = {}
    bad = [n for n, o in options.items() if not {"outlier", "fraction"} <= set(o)]
    if bad:
        raise ValueError(f"plot.kind=sample_curve needs synthetic datasets (a corruption and its fraction); "
                         f"got {', '.join(map(str, bad[:3]))}")
    return df.assign(outlier=df["dataset"].map(lambda n: options[n]["outlier"]),
                     fraction=df["dataset"].map(lambda n: float(options[n]["fraction"])))


def variants(df: pd.DataFrame) -> pd.DataFrame:
    """df with `variant` (the algorithm, or 'algorithm[key=value,...]' when it ran with several settings: the
    keys whose values differ) and `variant_label` (its display name)."""
    names, labels = {}, {}
    for algo, g in df.groupby("algorithm"):
        settings_ = {s: json.loads(s) for s in g["params"].unique()}
        differ = sorted(k for k in set().union(*settings_.values())
                        if len({json.dumps(v.get(k), sort_keys=True) for v in settings_.values()}) > 1)
        for text, params in settings_.items():
            tag = ", ".join(f"{k}={params.get(k)}" for k in differ)
            names[(algo, text)] = f"{algo}[{tag}]" if tag else algo
            labels[(algo, text)] = common.algorithm_label(algo) + (f" ({tag})" if tag else "")
    keys = list(zip(df["algorithm"], df["params"], strict=True))
    return df.assign(variant=[names[k] for k in keys], variant_label=[labels[k] for k in keys])


def cell_means(df: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Mean metric per (variant, epsilon, fraction, n_train) with the trials, failures and quartiles q25 / q75."""
    df = df if "variant" in df else variants(df)
    g = df.groupby(["variant", "epsilon", "fraction", "n_train"])
    out = g[metric].agg(["mean", "count"])
    out["q25"], out["q75"] = g[metric].quantile(0.25), g[metric].quantile(0.75)
    out["failed"] = g["failed"].sum()
    return out.reset_index()


def comparison(df: pd.DataFrame, ours: str, partner: str, metric: str = "test_mse") -> pd.DataFrame:
    """One row per (epsilon, fraction, n_train) cell with both variants' mean metric and `ours_better`
    (`ours`, `partner`: variant names, see `variants`; an algorithm with one setting is its own name)."""
    cells = cell_means(settings(common.usable(df)), metric)
    key = ["epsilon", "fraction", "n_train"]
    a = cells[cells["variant"] == ours].set_index(key)
    b = cells[cells["variant"] == partner].set_index(key)
    both = a[["mean", "count"]].add_suffix("_ours").join(
        b[["mean", "count"]].add_suffix("_partner").assign(failed=b["failed"]), how="inner")
    sign = 1 if common.lower_is_better(metric) else -1
    both["ours_better"] = sign * (both["mean_ours"] - both["mean_partner"]) < 0
    return both.reset_index()


def _partners(ok: pd.DataFrame, ours: str, partners) -> list[tuple[str, str]]:
    """(partner algorithm, variant) rows: partners in the order given (None: every other algorithm)."""
    algos = sorted(set(ok["algorithm"]) - {ours}) if partners is None else [
        p for p in partners if p in set(ok["algorithm"])]
    natural = lambda v: [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", v)]  # noqa: E731 - m=1000 < 10000
    return [(a, v) for a in algos for v in sorted(ok.loc[ok["algorithm"] == a, "variant"].unique(), key=natural)]


def _summary(df: pd.DataFrame, metric: str | None = None, ours: str = "boosted_adassp", partners=None,
             figures=None) -> str:
    """Per partner: in how many (epsilon, p, n) cells `ours` has the better mean, every released run counted (the
    claims' rule, `claims.paired_cells`), and how many outputs were fallbacks."""
    metric = metric or "test_mse"
    ok = variants(common.usable(df))
    labels = dict(zip(ok["variant"], ok["variant_label"], strict=True))
    rows, sign = variants(settings(df)), 1 if common.lower_is_better(metric) else -1
    lines = []
    for _, partner in _partners(ok, ours, partners):
        c = paired_cells(rows, ["epsilon", "fraction", "n_train"], "variant", ours, partner, metric)
        wins = int((sign * (c.table["ours"] - c.table["partner"]) < 0).sum())
        lines.append(f"{common.algorithm_label(ours)} has the better mean {common.metric_label(metric)} than "
                     f"{labels[partner]} in {wins} of {len(c.table)} (epsilon, p, n) cells"
                     + c.note(common.algorithm_label(ours), labels[partner]))
    return "\n".join(lines)


def _millions(x, _pos) -> str:
    return f"{x / 1e6:g}"


@figure("sample_curve", summary=_summary)
def sample_curve(df: pd.DataFrame, title: str = "", metric: str | None = None, ours: str = "boosted_adassp",
                 partners: list | None = None, figures: list | None = None):
    """partners: the comparison partners, a row each (None: every other algorithm in the results);
    figures: a label per partner (e.g. ["Fig. 6", "Fig. 7"]), in its rows' titles."""
    metric = metric or "test_mse"
    ok = variants(settings(common.usable(df)))
    labels = dict(zip(ok["variant"], ok["variant_label"], strict=True))
    if figures is not None and partners is not None and len(figures) != len(partners):
        raise ValueError(f"plot.figures needs one label per partner ({len(partners)}), got {len(figures)}")
    figure_of = dict(zip(partners, figures, strict=True)) if figures is not None and partners is not None else {}
    rows = _partners(ok, ours, partners)
    if set(ok.loc[ok["algorithm"] == ours, "variant"]) != {ours} or not rows:
        raise ValueError(f"plot.kind=sample_curve needs runs of {ours} (one setting) and of a partner; "
                         f"results have {', '.join(sorted(ok['variant'].unique()))}")
    eps = sorted(ok["epsilon"].dropna().unique())
    fractions = sorted(ok["fraction"].unique())
    cmap = common.plt.get_cmap("viridis")
    colours = {p: cmap(0.9 * i / max(1, len(fractions) - 1)) for i, p in enumerate(fractions)}
    fig, axes = common.panels(len(rows) * len(eps), ncols=len(eps), width=5.0, height=3.9, layout="constrained",
                              sharex=True, sharey=True)
    cells = cell_means(ok, metric)
    n_all = sorted(ok["n_train"].unique())
    markers = dict(zip([v for _, v in rows], "s^DvP*", strict=False))
    for row, (partner_algo, partner) in enumerate(rows):
        for col, e in enumerate(eps):
            ax = axes[row * len(eps) + col]
            for var, style in ((ours, {"ls": "-", "marker": "o"}),
                               (partner, {"ls": "--", "marker": markers.get(partner, "s")})):
                for p in fractions:
                    c = cells[(cells["variant"] == var) & (cells["epsilon"] == e) & (cells["fraction"] == p)]
                    c = c.sort_values("n_train")
                    ax.plot(c["n_train"], c["mean"], color=colours[p], ms=4, lw=1.5, **style)
                    ax.fill_between(c["n_train"], c["q25"], c["q75"], color=colours[p], alpha=0.07,
                                    ls=style["ls"], lw=0.6, edgecolor=(*colours[p][:3], 0.6))
                bad = ok[(ok["variant"] == var) & (ok["epsilon"] == e) & ok["failed"]]
                ax.scatter(bad["n_train"], bad[metric], **common.FAILED)
            label = f"{figure_of[partner_algo]}: " if partner_algo in figure_of else ""
            ax.set_title(f"{label}{common.algorithm_label(ours)} vs {labels[partner]}, "
                         rf"$\varepsilon$ = {e:g}", fontsize=9)
            ax.set_xscale("log")
            ax.xaxis.set_major_formatter(FuncFormatter(_millions))
            ax.set_xticks(n_all)
            ax.xaxis.set_minor_formatter(FuncFormatter(lambda *_: ""))
            ax.set_xlabel("# Samples (millions)")
            ax.set_ylabel(common.metric_label(metric))
            common.grid(ax)
    values = ok[metric].dropna()
    if metric.endswith("mse") and (values > 0).all():
        axes[0].set_yscale("log")
        axes[0].set_ylim(*common.log_limits(values))
    else:
        axes[0].set_ylim(*common.lin_limits(values))
    handles = [common.plt.Line2D([], [], color=colours[p], lw=2, label=f"p = {p:g}") for p in fractions]
    handles += [common.plt.Line2D([], [], color="grey", ls="-", marker="o", ms=4, label=common.algorithm_label(ours))]
    handles += [common.plt.Line2D([], [], color="grey", ls="--", marker=markers.get(v, "s"), ms=4, label=labels[v])
                for _, v in rows]
    handles.append(Patch(facecolor=(0.5, 0.5, 0.5, 0.15), edgecolor="grey", lw=0.6,
                         label="band: interquartile range of trials"))
    failed = common.failed_legend(ok)
    if failed is not None:
        handles.append(failed)
    common.outside_legend(fig, "right", handles=handles, fontsize=8, frameon=False)
    outliers = ", ".join(sorted(ok["outlier"].unique()))
    trials = ok.groupby(["variant", "epsilon", "fraction", "n_train"])["seed"].nunique()
    n = f"{trials.min()}" + ("" if trials.min() == trials.max() else f"-{trials.max()}")
    fig.suptitle(f"{title}  ({outliers} corruption; line: mean over {n} trials, band: interquartile range; "
                 f"clean test set)".strip(), fontsize=10)
    return fig


__all__ = ["cell_means", "comparison", "sample_curve", "settings", "variants"]
