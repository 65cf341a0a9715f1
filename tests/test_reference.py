"""The measured tables of the README and docs/ are what the committed reference results give (dpbench.reference)."""

from pathlib import Path

import pytest

from dpbench import reference
from dpbench.cli.readme import main as readme_main

ROOT = Path(__file__).resolve().parents[1]


def test_the_documents_blocks_agree_with_the_reference_results(monkeypatch):
    monkeypatch.chdir(ROOT)  # the tables name results/reference as the command sees it, from the repository root
    paths = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    assert [p.relative_to(ROOT) for p in reference.documents(ROOT)] == \
        [p.relative_to(ROOT) for p in paths if reference._BLOCK.search(p.read_text())]  # what `readme` rewrites
    tables = reference.tables(reference.DIR)
    names = set()
    for path in paths:
        text = path.read_text()
        names |= {m["name"] for m in reference._BLOCK.finditer(text)}
        assert reference.render(text, tables) == text, \
            f"{path.relative_to(ROOT)}: reference blocks are stale: run `python -m dpbench readme`"
    assert names == set(tables)  # the documents show every generated table


def test_render_replaces_only_the_blocks_body():
    text = "a\n<!-- reference:x -->\nold 1\nold 2\n<!-- /reference:x -->\nb <!-- reference:x --> c\n"
    assert reference.render(text, {"x": "| new |\n"}) == \
        "a\n<!-- reference:x -->\n| new |\n<!-- /reference:x -->\nb <!-- reference:x --> c\n"
    with pytest.raises(ValueError, match="reference:x is not one of y"):
        reference.render(text, {"y": "z"})


def test_check_fails_on_a_hand_edited_number(tmp_path, monkeypatch):
    monkeypatch.setattr(reference, "tables", lambda results_dir: {"x": "| 0.52 |"})
    readme = tmp_path / "README.md"
    readme.write_text("<!-- reference:x -->\n| 0.53 |\n<!-- /reference:x -->\n")
    assert readme_main(["--file", str(readme), "--check"]) == 1
    assert readme_main(["--file", str(readme)]) == 0
    assert "| 0.52 |" in readme.read_text()
    assert readme_main(["--file", str(readme), "--check"]) == 0
    # by default: the README and every page of docs/ that holds a block, from the working directory
    page = tmp_path / "docs" / "page.md"
    page.parent.mkdir()
    page.write_text("text\n<!-- reference:x -->\n| 0.51 |\n<!-- /reference:x -->\n")
    (tmp_path / "docs" / "other.md").write_text("no block\n")
    monkeypatch.chdir(tmp_path)
    assert reference.documents() == [Path("README.md"), Path("docs/page.md")]
    assert readme_main(["--check"]) == 1
    assert readme_main([]) == 0
    assert page.read_text() == "text\n<!-- reference:x -->\n| 0.52 |\n<!-- /reference:x -->\n"
    assert readme_main(["--check"]) == 0


def test_publish_copies_finished_results_small(tmp_path):
    from dpbench import results

    src = tmp_path / "src"
    row = {"status": "ok", "attempt": 1, "params": "{}"}
    for i in range(3):
        results.write_part([{**row, "run_id": f"r{i}", "test_mse": float(i)}], src / "fig", str(i))
    results.write_part([{**row, "run_id": "r0", "attempt": 2, "test_mse": 9.0}], src / "fig", "again")
    for name in ("fig/fig.png", "fig/fig.pdf", "fig/sweeps.jsonl", "fig/config.json", "theory/theory.parquet",
                 "running/sweep.lock", "_studies/abc.log"):
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        (src / name).write_text("x")
    assert reference.publish(src, tmp_path / "ref") == ["fig", "theory"]  # not the running sweep, not _studies
    out = tmp_path / "ref"
    assert sorted(p.name for p in (out / "fig").iterdir()) == ["config.json", "fig.png", "parts", "sweeps.jsonl"]
    assert [p.name for p in (out / "fig" / "parts").iterdir()] == ["part-reference.parquet"]
    every = results.load(out / "fig", all_attempts=True)
    assert len(every) == 4 and results.load(out / "fig").set_index("run_id")["test_mse"].to_dict() == \
        {"r0": 9.0, "r1": 1.0, "r2": 2.0}  # every attempt kept; the newest one counts
    assert (out / "theory" / "theory.parquet").exists()


def test_publish_leaves_runs_of_an_older_identity_behind(tmp_path):
    """A shipped experiment's sweep directory keeps only the runs of its current grid: rows made before a change
    of the code's parameters (another run id) stay in the source, not in the reference."""
    from dpbench import results
    from dpbench.reproduction import experiment_run_ids

    current = sorted(experiment_run_ids()["fig5"])[:2]
    row = {"status": "ok", "attempt": 1, "params": "{}", "test_mse": 1.0}
    results.write_part([{**row, "run_id": r} for r in [*current, "old-identity"]], tmp_path / "src" / "fig5", "a")
    assert reference.publish(tmp_path / "src", tmp_path / "ref") == ["fig5"]
    assert sorted(results.load(tmp_path / "ref" / "fig5")["run_id"]) == current
