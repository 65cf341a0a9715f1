"""Every figure kind on a small hand-made results frame: failed outcomes, a single epsilon, shared axes, grid
lines, nothing clipped, labels from the algorithm registry."""

import math

import matplotlib.colors
import matplotlib.text
import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import PathCollection

from dpbench import plots
from dpbench.plots.scatter import comparable_cells, win_counts

DATASETS = {"openml_361072": 1.0, "openml_361073": 100.0, "openml_361074": 0.01}  # cpu_act, pol, elevators
REGRESSION = {"adassp": 3.0, "boosted_adassp": 1.0, "tukey": 5.0, "ols": 0.5}  # error factor per algorithm


def results_frame(epsilons=(0.1, 1.0, 10.0)) -> pd.DataFrame:
    """Tidy rows as results.load gives them: TukeyEM's seed 0 is a ptr_failed outcome (it has metrics), one
    adassp run is an error (no metrics), and elevators has the largest gap between the two AdaSSPs."""
    rows = []
    for dataset, scale in DATASETS.items():
        for algo, factor in REGRESSION.items():
            private = algo != "ols"
            for eps in epsilons if private else [math.nan]:
                for seed in (0, 1, 2):
                    gap = 30.0 if (dataset, algo) == ("openml_361074", "adassp") else 1.0
                    mse = scale * factor * gap * (1 + (1 / eps if private else 0)) * (1 + 0.1 * seed)
                    status = "ptr_failed" if algo == "tukey" and seed == 0 else "ok"
                    rows.append({"algorithm": algo, "private": private, "dataset": dataset, "task": "regression",
                                 "epsilon": eps, "seed": seed, "status": status, "test_mse": mse})
    for algo, f1 in (("boosted_adassp_clf", 0.8), ("logreg", 0.9)):
        for eps in epsilons if algo != "logreg" else [math.nan]:
            for seed in (0, 1, 2):
                rows.append({"algorithm": algo, "private": algo != "logreg", "dataset": "telco",
                             "task": "classification", "epsilon": eps, "seed": seed, "status": "ok",
                             "test_f1": f1 - 0.01 * seed})
    rows.append({**rows[0], "seed": 3, "status": "error", "test_mse": math.nan})
    return pd.DataFrame(rows)


def texts(fig) -> str:
    return "\n".join(t.get_text() for t in fig.findobj(matplotlib.text.Text))


def panels(fig):
    return [ax for ax in fig.axes if ax.get_visible()]


def points_in_axes(ax) -> np.ndarray:
    """Axes-fraction positions of every marker (scatter points, line markers, error bar caps)."""
    pts = [c.get_offset_transform().transform(c.get_offsets()) for c in ax.collections
           if isinstance(c, PathCollection) and len(c.get_offsets())]
    pts += [line.get_transform().transform(line.get_xydata()) for line in ax.lines
            if line.get_marker() not in (None, "None", "", " ") and len(line.get_xydata())]
    return ax.transAxes.inverted().transform(np.vstack(pts)) if pts else np.empty((0, 2))


KINDS = [
    ("privacy_curve", {}, (0.1, 1.0, 10.0)),
    ("privacy_curve", {}, (1.0,)),  # one epsilon: the dot chart
    ("dots", {}, (1.0,)),
    ("dots", {"metric": "test_mse"}, (0.1, 1.0)),
    ("scatter", {"x": "adassp", "y": "boosted_adassp", "metric": "test_mse"}, (0.1, 1.0, 10.0)),
    ("scatter", {"x": "adassp", "y": "tukey"}, (1.0,)),
]


@pytest.mark.parametrize("kind,options,epsilons", KINDS)
def test_each_kind_draws_readably(kind, options, epsilons, tmp_path):
    df = results_frame(epsilons)
    if options.get("metric") == "test_mse" or kind == "scatter":
        df = df[df["task"] == "regression"]
    fig = plots.make({"kind": kind, **options}, df, title="t")
    axes = panels(fig)
    assert axes
    for ax in axes:
        assert any(g.get_visible() for g in ax.get_xgridlines() + ax.get_ygridlines()), "a panel without grid"
        pts = points_in_axes(ax)
        assert len(pts) and np.all((pts > 0.01) & (pts < 0.99)), f"a marker on or beyond the edge of {ax.title}"
    text = texts(fig)
    assert "AdaSSP" in text  # labels from the registry's descriptions
    involves_tukey = kind != "scatter" or "tukey" in options.values()
    assert ("failed outcome" in text) == involves_tukey
    path = plots.draw({"kind": kind, **options}, df, tmp_path / "f.png", title="t")
    assert path.stat().st_size > 10_000


@pytest.mark.parametrize("formats, written", [(None, {"f.png"}), (["png"], {"f.png"}),
                                              (["png", "pdf"], {"f.png", "f.pdf"})])
