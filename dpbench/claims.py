"""The papers' claims, each next to the check that measures it on dpbench's results.

A claim is one sentence of a paper about one figure or table, registered with `@claim(figure, paper, text)`
on a function `check(load) -> Verdict`.  `load(name)` returns the results of the sweep or analysis `name`
(a DataFrame: `results.load(results_dir / name)`, or an analysis' `<name>.parquet`) and raises
FileNotFoundError when it has not been run.  The report (`python -m dpbench report`) prints every claim of
the figures it covers with its verdict: `holds` True only when the numbers support the claim, False when
they contradict it, None when the results cannot decide (too few runs, a missing dataset).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Verdict:
    holds: bool | None
    measured: str  # one sentence with the numbers the verdict rests on


@dataclass(frozen=True)
class Claim:
    figure: str  # the results name the claim is about, e.g. 'fig1' (results/fig1/)
    paper: str  # '000' ... '004' (../shared/papers)
    text: str  # the paper's claim, in one sentence
    check: Callable  # check(load) -> Verdict


_CLAIMS: list[Claim] = []


def claim(figure: str, paper: str, text: str):
    """Function decorator: register `check(load) -> Verdict` as the measurement of a paper's claim."""

    def decorate(fn):
        _CLAIMS.append(Claim(figure, paper, text, fn))
        return fn

    return decorate


def claims(figure: str | None = None) -> list[Claim]:
    """Registered claims (of one figure), in registration order."""
    _import_all()
    return [c for c in _CLAIMS if figure is None or c.figure == figure]


def _import_all() -> None:
    """Claims live next to what they check (analyses, tuning experiments); import those packages."""
    import dpbench.analyses  # noqa: F401
