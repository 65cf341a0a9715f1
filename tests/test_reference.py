"""The README's measured tables are what the committed reference results give (dpbench.reference)."""

from pathlib import Path

import pytest

from dpbench import reference
from dpbench.cli.readme import main as readme_main

ROOT = Path(__file__).resolve().parents[1]


def test_readme_blocks_agree_with_the_reference_results(monkeypatch):
    monkeypatch.chdir(ROOT)  # the tables name results/reference as the command sees it, from the repository root
    text = (ROOT / "README.md").read_text()
    names = {m["name"] for m in reference._BLOCK.finditer(text)}
    assert {"verdicts", "runs", "paper001-f1"} <= names  # the README shows every generated table
    assert reference.render(text, reference.tables(reference.DIR)) == text, \
        "README's reference blocks are stale: run `python -m dpbench readme`"


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
