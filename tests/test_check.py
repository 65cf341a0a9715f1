"""`python -m dpbench check MODULE[:NAME]` and `dpbench.checks.assert_checks`: the example extension of
docs/extending.md passes every generic check, broken copies of it are caught (exit code 1, the failing row named),
and bad input is one line with exit code 2.  The example and its broken copies are checked as a user would, from a
directory of their own (`python -m dpbench` against this checkout); the pytest helper on toys registered here."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dpbench import checks
from dpbench.__main__ import main
from dpbench.algorithms import registry
from dpbench.audit import SETTINGS
from dpbench.extend import register_algorithm
from dpbench.plots.styles import LABELS
from dpbench.tuning.spaces import SPACES
from tests.test_extend import NoisySum as ToySum

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "my_extension"
ROW = re.compile(r"^(?P<check>\S+(?: \S+)*) {2,}(?P<algorithm>\S+) {2,}(?P<result>ok|FAIL|skipped) {2,}(?P<detail>.*)$")
NOT_AUDIT = ("sklearn", "ledger", "degenerate inputs", "sensitivity")

# deliberately broken copies of the example's MySum, each with one bug a check must name
BROKEN = '''
import numpy as np

from dpbench.extend import register_algorithm
from dpbench.privacy import gaussian_mechanism
from my_extension import MySumRegressor


class Unrecorded(MySumRegressor):
    """Adds noise of its own that the ledger does not hold."""

    def _fit_theta(self, X, y, mu, rng, ledger):
        return super()._fit_theta(X, y, mu, rng, ledger) + rng.normal(0.0, 0.01, size=X.shape[1])


class RaisesOnEmpty(MySumRegressor):
    """Raises on n = 0: whether a fit raises is a release."""

    def _fit_theta(self, X, y, mu, rng, ledger):
        if len(X) == 0:
            raise ValueError("no rows")
        return super()._fit_theta(X, y, mu, rng, ledger)


class Unclipped(MySumRegressor):
    """Clips the labels at 10 but is charged for 1: its release moves beyond its sensitivity."""

    def _fit_theta(self, X, y, mu, rng, ledger):
        return gaussian_mechanism(X.T @ np.clip(y, -10, 10), self.x_bound, mu, rng, ledger, "X^T clip(y)") / 100


for cls, name in [(Unrecorded, "unrecorded"), (RaisesOnEmpty, "raises_on_empty"), (Unclipped, "unclipped")]:
    register_algorithm(cls, name)
'''


def check(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    """`python -m dpbench check ARGS` from a user's directory, against this checkout's dpbench."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
    return subprocess.run([sys.executable, "-m", "dpbench", "check", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=900)


def table(out: str) -> dict[tuple[str, str], tuple[str, str]]:
    """(check, algorithm) -> (result, detail) of the printed table."""
    lines = out.split("\n\n")[0].splitlines()
    assert lines[0].split() == ["check", "algorithm", "result", "detail"], out
    rows = [ROW.match(line) for line in lines[1:]]
    assert all(rows), out
    return {(r["check"], r["algorithm"]): (r["result"], r["detail"]) for r in rows}


@pytest.fixture
def user(tmp_path) -> Path:
    """A user's directory holding a copy of the example extension."""
    shutil.copytree(EXAMPLE, tmp_path / "user")
    return tmp_path / "user"


def test_the_example_passes_every_check_as_the_readme_shows(user):
    p = check(user, "my_extension")
    assert p.returncode == 0, p.stdout + p.stderr
    rows = table(p.stdout)
    designs = [c for c, _ in rows if c.startswith("audit ") and c != "audit weakened copy"]
    assert [c for c, _ in rows] == [*NOT_AUDIT, *designs, "audit weakened copy"]
    assert {a for _, a in rows} == {"my_sum"} and {r for r, _ in rows.values()} == {"ok"}, p.stdout
    assert {"audit clip_pull", "audit empty", "audit overflow", "audit tiny_n", "audit power"} <= set(designs)
    for design in designs:  # each design states its power: what it gives a copy with noise x 0.1, of at most what
        assert re.search(r"power: noise x 0.1 (not )?caught \(eps_lb [\d.]+, mu_lb [\d.]+; the fits certify eps <= "
                         r"[\d.]+\)$", rows[design, "my_sum"][1]), rows[design, "my_sum"]
    assert f"\n\n{len(rows)} checks of my_sum: {len(rows)} ok\n" in p.stdout
    # the table of docs/extending.md is a run of this command: the same rows and results (its numbers are that run's)
    page = (ROOT / "docs" / "extending.md").read_text()
    shown = re.search(r"python -m dpbench check my_extension\n```\n\n```\n(.*?)```", page, re.S)
    assert shown and {k: r for k, (r, _) in table(shown.group(1)).items()} == {k: r for k, (r, _) in rows.items()}


def test_broken_copies_are_caught_and_the_failing_rows_named(user):
    (user / "broken_extension.py").write_text(BROKEN)
    p = check(user, "broken_extension", "--runs", "20")  # few audit fits: the rows asserted here are not statistical
    assert p.returncode == 1, p.stdout + p.stderr
    rows = table(p.stdout)
    assert {a for _, a in rows} == {"my_sum", "unrecorded", "raises_on_empty", "unclipped"}  # my_sum: imported
    failing = {(c, a) for (c, a), (r, _) in rows.items() if r == "FAIL" and c in NOT_AUDIT}
    assert failing == {("ledger", "unrecorded"), ("sensitivity", "unclipped"), ("degenerate inputs", "raises_on_empty"),
                       ("sensitivity", "raises_on_empty"), ("sklearn", "raises_on_empty")}, p.stdout
    assert "noise drawn {('normal', 4.22467888933): 1, ('normal', 0.01): 1} != the ledger's" in \
        rows["ledger", "unrecorded"][1]
    assert "X^T clip(y) (gaussian) moved beyond its charge" in rows["sensitivity", "unclipped"][1]
    assert "via fit on empty: the fit raised ValueError: no rows" in rows["degenerate inputs", "raises_on_empty"][1]
    assert "check_estimators_empty_data_messages passes" in rows["sklearn", "raises_on_empty"][1]
    for design in ("empty", "zero_record"):  # the audit sees the raise too: fits fail on D only
        assert rows[f"audit {design}", "raises_on_empty"] == ("FAIL", "20 of 40 fits raised or gave no finite output: "
                                                                      "ValueError: no rows")
    assert re.search(r"^\d+ checks of my_sum, raises_on_empty, unclipped, unrecorded: \d+ ok, \d+ FAIL; failed: .*"
                     r"degenerate inputs, ledger, sensitivity, sklearn$", p.stdout, re.M)


def test_an_unimportable_module_is_one_line_and_exit_2(tmp_path):
    (tmp_path / "half_written.py").write_text("import numpy as np\nraise RuntimeError('half-written module')\n")
    p = check(tmp_path, "half_written")
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr == ("dpbench check: error: cannot import 'half_written': RuntimeError: half-written module\n")


@pytest.mark.parametrize("args, message", [
    (["no_such_module_xyz"], "cannot import 'no_such_module_xyz': ModuleNotFoundError: No module named"),
    (["json"], "module 'json' registers no algorithm (see dpbench.extend.register_algorithm)"),
    (["json:nope"], "unknown algorithm 'nope'; available: "),
    ([":adassp"], "expected MODULE[:NAME], got ':adassp'"),
    (["json", "--runs", "5"], "--runs must be >= 10"),
    ([], "the following arguments are required: MODULE[:NAME]"),
])
def test_bad_input_is_one_line_and_exit_2(args, message, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))  # the working directory goes first on it
    assert main(["check", *args]) == 2
    out, err = capsys.readouterr()
    assert message in err and err.count("\n") == 1 and not out, err


