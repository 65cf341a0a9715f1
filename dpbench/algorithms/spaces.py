"""Hyperparameter ranges as plain dicts, checked and drawn from without looking at the data.

A range is {'type': 'float' | 'int', 'low', 'high', 'log'} or {'type': 'categorical', 'choices'}; a space
maps parameter names to ranges.  Private selection draws its candidates from a space it is given (`draw`);
the harness's tuning spaces (`dpbench.tuning.spaces`) and its Optuna studies use the same format, so it is
defined here, in the library, and the harness imports it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

import numpy as np

RANGE_TYPES = ("float", "int", "categorical")


def check_space(space: Mapping | None, where: str = "space") -> dict:
    """`space` as a dict {name: range}, each range checked (ValueError naming the bad one); None is {}."""
    out = dict(space or {})
    for name, r in out.items():
        kind = r.get("type") if isinstance(r, Mapping) else None
        if kind not in RANGE_TYPES:
            raise ValueError(f"{where}[{name!r}] must be a dict with 'type' one of {RANGE_TYPES}, got {r!r}")
        if kind == "categorical":
            if not list(r.get("choices") or []):
                raise ValueError(f"{where}[{name!r}]: a categorical range needs a non-empty 'choices' list")
            continue
        low, high = r.get("low"), r.get("high")
        if not all(isinstance(v, (int, float)) and math.isfinite(v) for v in (low, high)) or low > high:
            raise ValueError(f"{where}[{name!r}]: 'low' and 'high' must be finite numbers, low <= high; got {r!r}")
        if r.get("log") and low <= 0:
            raise ValueError(f"{where}[{name!r}]: a log range needs low > 0, got {low!r}")
    return out


def draw(r: Mapping, rng: np.random.Generator):
    """One value from the range `r`, drawn from `rng` (never from the data): log-uniform when r['log']."""
    if r["type"] == "categorical":
        return r["choices"][int(rng.integers(len(r["choices"])))]
    low, high = r["low"], r["high"]
    u = rng.uniform(math.log(low), math.log(high)) if r.get("log") else rng.uniform(low, high)
    value = math.exp(u) if r.get("log") else u
    return int(min(high, max(low, round(value)))) if r["type"] == "int" else float(value)


def without(space: Mapping, names: Iterable[str]) -> dict:
    """The space minus the ranges of `names` (those a run pins to a set value)."""
    pinned = set(names)
    return {k: r for k, r in space.items() if k not in pinned}
