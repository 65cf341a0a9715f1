"""One place that knows every algorithm: its estimator, task, privacy, fixed settings and tuning ranges.

An algorithm is declared once, next to its class, with the `@algorithm(...)`
decorator.  Its fixed ("paper") settings are the estimator's constructor
defaults (their sources are in each class docstring); task and privacy
come from the class.  Tuning ranges follow paper 000 Table I: a range is a
dict understood by `dpbench.tuning`: {'type': 'float', 'low', 'high', 'log'},
{'type': 'int', 'low', 'high', 'log'} or {'type': 'categorical', 'choices'}.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sklearn.base import is_classifier

from dpbench.algorithms.base import LR_SCHEDULES

# Table I ranges, named once.
CLIP_BOUND = {"type": "float", "low": 1e-5, "high": 1e5, "log": True}
ROUNDS = {"type": "int", "low": 1, "high": 4000, "log": True}
LR_SCHEDULE = {"type": "categorical", "choices": list(LR_SCHEDULES)}  # the schedules step_size knows
LEAVES = {"type": "int", "low": 1, "high": 1000, "log": True}
NOT_PRIVACY_PARAMS = ("epsilon", "delta", "random_state")


@dataclass(frozen=True)
class AlgorithmSpec:
    name: str
    estimator: type
    task: str  # 'regression' or 'classification'
    private: bool
    tuning_space: dict[str, dict] = field(default_factory=dict)
    description: str = ""
    label: str = ""  # the name in figures and tables (the papers' name)
    # the empirical audit (dpbench.privacy.audit): hyperparameters that keep its thousands of fits cheap
    # (the privacy argument holds for every setting), the rows its designs need to reach the algorithm's
    # releases (None: the audit's default), and an n at which the algorithm once branched on n (d = 3)
    audit_params: dict[str, Any] = field(default_factory=dict)
    audit_rows: int | None = None
    audit_branch_n: int | None = None
    # the audit's power: {'design': a name in audit.DESIGNS, 'params': estimator params over audit_params,
    # 'runs': fits a side} on which a copy of the algorithm with every noise scale x 0.1 is caught at eps 1
    audit_power: dict[str, Any] = field(default_factory=dict)

    @property
    def fixed_params(self) -> dict[str, Any]:
        """The paper's fixed hyperparameters: the constructor defaults (privacy budget and seed excluded)."""
        return {k: v for k, v in self.estimator().get_params().items() if k not in NOT_PRIVACY_PARAMS}


_REGISTRY: dict[str, AlgorithmSpec] = {}


def register(spec: AlgorithmSpec) -> AlgorithmSpec:
    if spec.name in _REGISTRY:
        raise ValueError(f"algorithm {spec.name!r} is already registered")
    _REGISTRY[spec.name] = spec
    return spec


def algorithm(name: str, **declaration):
    """Class decorator: register the estimator under `name` (task and privacy read from the class)."""

    def decorate(cls):
        task = "classification" if is_classifier(cls()) else "regression"
        register(AlgorithmSpec(name, cls, task, bool(cls.private), **declaration))
        return cls

    return decorate


def available(task: str | None = None) -> list[str]:
    """Names of the registered algorithms (optionally only those for `task`)."""
    return sorted(n for n, s in _REGISTRY.items() if task is None or s.task == task)


def get_spec(name: str) -> AlgorithmSpec:
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
        raise ValueError(f"unknown parameter(s) {unknown} for algorithm {name!r}; valid: {sorted(valid)}")
    return spec.estimator(**params)
