"""Provenance: rows say which commit made them and whether the package's code differed from it."""

import subprocess

from dpbench.runner.provenance import GitState, git_state


def _git(repo, *args):
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def test_git_state_names_uncommitted_code(tmp_path):
    repo, pkg = tmp_path / "repo", tmp_path / "repo" / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "algo.py").write_text("x = 1\n")
    (repo / "outside.txt").write_text("not the package\n")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    clean = git_state(pkg)
    assert len(clean.commit) == 40 and clean.dirty is False and clean.diff_hash == ""
    (repo / "outside.txt").write_text("changed, but outside the package\n")
    assert git_state(pkg) == clean
    (pkg / "algo.py").write_text("x = 2\n")
    edited = git_state(pkg)
    assert edited.commit == clean.commit and edited.dirty and len(edited.diff_hash) == 12
    (pkg / "new.py").write_text("y = 1\n")  # an uncommitted new module changes the hash too
    added = git_state(pkg)
    assert added.dirty and added.diff_hash != edited.diff_hash
    (pkg / "algo.py").write_text("x = 1\n")
    (pkg / "new.py").unlink()
    assert git_state(pkg) == clean


def test_outside_a_checkout_the_state_is_unknown(tmp_path):
    assert git_state(tmp_path) == GitState()  # an installed wheel: commit 'unknown', dirty None
