"""One place that knows every algorithm: its estimator, fixed ("paper") settings and tuning ranges.

Tuning ranges follow paper 000 Table I.  A range is a dict understood by
`dpbench.tuning`: {'type': 'float', 'low', 'high', 'log'}, {'type': 'int',
'low', 'high', 'log'} or {'type': 'categorical', 'choices'}.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# Table I ranges, named once.
CLIP_BOUND = {"type": "float", "low": 1e-5, "high": 1e5, "log": True}
ITERATIONS = {"type": "int", "low": 1, "high": 4000, "log": True}
LEARNING_RATE = {"type": "categorical", "choices": ["constant", "1/t", "1/sqrt(t)"]}
LEAVES = {"type": "int", "low": 1, "high": 1000, "log": True}


@dataclass(frozen=True)
class AlgorithmSpec:
    name: str
    estimator: type
    task: str  # 'regression' or 'classification'
    private: bool
    fixed_params: dict[str, Any] = field(default_factory=dict)
    tuning_space: dict[str, dict] = field(default_factory=dict)
    description: str = ""
    # the empirical audit (dpbench.privacy.audit): hyperparameters that keep its thousands of fits cheap
    # (the privacy argument holds for every setting), and an n at which the algorithm once branched on n
    audit_params: dict[str, Any] = field(default_factory=dict)
    audit_branch_n: int | None = None


_REGISTRY: dict[str, AlgorithmSpec] = {}


def register(spec: AlgorithmSpec) -> AlgorithmSpec:
    if spec.name in _REGISTRY:
        raise ValueError(f"algorithm {spec.name!r} is already registered")
    _REGISTRY[spec.name] = spec
    return spec


def available(task: str | None = None) -> list[str]:
    """Names of the registered algorithms (optionally only those for `task`)."""
    return sorted(n for n, s in _REGISTRY.items() if task is None or s.task == task)


def get_spec(name: str) -> AlgorithmSpec:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown algorithm {name!r}; available: {', '.join(available())}") from None


def make(name: str, **params):
    """Build the estimator `name` with its fixed defaults overridden by `params`."""
    spec = get_spec(name)
    valid = set(spec.estimator().get_params())
    unknown = sorted(set(params) - valid)
    if unknown:
        raise ValueError(f"unknown parameter(s) {unknown} for algorithm {name!r}; valid: {sorted(valid)}")
    return spec.estimator(**{**spec.fixed_params, **params})
