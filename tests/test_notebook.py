"""The notebook runs top to bottom (nbclient, a real kernel) on the quickstart's results and on a tuned
multi-experiment results directory, where its numbers are checked against pandas computed here; and the functions
it calls (dpbench/explore.py) keep cells apart and pair runs one to one."""

from __future__ import annotations

import base64
import io
import itertools
import json
import math
import os
from pathlib import Path

import nbclient
import nbformat
import numpy as np
import pandas as pd
import pytest
from PIL import Image
from scipy import stats

import dpbench
from dpbench import explore, results
from dpbench.__main__ import main

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "explore_results.ipynb"
EXPERIMENTS, MODES, ALGORITHMS, DATASETS, EPSILONS, SEEDS = ["exp_a", "exp_b"], ["fixed", "tuned"], \
    ["adassp", "boosted_adassp"], ["d1", "d2"], [0.1, 1.0], [0, 1, 2]
MISSING = ("exp_b", "tuned", "boosted_adassp", "d2", 1.0, 2)  # a run without a model: its partner is unpaired


def run_notebook(tmp_path, monkeypatch, results_dir, extra: str = "") -> nbformat.NotebookNode:
    """The notebook executed on results_dir (with `extra` as a last cell), in a kernel importing this dpbench."""
    monkeypatch.setenv("DPBENCH_RESULTS", str(results_dir))
    here = str(Path(dpbench.__file__).resolve().parents[1])
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [here, os.environ.get("PYTHONPATH")])))
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    if extra:
        notebook.cells.append(nbformat.v4.new_code_cell(extra))
    nbclient.NotebookClient(notebook, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}}).execute()  # raises on a cell's error
    return notebook


def outputs(notebook, kind: str = "text") -> list:
    """Every output's text (stdout and text/plain), or the decoded PNG images (kind 'png')."""
    found = []
    for o in (o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs):
        data = o.get("data", {})
        if kind == "png" and "image/png" in data:
            found.append(Image.open(io.BytesIO(base64.b64decode(data["image/png"]))))
        elif kind == "text":
            found.append(str(o.get("text", "")) + str(data.get("text/plain", "")))
    return found


def test_the_notebook_runs_on_the_quickstarts_results(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["sweep", "experiment=quickstart", "runner.progress=false", "runner.n_jobs=1"]) == 0
    notebook = run_notebook(tmp_path, monkeypatch, tmp_path / "results" / "quickstart")
    text = "\n".join(outputs(notebook))
    assert "55 runs from" in text and "boosted_adassp" in text and "wilcoxon_p" in text, text
    assert "adassp vs boosted_adassp: 25 pairs, 0 runs without a partner" in text, text
    assert len(outputs(notebook, "png")) == 1


def synthetic_rows() -> pd.DataFrame:
    """Two experiments x two modes x two algorithms x two datasets x two epsilons x three seeds, and OLS (no
    privacy level) in exp_a, with MSEs of different scales per experiment, mode and algorithm (pooling shows)."""
    rng = np.random.default_rng(0)
    rows = []
    for exp, mode, algorithm, dataset, eps, seed in itertools.product(EXPERIMENTS, MODES, ALGORITHMS, DATASETS,
                                                                      EPSILONS, SEEDS):
        scale = 10.0 ** (EXPERIMENTS.index(exp) + 2 * MODES.index(mode) - ALGORITHMS.index(algorithm))
        missing = (exp, mode, algorithm, dataset, eps, seed) == MISSING
        rows.append({"experiment": exp, "tuning_mode": mode, "algorithm": algorithm, "params": "{}", "private": True,
                     "dataset": dataset, "epsilon": eps, "delta": 1e-6, "seed": seed,
                     "test_mse": np.nan if missing else scale * rng.lognormal(0, 0.5),
                     "status": "missing_data" if missing else "ok"})
    rows += [{"experiment": "exp_a", "tuning_mode": "fixed", "algorithm": "ols", "params": "{}", "private": False,
              "dataset": dataset, "epsilon": np.nan, "delta": np.nan, "seed": seed, "test_mse": 0.5 + seed,
              "status": "ok"} for dataset in DATASETS for seed in SEEDS]
    df = pd.DataFrame(rows).assign(task="regression", test_f1=np.nan, split="fixed", data_seed=42, attempt=1)
    return df.assign(run_id=[f"run{i}" for i in range(len(df))])


def write_results(df: pd.DataFrame, root: Path) -> Path:
    """The rows as a results directory, a sweep directory per experiment (the repository's result format)."""
    for exp, rows in df.groupby("experiment"):
        results.write_part(rows.to_dict("records"), root / exp, "0")
    return root


REPORT = """import json
print("REPORT " + json.dumps({"cells": table.reset_index().to_dict("records"), "pairs": len(paired),
      "unpaired": unpaired.to_dict("records"), "compare": explore.compare(paired).reset_index().to_dict("records"),
      "first": first, "second": second}))"""


