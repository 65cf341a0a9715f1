"""Registering from outside the package: one call per thing a user adds, from their own module.

An algorithm's facts live where they are used: the estimator in the library's registry
(`dpbench.algorithms.registry`), and by name in the harness its tuning space (`dpbench.tuning.spaces`),
audit settings (`dpbench.audit.settings`) and display label (`dpbench.plots.styles`).
`register_algorithm` declares them all at once.
"""

from __future__ import annotations

from collections.abc import Mapping


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


__all__ = ["register_algorithm"]
