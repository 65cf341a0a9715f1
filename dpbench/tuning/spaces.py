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
# DP-XGBoost's trees: paper 001 grows at most 1000 (its rounds grid {1, 10, 100, 1000}), and Table I, paper 000's
# range for its regressors, does not cover it; up to 4000 trees a study cost 3.3x more for settings paper 001's
# Fig. 3 finds only worse ("DP-XGBoost gives worse performance when more boosting rounds are added")
TREES = {"type": "int", "low": 1, "high": 1000, "log": True}
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
        "grad_bound": CLIP_BOUND,
    },
    "dp_ebm": {"feature_bound": CLIP_BOUND, "y_bound": CLIP_BOUND, "n_rounds": ROUNDS, "max_leaves": LEAVES},
    "dp_ebm_clf": {"feature_bound": CLIP_BOUND, "n_rounds": ROUNDS, "max_leaves": LEAVES},
    "dp_xgboost": {"subsample": SUBSAMPLE, "n_rounds": TREES},
    "ridge": {"alpha": PENALTY},
    "boosted_linear_clf": {"n_rounds": ROUNDS, "lr_schedule": LR_SCHEDULE},
    "logreg": {"C": PENALTY},
}


# DP-EBM's cost is interpret's boosting loop: a Python-level step per feature per round (~0.4 ms CPU each, measured
# on Mercedes-Benz: 60 rounds x 735 one-hot features in 17 s), so at Table I's 4000 rounds one fit on Mercedes-Benz
# takes ~20 min and one default study (50 trials x 3 seeds) about a day on 2 cores.  A study searches DP-EBM's
# rounds up to DP_EBM_TERM_UPDATES / features: Table I's 4000 on every mirror task with at most 40 features (all
# but Mercedes-Benz, where it is 217).  A departure from paper 000, made for compute; None restores Table I's range.
DP_EBM_TERM_UPDATES: int | None = 160_000
ROUNDS_PER_FEATURE_BOUNDED = ("dp_ebm", "dp_ebm_clf")


def bounded_space(name: str, space: Mapping, n_features: int) -> dict:
    """`space` (algorithm `name`'s, as searched) for a study on data of `n_features` features: DP-EBM's rounds
    capped at DP_EBM_TERM_UPDATES / n_features (at least the range's low end); other spaces unchanged."""
    space = dict(space)
    if name in ROUNDS_PER_FEATURE_BOUNDED and DP_EBM_TERM_UPDATES and "n_rounds" in space:
        rounds = space["n_rounds"]
        high = max(rounds["low"], min(rounds["high"], DP_EBM_TERM_UPDATES // max(1, n_features)))
        space["n_rounds"] = {**rounds, "high": high}
    return space

def register_space(name: str, space: Mapping) -> dict:
    """Declare algorithm `name`'s tuning space (checked); a name has one space."""
    if name in SPACES:
        raise ValueError(f"algorithm {name!r} already has a tuning space")
    SPACES[name] = check_space(space, f"tuning space of {name!r}")
    return SPACES[name]


def tuning_space(name: str) -> dict:
    """Algorithm `name`'s tuning space ({} when it has none: fixed mode only)."""
    return SPACES.get(name, {})
