"""Analyses: experiments of the papers that are not a sweep grid (a theory figure, a table, a timing).

An analysis is a function `fn(out: Path, smoke: bool) -> list[Path]` registered with
`@analysis(name, description)`: it writes its results under `out` (= `<results_dir>/<name>/`), a
`<name>.parquet` table and its figures (PNG + PDF: `dpbench.plots.common.save` with `FORMATS`), and returns the
paths it wrote; `smoke=True` is the small version CI runs.  `python -m dpbench analysis NAME [--smoke]` runs
one.  Every module of this package is imported with it, so a new analysis is one new module.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Analysis:
    name: str
    run: Callable  # run(out: Path, smoke: bool) -> list[Path]
    description: str


_ANALYSES: dict[str, Analysis] = {}


def analysis(name: str, description: str):
    """Function decorator: register an analysis."""

    def decorate(fn):
        if name in _ANALYSES:
            raise ValueError(f"analysis {name!r} is already registered")
        _ANALYSES[name] = Analysis(name, fn, description)
        return fn

    return decorate


def available() -> list[str]:
    return sorted(_ANALYSES)


def get(name: str) -> Analysis:
    try:
        return _ANALYSES[name]
    except KeyError:
        raise ValueError(f"unknown analysis {name!r}; available: {', '.join(available()) or 'none'}") from None


for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")