def test_formats_are_the_files_written(formats, written, tmp_path):
    """PNG only unless plot.formats asks for a PDF beside it."""
    plot = {"kind": "dots"} | ({"formats": formats} if formats else {})
    assert plots.draw(plot, results_frame((1.0,)), tmp_path / "f.png") == tmp_path / "f.png"
    assert {p.name for p in tmp_path.iterdir()} == written
    assert (tmp_path / "f.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    if "f.pdf" in written:
        assert (tmp_path / "f.pdf").read_bytes()[:5] == b"%PDF-"


def test_failed_outcomes_are_crosses_counted_in_the_legend():
    fig = plots.make({"kind": "dots"}, results_frame((1.0,)))
    text = texts(fig)
    # tukey's seed 0 on each of the 3 datasets; 42 runs with metrics (the error row has none)
    assert "failed outcome: 3 of 42 runs (ptr_failed 3)" in text
    rows = [t.get_text() for ax in panels(fig) for t in ax.get_yticklabels()]
    assert rows.count("TukeyEM  [1/3 failed]") == 3 and "OLS (non-private)" in rows
    crimson = matplotlib.colors.to_rgba("crimson")
    crosses = [c for ax in fig.axes for c in ax.collections
               if isinstance(c, PathCollection) and len(c.get_offsets()) and tuple(c.get_facecolor()[0]) == crimson]
    assert sum(len(c.get_offsets()) for c in crosses) == 3


def test_single_epsilon_curve_is_the_dot_chart():
    df = results_frame((1.0,))
    curve, chart = plots.make({"kind": "privacy_curve"}, df), plots.make({"kind": "dots"}, df)
    assert texts(curve) == texts(chart)
    labels = [t.get_text() for t in panels(chart)[0].get_yticklabels()]
    assert labels[-1] == "OLS (non-private)" and labels[0] == "TukeyEM  [1/3 failed]"  # best on top


def test_scatter_shares_axes_and_names_the_largest_gaps():
    fig = plots.make({"kind": "scatter", "x": "adassp", "y": "boosted_adassp"},
                     results_frame()[lambda d: d["task"] == "regression"])
    axes = panels(fig)
    assert len(axes) == 3 and len({ax.get_xlim() for ax in axes}) == 1 and len({ax.get_ylim() for ax in axes}) == 1
    names = [t.get_text() for t in axes[0].texts]
    assert "elevators" in names  # openml_361074: adassp 30x worse there
    # cpu_act at eps 0.1 has an adassp error (no model released): its other runs are compared
    assert "BoostedAdaSSP better: 3/3" in names and "excluded" not in fig._suptitle.get_text()


def test_win_counts_count_fallbacks_as_outputs():
    """TukeyEM's seed 0 is a ptr_failed zero model in every cell: it is TukeyEM's output and counts with its error
    (the claims' rule, claims.paired_cells), the figure says so; the sensitivity reading leaves those cells out."""
    from dpbench import claims

    df = results_frame()[lambda d: d["task"] == "regression"]
    plot = {"kind": "scatter", "x": "tukey", "y": "boosted_adassp"}
    fig = plots.make(plot, df)
    counts = [t.get_text() for ax in panels(fig) for t in ax.texts if "better" in t.get_text()]
    assert counts == ["TukeyEM better: 0/3", "BoostedAdaSSP better: 3/3"] * 3
    assert "counts include the crosses" in fig._suptitle.get_text()
    assert "fallbacks: TukeyEM 9 of 27 runs" in plots.summary(plot, df)
    with claims.fallbacks_excluded():
        counts = win_counts(comparable_cells(df, "tukey", "boosted_adassp"))
    assert counts.to_dict("list") == {"y_better": [0] * 3, "x_better": [0] * 3, "datasets": [0] * 3,
                                      "excluded": [3] * 3}


def test_scatter_texts_clear_of_markers_and_each_other():
    """Fig. 12's marker areas: a big point in the lower-right corner, where the count would go, moves the count;
    names sit beside their markers, not on them."""
    df = results_frame((1.0,))[lambda d: d["task"] == "regression"]
    df = df.assign(n_train=df["dataset"].map({"openml_361072": 9000, "openml_361073": 100, "openml_361074": 500}),
                   n_test=100, d=10)
    corner = (df["dataset"] == "openml_361072") & (df["algorithm"] == "tukey")
    df.loc[corner, "test_mse"] = 1e4  # far right, low: in the count's corner
    df.loc[corner, "status"] = "ok"
    fig = plots.make({"kind": "scatter", "x": "tukey", "y": "boosted_adassp", "size_by": "n_over_d"}, df)
    ax = panels(fig)[0]
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    texts = [t.get_window_extent(renderer) for t in ax.texts]  # the counts and the names
    assert not any(a.overlaps(b) for i, a in enumerate(texts) for b in texts[i + 1:])
    for c in ax.collections:
        if isinstance(c, PathCollection) and len(c.get_offsets()):
            r = np.sqrt(c.get_sizes()) / 2 * fig.dpi / 72  # marker radius in pixels
            for (px, py), rad in zip(c.get_offset_transform().transform(c.get_offsets()), np.broadcast_to(r, len(
                    c.get_offsets())), strict=True):
                assert not any(t.x0 < px + rad and t.x1 > px - rad and t.y0 < py + rad and t.y1 > py - rad
                               for t in texts)


def test_privacy_curve_shares_x_and_only_scale_free_y():
    fig = plots.make({"kind": "privacy_curve"}, results_frame())
    a, b = panels(fig)[:2]
    assert a.get_shared_x_axes().joined(a, b) and not a.get_shared_y_axes().joined(a, b)  # MSE: own scales
    telco = results_frame()[lambda d: d["task"] != "regression"]
    assert len(panels(plots.make({"kind": "privacy_curve", "metric": "test_f1"}, telco))) == 1


def test_config_errors_name_the_problem():
    df = results_frame()
    with pytest.raises(ValueError, match=f"unknown plot kind 'bars'; known: {', '.join(plots.kinds())}$"):
        plots.make({"kind": "bars"}, df)
    with pytest.raises(ValueError, match="plot.kind=scatter needs plot.x and plot.y"):
        plots.make({"kind": "scatter", "x": None, "y": None, "metric": None}, df)
    with pytest.raises(ValueError, match="plot.kind=privacy_curve does not take x"):
        plots.make({"kind": "privacy_curve", "x": "ols"}, df)
    with pytest.raises(ValueError, match="no runs with metrics"):
        plots.make({"kind": "dots"}, df.assign(status="error"))
    for bad in (["pdf"], ["png", "svg"], "png"):
        with pytest.raises(ValueError, match=r"plot.formats must be a list of png, pdf with png in it, e.g. \[png,"):
            plots.formats({"kind": "dots", "formats": bad})


def test_algorithms_of_one_task_have_distinct_colours():
    """Figures show the algorithms of one task together: no two of them share a colour (OLS's pale blue beside
    AdaSSP's blue was the old palette's), and a new algorithm gets a colour of its own."""
    from dpbench import algorithms
    from dpbench.plots.common import algorithm_colors

    for task in ("regression", "classification"):
        names = [n for n in algorithms.available() if algorithms.get_spec(n).task == task] + ["my_new_algorithm"]
        colours = algorithm_colors(names)
        assert len(set(colours.values())) == len(names), task
    both = algorithm_colors(["adassp", "ols", "tukey"])
    assert algorithm_colors(["ols", "adassp"]) == {k: both[k] for k in ("ols", "adassp")}  # the same in every figure


def test_classification_colours_come_from_names_and_losses():
    """paper 001's figures colour a line by the row's algorithm name, or its loss where it takes one, never by
    words in a display label (a tuned DP-XGBoost keeps its colour; a loss keeps its colour across algorithms)."""
    from dpbench.plots.classification import _colors, _ok
    from dpbench.plots.common import LOSS_COLORS, algorithm_colors

    df = pd.DataFrame({"algorithm": ["dp_xgboost", "dp_ebm_clf", "boosted_adassp_clf", "boosted_linear_clf"],
                       "tuning_mode": ["tuned", "fixed", "fixed", "fixed"], "status": "ok",
                       "param_loss": [None, None, "hinge", "hinge"]})
    colors = _colors(_ok(df))
    named = algorithm_colors(["dp_xgboost", "dp_ebm_clf"])
    assert colors == {"DP-XGBoost (non-privately tuned)": named["dp_xgboost"], "DP-EBM": named["dp_ebm_clf"],
                      "BoostedAdaSSP (hinge)": LOSS_COLORS["hinge"],
                      "Boosted linear (non-private) (hinge)": LOSS_COLORS["hinge"]}


def test_dpebm_leaves_marks_failed_fits_and_says_which_data_is_missing():
    """Fig. 5's crosses are the fits that failed (the paper's missing dots); a dataset absent from the mirror is a
    panel that says so, not a row of crosses."""
    rows = [{"algorithm": "dp_ebm_clf", "param_n_rounds": 100, "param_max_leaves": leaves, "dataset": name,
             "epsilon": eps, "seed": 0, "status": status, "test_f1": 0.5 if status == "ok" else np.nan}
            for name, status in (("adult", "ok"), ("creditcard", "missing_data"))
            for leaves in (1, 1000) for eps in (0.1, 1.0)]
    rows[0] = {**rows[0], "status": "error", "test_f1": np.nan}  # adult, 1 leaf, eps 0.1: every run failed
    fig = plots.make({"kind": "dpebm_leaves"}, pd.DataFrame(rows))
    adult, creditcard = fig.axes[:2]
    crosses = [c for c in adult.collections if isinstance(c, PathCollection) and len(c.get_offsets())]
    assert [tuple(c.get_offsets()[0]) for c in crosses] == [(0.1, 0.0)]
    assert not creditcard.collections and "creditcard: data missing" in creditcard.texts[0].get_text()
