"""The notebook runs top to bottom on the quickstart's results (nbclient, a real kernel)."""

from __future__ import annotations

from pathlib import Path

import nbclient
import nbformat

from dpbench.__main__ import main

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "explore_results.ipynb"


def test_the_notebook_runs_on_the_quickstarts_results(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["sweep", "experiment=quickstart", "runner.progress=false", "runner.n_jobs=1"]) == 0
    monkeypatch.setenv("DPBENCH_RESULTS", str(tmp_path / "results" / "quickstart"))
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    nbclient.NotebookClient(notebook, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}}).execute()  # raises on a cell's error
    text = "\n".join(str(o.get("text", "")) + str(o.get("data", {}).get("text/plain", ""))
                     for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs)
    assert "55 runs from" in text and "boosted_adassp" in text and "wilcoxon_p" in text, text