def test_help_and_a_module_imported_before():
    """--help runs nothing; a module imported before (dpbench's own) names the algorithms whose class it defines."""
    assert main(["check", "--help"]) == 0
    names = checks.algorithms_of("dpbench.algorithms.ssp")
    assert "adassp" in names and "boosted_adassp" not in names
    assert checks.algorithms_of("dpbench.algorithms.boosting:adassp") == ["adassp"]


# ----------------------------------------------------------------------------- assert_checks, for a user's tests


class ToyUnrecorded(ToySum):  # ToySum: the example's MySum (tests/test_extend.py)
    def _fit_theta(self, X, y, mu, rng, ledger):
        return super()._fit_theta(X, y, mu, rng, ledger) + rng.normal(0.0, 0.01, size=X.shape[1])


@pytest.fixture
def toys():
    names = {"toy_check_sum": ToySum, "toy_check_unrecorded": ToyUnrecorded}
    for name, cls in names.items():
        register_algorithm(cls, name)
    yield list(names)
    for name in names:
        for registered in (registry._REGISTRY, SPACES, SETTINGS, LABELS):
            registered.pop(name, None)


def test_assert_checks_passes_the_good_toy_and_names_the_broken_ones_failing_row(toys):
    good, broken = toys
    passed = checks.assert_checks(good, runs=100, n_jobs=1)
    assert set(passed["check"]) >= {*NOT_AUDIT, "audit clip_pull", "audit weakened copy"}
    assert set(passed["result"]) == {"ok"}
    with pytest.raises(AssertionError, match=r"\d+ generic check\(s\) failed:\ncheck +algorithm +result +detail\n"
                                             r"ledger +toy_check_unrecorded +FAIL +fit, seed 0: noise drawn"):
        checks.assert_checks([broken], runs=20, n_jobs=1)