def test_the_notebooks_numbers_on_a_tuned_multi_experiment_directory(tmp_path, monkeypatch):
    df = synthetic_rows()
    notebook = run_notebook(tmp_path, monkeypatch, write_results(df, tmp_path / "results"), REPORT)
    report = json.loads(next(t for t in outputs(notebook) if t.startswith("REPORT ")).removeprefix("REPORT "))

    # per cell: pandas on the rows as written, each experiment and mode apart; OLS's cells have no privacy level
    keys = ["experiment", "tuning_mode", "algorithm", "dataset", "epsilon"]
    ok = df[df["status"] == "ok"]
    expected = ok.fillna({"epsilon": math.inf}).groupby(keys)["test_mse"].agg(["count", "mean", "std"])
    cells = pd.DataFrame(report["cells"]).rename(columns={"setting": "algorithm"})
    cells = cells.fillna({"epsilon": math.inf}).set_index(keys)
    assert len(cells) == len(expected) == 2 * 2 * 2 * 2 * 2 + 2
    cells = cells.loc[expected.index]
    assert (cells["count"] == expected["count"]).all()
    assert cells["mean"].to_numpy() == pytest.approx(expected["mean"].to_numpy(), rel=1e-12)
    assert cells["std"].to_numpy() == pytest.approx(expected["std"].to_numpy(), rel=1e-12)
    assert set(cells["count"]) == {len(SEEDS), len(SEEDS) - 1}  # every cell one run per seed, one run missing
    assert cells.loc[("exp_a", "fixed", "ols", "d1", math.inf), "mean"].item() == pytest.approx(1.5)

    # pairs: one per (experiment, mode, dataset, epsilon, seed), no many-to-many; the missing run's partner is left
    assert (report["first"], report["second"]) == ("adassp", "boosted_adassp")
    assert report["pairs"] == 2 * 2 * 2 * 2 * 3 - 1
    (alone,) = report["unpaired"]
    assert (alone["experiment"], alone["tuning_mode"], alone["dataset"], alone["epsilon"], alone["seed"],
            alone["side"]) == ("exp_b", "tuned", "d2", 1.0, 2, "adassp")
    on = ["experiment", "tuning_mode", "dataset", "epsilon", "seed"]
    both = ok[ok["algorithm"] == "adassp"].merge(ok[ok["algorithm"] == "boosted_adassp"], on=on)
    compare = pd.DataFrame(report["compare"]).set_index(["experiment", "tuning_mode", "epsilon"])
    assert len(compare) == 2 * 2 * 2 and compare["pairs"].sum() == len(both) == report["pairs"]
    for (exp, mode, eps), g in both.groupby(["experiment", "tuning_mode", "epsilon"]):
        row = compare.loc[(exp, mode, eps)]
        assert (row["pairs"], row["datasets"]) == (len(g), 2)
        assert row["first_better"] == (g["test_mse_x"] < g["test_mse_y"]).sum()
        p = stats.wilcoxon(np.log(g["test_mse_x"]) - np.log(g["test_mse_y"])).pvalue
        assert row["wilcoxon_p"] == pytest.approx(p)

    # a readable figure: the first experiment's 2 panels in a row, not one panel per cell in a strip
    (png,) = outputs(notebook, "png")
    assert 500 < png.size[0] <= 1800 and 200 < png.size[1] <= 1400, png.size


def test_settings_tell_a_sub_grids_parameter_values_apart():
    df = pd.DataFrame({"experiment": "e", "algorithm": ["tukey", "tukey", "adassp"],
                       "params": ['{"n_models": 1000, "fit_intercept": false}',
                                  '{"n_models": 10000, "fit_intercept": false}', '{"rho": 0.05}']})
    assert list(explore.settings(df)) == ["tukey n_models=1000", "tukey n_models=10000", "adassp"]


def test_runs_that_a_cell_cannot_tell_apart_are_an_error():
    df = synthetic_rows()
    twin = df[df["algorithm"] == "adassp"].head(1).assign(run_id="twin")
    with pytest.raises(ValueError, match="share a cell and a seed"):
        explore.prepare(pd.concat([df, twin], ignore_index=True))
    runs = explore.prepare(df)
    with pytest.raises(pd.errors.MergeError):  # a run that could match two is never paired twice
        explore.pair(pd.concat([runs, runs.head(1)]), "adassp", "boosted_adassp")


def test_the_figure_wraps_its_panels(tmp_path):
    df = synthetic_rows()
    many = pd.concat([df.assign(dataset=df["dataset"] + f"_{i}", run_id=df["run_id"] + f"_{i}") for i in range(6)],
                     ignore_index=True)
    fig = explore.figure(explore.prepare(many), "exp_a")
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert len(visible) == 12 and max(ax.get_subplotspec().colspan.stop for ax in visible) == 5  # 3 rows of <= 5
    assert all(ax.get_yscale() == "log" for ax in visible)  # MSE spanning decades
    width, height = fig.get_size_inches()
    assert width <= 17 and height <= 9


def test_the_notebook_runs_on_one_private_setting(tmp_path, monkeypatch):
    """A user's sub-grid of one algorithm: nothing to pair, said in one line, no error."""
    rows = synthetic_rows()
    one = rows[(rows["algorithm"] == ALGORITHMS[0]) & (rows["experiment"] == EXPERIMENTS[0])]
    notebook = run_notebook(tmp_path, monkeypatch, write_results(one, tmp_path / "results"))
    assert any(f"one private setting here ({ALGORITHMS[0]})" in t for t in outputs(notebook))
