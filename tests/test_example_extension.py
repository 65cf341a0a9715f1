"""The README's extension example, run as a user would: `examples/my_extension/` (a module registering a toy
algorithm, a toy dataset and a figure kind, and an experiment naming it in `imports`) copied to a directory of
its own and swept against a non-editable install of dpbench, built from the package's files (no network)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

from dpbench import results

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "my_extension"
SOURCES = ("dpbench", "conf", "pyproject.toml", "README.md", "LICENSE")


def _install(tmp_path: Path) -> Path:
    """`pip install .` (not editable) of a copy of the sources into a directory of its own."""
    src, target = tmp_path / "src", tmp_path / "site"
    src.mkdir()
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(ROOT / name, src / name)
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--no-index",
                    "--target", str(target), str(src)], check=True, capture_output=True, text=True)
    return target


def test_the_readme_shows_the_example_as_it_is():
    readme = (ROOT / "README.md").read_text()
    for path in (EXAMPLE / "my_extension.py", EXAMPLE / "conf" / "experiment" / "my_experiment.yaml"):
        assert path.read_text() in readme, f"README's Extending section must show {path.relative_to(ROOT)} verbatim"


def test_the_example_extension_runs_from_its_own_directory_against_an_installed_dpbench(tmp_path):
    site = _install(tmp_path)
    user = tmp_path / "user"
    shutil.copytree(EXAMPLE, user)
    env = {**os.environ, "PYTHONPATH": str(site), "MPLBACKEND": "Agg"}
    where = subprocess.run([sys.executable, "-c", "import dpbench; print(dpbench.__file__)"], cwd=user, env=env,
                           capture_output=True, text=True, check=True).stdout.strip()
    assert where.startswith(str(site)), where  # the installed copy, not the checkout
    done = subprocess.run([sys.executable, "-m", "dpbench", "sweep", "experiment=my_experiment",
                           "runner.progress=false"], cwd=user, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    rows = results.load(user / "results" / "my_experiment")
    assert len(rows) == 12 and (rows["status"] == "ok").all(), rows[["algorithm", "status", "error"]]
    assert set(rows["algorithm"]) == {"my_sum", "adassp"} and set(rows["dataset"]) == {"my_line[n=2000]"}
    mine = rows[rows["algorithm"] == "my_sum"]
    np.testing.assert_allclose(mine["spent_epsilon"], mine["epsilon"], rtol=1e-9)  # its one release, in the ledger
    assert (user / "results" / "my_experiment" / "my_experiment.png").stat().st_size > 0
