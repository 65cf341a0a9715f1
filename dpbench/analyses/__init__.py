"""Analyses: experiments of the papers that are not a sweep grid (a theory figure, a table, a timing).

An analysis is a function `fn(out: Path, smoke: bool) -> list[Path]` registered with
`@analysis(name, description)`: it writes its results under `out` (= `<results_dir>/<name>/`), a
`<name>.parquet` table and its figures (PNG + PDF: `dpbench.plots.common.save` with `FORMATS`), and returns the
paths it wrote; `smoke=True` is the small version CI runs.  `python -m dpbench analysis NAME [--smoke]` runs
one.  Every module of this package is imported with it, so a new analysis is one new module.  An analysis whose
fits are independent runs them on two processes (`parallel_map`).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass

JOBS = 2  # worker processes of an analysis's fits: the 2 cores `make reproduce-all` is timed on


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


def parallel_map(fn: Callable, jobs: Sequence[tuple], smoke: bool = False,
                 cost: Callable[[tuple], float] | None = None) -> list:
    """[fn(*job) for job in jobs] with the jobs on JOBS worker processes (a smoke run: in this one, no workers'
    start-up), the costliest first by `cost(job)` so the workers finish together; the results in the jobs' order.
    Each job seeds its own fits and runs on one BLAS thread (as a sweep's workers do), so where it runs, and how
    many cores the machine has, changes no number."""
    import joblib

    order = sorted(range(len(jobs)), key=lambda i: -cost(jobs[i])) if cost else list(range(len(jobs)))
    done = joblib.Parallel(n_jobs=1 if smoke else JOBS)(joblib.delayed(_one_blas_thread)(fn, *jobs[i]) for i in order)
    out = [None] * len(jobs)
    for i, result in zip(order, done, strict=True):
        out[i] = result
    return out


def _one_blas_thread(fn: Callable, *args):
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        return fn(*args)


def available() -> list[str]:
    return sorted(_ANALYSES)


def get(name: str) -> Analysis:
    try:
        return _ANALYSES[name]
    except KeyError:
        raise ValueError(f"unknown analysis {name!r}; available: {', '.join(available()) or 'none'}") from None


for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")
