"""Tuning spaces: the ranges tuned and privately selected runs search, per algorithm name.

A harness fact (what the papers tuned), not the estimators': paper 000 Table I's ranges, named once, and
only what Table I tunes for each algorithm (paper 001 for the classifiers' partners).  Format:
`dpbench.algorithms.spaces`.  A new algorithm adds its space with `register_space` (or
`dpbench.extend.register_algorithm`); an algorithm without one runs in fixed mode only.
"""

from __future__ import annotations

from collections.abc import Mapping

from dpbench.algorithms.base import LR_SCHEDULES
from dpbench.algorithms.spaces import check_space

# Table I ranges
CLIP_BOUND = {"type": "float", "low": 1e-5, "high": 1e5, "log": True}
ROUNDS = {"type": "int", "low": 1, "high": 4000, "log": True}
LR_SCHEDULE = {"type": "categorical", "choices": list(LR_SCHEDULES)}
LEAVES = {"type": "int", "low": 1, "high": 1000, "log": True}
PENALTY = {"type": "float", "low": 1e-5, "high": 1e5, "log": True}  # the non-private baselines' ridge / C
SUBSAMPLE = {"type": "categorical", "choices": [0.2, 0.5, 0.8]}  # paper 001 tunes DP-XGBoost's subsample only
BOOSTING = {"x_bound": CLIP_BOUND, "y_bound": CLIP_BOUND, "n_rounds": ROUNDS, "lr_schedule": LR_SCHEDULE}

# name -> {parameter: range}; the order of the names is the order candidates are drawn in (private selection)
SPACES: dict[str, dict[str, dict]] = {
    "adassp": {"x_bound": CLIP_BOUND, "y_bound": CLIP_BOUND},
    "ssp": {"x_bound": CLIP_BOUND, "y_bound": CLIP_BOUND},
    "boosted_adassp": BOOSTING,
    "boosted_adassp_clf": BOOSTING,
    "dpgd": {"grad_bound": CLIP_BOUND, "n_rounds": ROUNDS, "lr_schedule": LR_SCHEDULE},
    "tukey": {"n_models": ROUNDS},
    "robgd": {
        "n_rounds": ROUNDS,
        "learning_rate": {"type": "float", "low": 1e-2, "high": 1e2, "log": True},
        "c2": {"type": "float", "low": 1e-3, "high": 1e2, "log": True},
    },
    "ambssgd": {
        "n_rounds": ROUNDS,
        "learning_rate": {"type": "float", "low": 1e-3, "high": 1e1, "log": True},
        "lr_schedule": LR_SCHEDULE,
        "clip_scale": {"type": "float", "low": 1e-2, "high": 1e2, "log": True},
        "stat_fraction": {"type": "float", "low": 0.05, "high": 0.95, "log": False},
    },
    "dp_ebm": {"feature_bound": CLIP_BOUND, "y_bound": CLIP_BOUND, "n_rounds": ROUNDS, "max_leaves": LEAVES},
    "dp_ebm_clf": {"feature_bound": CLIP_BOUND, "n_rounds": ROUNDS, "max_leaves": LEAVES},
    "dp_xgboost": {"subsample": SUBSAMPLE, "n_rounds": ROUNDS},
    "ridge": {"alpha": PENALTY},
    "boosted_linear_clf": {"n_rounds": ROUNDS, "lr_schedule": LR_SCHEDULE},
    "logreg": {"C": PENALTY},
}


def register_space(name: str, space: Mapping) -> dict:
    """Declare algorithm `name`'s tuning space (checked); a name has one space."""
    if name in SPACES:
        raise ValueError(f"algorithm {name!r} already has a tuning space")
    SPACES[name] = check_space(space, f"tuning space of {name!r}")
    return SPACES[name]


def tuning_space(name: str) -> dict:
    """Algorithm `name`'s tuning space ({} when it has none: fixed mode only)."""
    return SPACES.get(name, {})
