"""One place that knows every algorithm: its estimator, task, privacy and fixed settings (library facts).

An algorithm is declared once, next to its class, with the `@algorithm(...)`
decorator.  Its fixed ("paper") settings are the estimator's constructor
defaults (their sources are in each class docstring); task and privacy
come from the class.  What only the harness needs is kept there, keyed by
the algorithm's name: tuning spaces in `dpbench.tuning.spaces`, audit
settings in `dpbench.audit.settings`, display labels in `dpbench.plots.styles`
(`dpbench.extend.register_algorithm` declares all of them at once).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any

from sklearn.base import is_classifier

NOT_PRIVACY_PARAMS = ("epsilon", "delta", "random_state")


@dataclass(frozen=True)
class AlgorithmSpec:
    """A registered algorithm: its name, estimator class, task, whether it is private, and its description."""

    name: str
    estimator: type
    task: str  # 'regression' or 'classification'
    private: bool
    description: str = ""

    @property
    def fixed_params(self) -> dict[str, Any]:
        """The paper's fixed hyperparameters: the constructor defaults (privacy budget and seed excluded)."""
        return {k: v for k, v in self.estimator().get_params().items() if k not in NOT_PRIVACY_PARAMS}


_REGISTRY: dict[str, AlgorithmSpec] = {}


def register(spec: AlgorithmSpec) -> AlgorithmSpec:
    """Add `spec` to the registry (ValueError if its name is taken); returns it."""
    if spec.name in _REGISTRY:
        raise ValueError(f"algorithm {spec.name!r} is already registered")
    _REGISTRY[spec.name] = spec
    return spec


def algorithm(name: str, **declaration):
    """Class decorator: register the estimator under `name`; task from the class, privacy from its `private`
    attribute (dpbench's base classes set it), else whether its constructor takes `epsilon`."""

    def decorate(cls):
        task = "classification" if is_classifier(cls()) else "regression"
        private = getattr(cls, "private", None)
        private = "epsilon" in cls().get_params() if private is None else bool(private)
        register(AlgorithmSpec(name, cls, task, private, **declaration))
        return cls

    return decorate


def available(task: str | None = None) -> list[str]:
    """Names of the registered algorithms (optionally only those for `task`)."""
    return sorted(n for n, s in _REGISTRY.items() if task is None or s.task == task)


def get_spec(name: str) -> AlgorithmSpec:
    """The registered algorithm `name`; ValueError naming the available ones if there is none."""
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown algorithm {name!r}; available: {', '.join(available())}") from None


def make(name: str, **params):
    """Build the estimator `name` (its defaults are the paper's fixed settings) with `params` overriding them."""
    spec = get_spec(name)
    valid = set(spec.estimator().get_params())
    unknown = sorted(set(params) - valid)
    if unknown:
        close = {u: difflib.get_close_matches(u, valid, n=1) for u in unknown}
        hint = "; ".join(f"did you mean {c[0]} for {u}?" for u, c in close.items() if c)
        raise ValueError(f"unknown parameter(s) {unknown} for algorithm {name!r}" + (f" ({hint})" if hint else "")
                         + f"; valid: {sorted(valid)}")
    return spec.estimator(**params)
