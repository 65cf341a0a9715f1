"""Registering from outside the package: one call per thing a user adds, from their own module.

An experiment config names the user's modules in `imports: [my_module, ...]`; they are imported (with the
working directory on the path) before the grid is expanded, in the sweep and in every worker, and their calls
below register what the grid then names:

- `register_algorithm`: an algorithm's facts live where they are used: the estimator in the library's
  registry (`dpbench.algorithms.registry`), and by name in the harness its tuning space
  (`dpbench.tuning.spaces`), audit settings (`dpbench.audit.settings`) and display label
  (`dpbench.plots.styles`); this declares them all at once.
- `dataset` / `register_dataset`: a generator or a DatasetSpec (`dpbench.data.registry`).
- `figure`: a figure kind (`dpbench.plots`); `metric`: a metric (`dpbench.metrics`); `claim`: a claim check
  (`dpbench.claims`).
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Iterable, Mapping

# the other registries' own decorators, imported when first asked for (a worker loading `imports` stays light)
_ELSEWHERE = {"claim": ("dpbench.claims", "claim"), "dataset": ("dpbench.data.registry", "dataset"),
              "register_dataset": ("dpbench.data.registry", "register"), "metric": ("dpbench.metrics", "metric"),
              "figure": ("dpbench.plots", "figure")}


def __getattr__(name: str):
    if name not in _ELSEWHERE:
        raise AttributeError(f"module 'dpbench.extend' has no attribute {name!r}")
    module, attribute = _ELSEWHERE[name]
    return getattr(importlib.import_module(module), attribute)


def load_imports(modules: Iterable[str]) -> None:
    """Import the user's modules named by a config's `imports` (the working directory first on the path, as for
    `python -m`); ValueError in one line if one cannot be imported."""
    for name in modules:
        try:
            import_user_module(name)
        except ValueError as exc:
            raise ValueError(f"imports: {exc}") from None


def import_user_module(name: str):
    """Import a user's module `name` as `python -m` would find it (the working directory first on the path) and
    return it; ValueError in one line naming it if it cannot be imported (any error of the module itself)."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"module names are strings, got {name!r}")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        return importlib.import_module(name)
    except Exception as exc:  # noqa: BLE001 - any failure of the user's module, named in one line
        raise ValueError(f"cannot import {name!r}: {type(exc).__name__}: {exc}") from None


def register_algorithm(estimator_class: type, name: str, *, label: str | None = None,
                       tuning_space: Mapping | None = None, audit: Mapping | None = None,
                       description: str = "") -> type:
    """Register `estimator_class` (a scikit-learn estimator; its constructor defaults are the fixed settings) as
    algorithm `name`.  Task from the class (is_classifier), privacy from its `private` attribute, else whether
    it takes `epsilon`.  tuning_space: {parameter: range} for tuned and privately selected runs (format:
    dpbench.algorithms.spaces; none: fixed mode only); audit: the AuditSettings fields (params, rows, branch_n,
    power); label: its name in figures (default: the name `description` starts with).  Everything is checked
    before anything is registered.  Returns the class."""
    from dpbench.algorithms import registry
    from dpbench.algorithms.spaces import check_space
    from dpbench.audit.settings import SETTINGS, as_settings, register_audit
    from dpbench.plots.styles import LABELS, register_label
    from dpbench.tuning.spaces import SPACES, register_space

    taken = [where for where, names in [("algorithm", registry.available()), ("tuning space", SPACES),
                                        ("audit settings", SETTINGS), ("label", LABELS)] if name in names]
    if taken:
        raise ValueError(f"algorithm {name!r} is already registered ({', '.join(taken)})")
    params = set(estimator_class().get_params())
    space = check_space(tuning_space, f"tuning space of {name!r}")
    settings = as_settings(audit or {})
    for what, names in [("tuning space", space), ("audit params", settings.params)]:
        if set(names) - params:
            raise ValueError(f"{what} of {name!r} names parameter(s) {sorted(set(names) - params)} that "
                             f"{estimator_class.__name__} does not take")
    if label is not None and not (isinstance(label, str) and label):
        raise ValueError(f"label of {name!r} must be a non-empty string, got {label!r}")
    registry.algorithm(name, description=description)(estimator_class)
    if space:
        register_space(name, space)
    if audit:
        register_audit(name, settings)
    if label:
        register_label(name, label)
    return estimator_class


__all__ = ["import_user_module", "load_imports", "register_algorithm", *_ELSEWHERE]
