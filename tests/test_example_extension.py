"""The extension example of docs/extending.md, run as a user would: `examples/my_extension/` (a module registering a toy
algorithm, a toy dataset and a figure kind, and an experiment naming it in `imports`) copied to a directory of
its own and swept against a non-editable install of dpbench, built from the package's files (no network)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

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


def test_the_docs_show_the_example_as_it_is():
    page = (ROOT / "docs" / "extending.md").read_text()
    for path in (EXAMPLE / "my_extension.py", EXAMPLE / "conf" / "experiment" / "my_experiment.yaml"):
        assert path.read_text() in page, f"docs/extending.md must show {path.relative_to(ROOT)} verbatim"


@pytest.fixture(scope="module")
def user(tmp_path_factory) -> tuple[Path, dict]:
    """The example copied to a directory of its own, and the environment of a non-editable install."""
    tmp_path = tmp_path_factory.mktemp("extension")
    site = _install(tmp_path)
    user = tmp_path / "user"
    shutil.copytree(EXAMPLE, user)
    env = {**os.environ, "PYTHONPATH": str(site), "MPLBACKEND": "Agg"}
    where = subprocess.run([sys.executable, "-c", "import dpbench; print(dpbench.__file__)"], cwd=user, env=env,
                           capture_output=True, text=True, check=True).stdout.strip()
    assert where.startswith(str(site)), where  # the installed copy, not the checkout
    return user, env


def _dpbench(user, *args):
    return subprocess.run([sys.executable, "-m", "dpbench", *args], cwd=user[0], env=user[1], capture_output=True,
                          text=True)


def test_the_example_extension_runs_from_its_own_directory_against_an_installed_dpbench(user):
    done = _dpbench(user, "sweep", "experiment=my_experiment", "runner.progress=false")
    assert done.returncode == 0, done.stderr
    rows = results.load(user[0] / "results" / "my_experiment")
    assert len(rows) == 12 and (rows["status"] == "ok").all(), rows[["algorithm", "status", "error"]]
    assert set(rows["algorithm"]) == {"my_sum", "adassp"} and set(rows["dataset"]) == {"my_line[n=2000]"}
    mine = rows[rows["algorithm"] == "my_sum"]
    np.testing.assert_allclose(mine["spent_epsilon"], mine["epsilon"], rtol=1e-9)  # its one release, in the ledger
    assert (user[0] / "results" / "my_experiment" / "my_experiment.png").stat().st_size > 0


def test_a_registered_algorithm_and_dataset_work_everywhere_a_built_in_one_does(user):
    """Extension parity: the shorthands, `algorithms NAME` and `audit --algorithms NAME` find what the ./conf
    experiments' `imports:` register, from the user's directory; `--imports` names modules explicitly."""
    listed = _dpbench(user, "algorithms", "my_sum")
    assert listed.returncode == 0 and listed.stdout.startswith("my_sum: MySum (regression"), listed.stderr
    sweep = _dpbench(user, "sweep", "experiment=my_experiment", "algorithm=my_sum", "dataset=my_line", "--dry-run")
    assert sweep.returncode == 0 and "my_experiment: 6 runs in the grid" in sweep.stdout, sweep.stderr
    audit = _dpbench(user, "audit", "--algorithms", "my_sum", "--dry-run")
    assert audit.returncode == 0 and "11 audits (11 algorithm x design pairs" in audit.stdout, audit.stderr
    wrong = _dpbench(user, "algorithms", "--imports", "not_a_module")
    assert wrong.returncode == 2 and wrong.stderr.count("\n") == 1 and "not_a_module" in wrong.stderr
