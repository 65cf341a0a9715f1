"""Figures of sweep results: a registry of figure kinds, one module per kind.

A kind is a function `fn(df, title='', **options) -> matplotlib Figure`
registered with `@figure('<kind>')`; its keyword options are the config's
`plot.*` keys it takes (metric, x, y, ...).  `@figure('<kind>', summary=fn)`
also gives the report a text summary `fn(df, **options) -> str`.  `draw(plot_cfg, df, out_path,
title)` picks the kind named by plot.kind and saves the figure in plot.formats (default PNG only).  Every module
of this package is imported with it, so a new kind is one new module.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Callable, Mapping
from pathlib import Path

import pandas as pd

_KINDS: dict[str, Callable] = {}
_SUMMARIES: dict[str, Callable] = {}
DEFAULT_KIND = "privacy_curve"


def figure(kind: str, summary: Callable | None = None):
    """Function decorator: register a figure kind (and the text it adds to the report)."""

    def decorate(fn):
        if kind in _KINDS:
            raise ValueError(f"figure kind {kind!r} is already registered")
        _KINDS[kind] = fn
        if summary is not None:
            _SUMMARIES[kind] = summary
        return fn

    return decorate


def unregister(kind: str) -> None:
    """Remove a figure kind (tests that register a toy one clean up with this)."""
    _KINDS.pop(kind, None)
    _SUMMARIES.pop(kind, None)


def kinds() -> list[str]:
    return sorted(_KINDS)


def get_kind(kind: str) -> Callable:
    try:
        return _KINDS[kind]
    except KeyError:
        raise ValueError(f"unknown plot kind {kind!r}; known: {', '.join(kinds())}") from None


def options(plot: Mapping, fn: Callable) -> dict:
    """The plot's keys other than kind and formats (null ones left to the kind's defaults), checked against what fn
    takes."""
    kind = plot.get("kind") or DEFAULT_KIND
    options = {k: v for k, v in plot.items() if k not in ("kind", "formats") and v is not None}
    params = {n: p for n, p in inspect.signature(fn).parameters.items() if n not in ("df", "title")}
    unknown = sorted(set(options) - set(params))
    if unknown:
        takes = ", ".join(params) or "nothing"
        raise ValueError(f"plot.kind={kind} does not take {', '.join(unknown)}; it takes {takes}")
    needed = [n for n, p in params.items() if p.default is p.empty and n not in options]
    if needed:
        raise ValueError(f"plot.kind={kind} needs plot.{' and plot.'.join(needed)}")
    return options


def make(plot: Mapping, df: pd.DataFrame, title: str = ""):
    """The figure of plot.kind."""
    fn = get_kind(plot.get("kind") or DEFAULT_KIND)
    return fn(df, title=title, **options(plot, fn))


def summary(plot: Mapping, df: pd.DataFrame) -> str | None:
    """The text plot.kind adds to the report, if any."""
    kind = plot.get("kind") or DEFAULT_KIND
    if kind not in _SUMMARIES:
        return None
    return _SUMMARIES[kind](df, **options(plot, get_kind(kind)))


def formats(plot: Mapping) -> tuple[str, ...]:
    """plot.formats: the files of a figure, e.g. [png] (the default) or [png, pdf]; PNG always (the report shows
    it)."""
    from dpbench.plots.common import FORMATS

    asked = plot.get("formats") or ["png"]
    if isinstance(asked, str) or not set(asked) <= set(FORMATS) or "png" not in asked:
        raise ValueError(f"plot.formats must be a list of {', '.join(FORMATS)} with png in it, e.g. [png, pdf]; "
                         f"got {asked!r}")
    return tuple(asked)


def draw(plot: Mapping, df: pd.DataFrame, out_path: str | Path, title: str = "") -> Path:
    """Draw the figure the plot config names and save it to out_path (a .png) and beside it in plot.formats."""
    from dpbench.plots.common import save

    return save(make(plot, df, title), out_path, formats(plot))


for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")

__all__ = ["draw", "figure", "formats", "get_kind", "kinds", "make", "summary", "unregister"]
