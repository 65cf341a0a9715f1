"""The summary table (dpbench/summary.py) on a hand-made results frame: means over seeds, failed outcomes, runs
without a model."""

import math

import pandas as pd
import pytest

from dpbench.summary import render, summary_table


def row(algorithm, seed, value, status="ok", dataset="d1", task="regression", epsilon=1.0):
    metric = "test_mse" if task == "regression" else "test_f1"
    return {"dataset": dataset, "algorithm": algorithm, "task": task, "epsilon": epsilon, "seed": seed,
            "status": status, "private": not math.isnan(epsilon), metric: value}


FRAME = pd.DataFrame([
    row("adassp", 0, 1.0), row("adassp", 1, 3.0),
    row("tukey", 0, 4.0, "ptr_failed"), row("tukey", 1, 2.0), row("tukey", 2, math.nan, "error"),
    row("ols", 0, 0.5, epsilon=math.nan), row("ols", 1, 0.5, epsilon=math.nan),
    row("logreg", 0, 0.8, dataset="telco", task="classification", epsilon=math.nan),
    row("boosted_adassp_clf", 0, 0.6, dataset="telco", task="classification", epsilon=2.0),
    row("boosted_adassp_clf", 0, math.nan, "missing_data", dataset="telco", task="classification", epsilon=3.0),
])


def test_summary_table_by_hand():
    t = summary_table(FRAME)
    assert t.index.names == ["dataset", "algorithm", "epsilon"]
    assert t.loc[("d1", "adassp", 1.0)].to_dict() == {"metric": "test_mse", "mean": 2.0, "std": 1.0, "runs": 2,
                                                      "failed": 0, "no_model": 0}
    # the ptr_failed zero model counts in the mean (it is paper 000's outcome); the error run does not
    assert t.loc[("d1", "tukey", 1.0)].to_dict() == {"metric": "test_mse", "mean": 3.0, "std": 1.0, "runs": 3,
                                                     "failed": 1, "no_model": 1}
    assert t.loc[("d1", "ols", math.inf), "mean"] == 0.5  # non-private: epsilon inf
    assert t.loc[("telco", "logreg", math.inf), "metric"] == "test_f1"  # each task its default metric
    missing = t.loc[("telco", "boosted_adassp_clf", 3.0)]
    assert math.isnan(missing["mean"]) and (missing["runs"], missing["no_model"]) == (1, 1)
    assert len(t) == 6


def test_summary_table_of_one_metric():
    t = summary_table(FRAME[FRAME["task"] == "regression"], metric="test_mse")
    assert list(t["mean"]) == pytest.approx([2.0, 0.5, 3.0])  # adassp, ols, tukey


def test_render_adds_what_the_figure_kind_summarises():
    scatter = {"kind": "scatter", "x": "adassp", "y": "tukey", "metric": "test_mse"}
    text = render(FRAME[FRAME["task"] == "regression"], scatter)
    assert "datasets where tukey has lower test_mse than adassp" in text
    # d1 is compared over the runs that released a model: tukey's ptr_failed zero model (4.0) counts, its error
    # does not; mean 3.0 against adassp's 2.0
    assert "fallbacks: AdaSSP 0 of 2 runs, TukeyEM 1 of 2" in text
    assert text.splitlines()[-1].split() == ["1.0", "0", "1", "1", "0"]
    assert "datasets where" not in render(FRAME, {"kind": "privacy_curve"})


def test_a_sub_grids_settings_are_not_pooled():
    """Two values of a parameter in one experiment are two settings ('tukey n_models=1000' and '...=10000'), each
    with its own seeds; a parameter that does not vary is not named."""
    rows = [{"experiment": "e", "dataset": "d", "algorithm": "tukey", "params": f'{{"n_models": {m}, "x": 1}}',
             "epsilon": 1.0, "task": "regression", "status": "ok", "test_mse": m / 1000 + s, "test_f1": None,
             "tuning_mode": "fixed"}
            for m in (1000, 10000) for s in range(3)]
    t = summary_table(pd.DataFrame(rows))
    assert list(t.index.get_level_values("algorithm")) == ["tukey n_models=1000", "tukey n_models=10000"]
    assert t["runs"].tolist() == [3, 3] and t["mean"].tolist() == [2.0, 11.0]


def test_render_leaves_out_datasets_without_any_model_and_says_how_many():
    gone = [row("adassp", s, math.nan, "missing_data", dataset="absent") for s in range(2)]
    text = render(pd.concat([FRAME, pd.DataFrame(gone)], ignore_index=True))
    assert "absent" not in text and "(1 dataset(s) without a model in any run not shown)" in text
    assert "telco" in text  # one missing run among runs with models: kept
