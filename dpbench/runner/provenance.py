"""Provenance: what every row says about where it came from (commit, config hash, library versions), and the
columns that identify a run."""

from __future__ import annotations

import hashlib
import platform
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy
import sklearn

import dpbench
from dpbench import algorithms
from dpbench.data import dataset_label
from dpbench.runner.grid import RunSpec, canonical_json


@dataclass(frozen=True)
class GitState:
    """The commit of the package's checkout and whether its code differs from it (then rows cannot be
    reproduced from the commit alone; `diff_hash` names the uncommitted code)."""

    commit: str = "unknown"
    dirty: bool | None = None  # None: not a git checkout (an installed wheel)
    diff_hash: str = ""


@dataclass(frozen=True)
class Provenance:
    experiment: str
    config_hash: str
    git: GitState
    data_dir: str | None

    def columns(self) -> dict:
        return {
            "experiment": self.experiment,
            "config_hash": self.config_hash,
            "git_commit": self.git.commit,
            "git_dirty": self.git.dirty,
            "git_diff_hash": self.git.diff_hash,
            "dpbench_version": dpbench.__version__,
            "numpy_version": np.__version__,
            "scipy_version": scipy.__version__,
            "sklearn_version": sklearn.__version__,
            "python_version": platform.python_version(),
        }


def git_state(package: Path | None = None) -> GitState:
    """HEAD of the checkout dpbench runs from, and a hash of the package's uncommitted changes (the diff against
    HEAD and the untracked files under dpbench/, or under `package`), so rows made by uncommitted code say so."""
    package = Path(dpbench.__file__).resolve().parent if package is None else Path(package)

    def git(*args) -> subprocess.CompletedProcess:
        return subprocess.run(["git", *args], cwd=package, capture_output=True, timeout=10)

    try:
        head = git("rev-parse", "HEAD")
        if head.returncode:
            return GitState()
        diff = git("diff", "HEAD", "--", ".").stdout
        untracked = git("ls-files", "--others", "--exclude-standard", "--", ".").stdout.split()
    except (OSError, subprocess.SubprocessError):
        return GitState()
    digest = hashlib.sha256(diff)
    for name in sorted(untracked):
        digest.update(name + b"\0" + (package / name.decode()).read_bytes())
    dirty = bool(diff or untracked)
    return GitState(head.stdout.decode().strip(), dirty, digest.hexdigest()[:12] if dirty else "")


def base_row(run: RunSpec, prov: Provenance) -> dict:
    """The columns of a run's row known before it is fitted: its identity, its tuning and the provenance."""
    return {
        "run_id": run.run_id,
        "algorithm": run.algorithm,
        "params": canonical_json(dict(run.params)),
        "private": algorithms.get_spec(run.algorithm).private,
        "dataset": dataset_label(run.dataset),
        "epsilon": run.epsilon,
        "delta": run.delta,
        "tuning_mode": run.tuning_mode,
        **_tuning_columns(run),
        "seed": run.seed,
        "split": run.split,
        "data_seed": run.data_seed,
        "random_state": run.random_state,
        **prov.columns(),
    }


def _tuning_columns(run: RunSpec) -> dict:
    """Tuned runs: the study's choice (privately selected runs: see fitting._row)."""
    if not run.tuned:
        return {}
    from dpbench.tuning.study import study_name

    return {"tuned_params": canonical_json(run.tuned["params"]), "validation_score": run.tuned["validation_score"],
            "tuning_trials": run.tuned["trials"], "study": study_name(run)}
