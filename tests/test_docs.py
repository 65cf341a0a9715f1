"""The documentation site builds: `mkdocs build --strict` (mkdocs.yml) on docs/, where a broken link, a missing
reference figure or a missing docstring is an error (docs/hooks/dpbench_docs.py).

It needs the `docs` extra (`pip install '.[docs]'`; `make install` and so CI install it). Without mkdocs this test
FAILS, saying to install the extra: it does not skip, so CI cannot pass with the site unchecked.  mkdocs runs in a
subprocess of this Python, or of DPBENCH_DOCS_PYTHON when set (a Python of another environment that has the extra:
mkdocstrings reads the sources statically, so that environment needs no dpbench dependency)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.docs  # needs the docs extra: fails without it; `-m 'not docs'` leaves these tests out
ROOT = Path(__file__).resolve().parents[1]
PYTHON = os.environ.get("DPBENCH_DOCS_PYTHON", sys.executable)


def mkdocs_build(config: Path, site: Path) -> subprocess.CompletedProcess:
    probe = subprocess.run([PYTHON, "-c", "import mkdocs, material, mkdocstrings_handlers.python"],
                           capture_output=True, text=True)
    if probe.returncode:
        pytest.fail(f"mkdocs, mkdocs-material or mkdocstrings-python is not installed for {PYTHON}: install the docs "
                    f"extra, pip install '.[docs]' (make install does), or set DPBENCH_DOCS_PYTHON to a Python that "
                    f"has it ({probe.stderr.strip().splitlines()[-1]})")
    return subprocess.run([PYTHON, "-m", "mkdocs", "build", "--strict", "--config-file", str(config), "--site-dir",
                           str(site)], cwd=config.parent, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})


def test_the_site_builds_strict_with_the_figures_and_the_api(tmp_path):
    p = mkdocs_build(ROOT / "mkdocs.yml", tmp_path / "site")
    assert p.returncode == 0, p.stderr[-5000:]
    site = tmp_path / "site"
    figures = sorted(f.relative_to(ROOT).as_posix() for f in (ROOT / "results" / "reference").rglob("*.png"))
    assert figures and all((site / f).is_file() for f in figures)  # every committed reference figure is served
    page = (site / "reproducing" / "index.html").read_text()
    assert 'src="../results/reference/fig1/fig1.png"' in page and "Paper 000, Fig. 1: " in page
    api = (site / "api" / "index.html").read_text()
    for name in ("dpbench.algorithms.boosting.BoostedAdaSSPRegressor", "dpbench.privacy.gaussian_mechanism",
                 "dpbench.extend.register_algorithm", "dpbench.checks.assert_checks", "dpbench.results.load"):
        assert f'id="{name}"' in api, name


def test_a_broken_link_a_missing_figure_and_a_missing_docstring_fail_the_build(tmp_path):
    """The same configuration and hook on a toy project: each fault is named and strict mode fails."""
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    config["nav"] = [{"Home": "index.md"}]
    (tmp_path / "docs" / "hooks").mkdir(parents=True)
    (tmp_path / "docs" / "hooks" / "dpbench_docs.py").write_text((ROOT / config["hooks"][0]).read_text())
    (tmp_path / "mkdocs.yml").write_text(yaml.safe_dump(config))
    (tmp_path / "toy").mkdir()
    (tmp_path / "toy" / "__init__.py").write_text('"""A toy package."""\n\n\ndef documented():\n    """Yes."""\n\n\n'
                                                  'def undocumented():\n    pass\n')
    (tmp_path / "docs" / "index.md").write_text("# Toy\n\n[a page](nope.md), [an anchor](#nope)\n\n"
                                                "![a figure](/results/reference/nope/nope.png)\n\n::: toy\n")
    p = mkdocs_build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert p.returncode == 1, p.stderr
    for fault in ("contains a link 'nope.md', but the target is not found",
                  "contains a link '/results/reference/nope/nope.png', but the target is not found",
                  "contains a link '#nope', but there is no such anchor",
                  "`::: toy` shows toy.undocumented, which has no docstring"):
        assert fault in p.stderr, (fault, p.stderr)
    assert "toy.documented," not in p.stderr
