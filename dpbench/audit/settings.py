"""How the audit fits each algorithm, by algorithm name: a harness fact, so it lives here, not in the registry.

`params`: hyperparameters that keep the audit's thousands of fits cheap (the privacy argument holds for
every setting); `rows`: the rows of D its designs need to reach the algorithm's releases (None: the
designs' default N_ROWS); `branch_n`: an n at which the algorithm once branched on n (d = 3; the `branch_n`
design); `power`: {'design': a name in DESIGNS (default clip_pull), 'params': over `params`, 'rows',
'runs': fits a side} on which a copy of the algorithm with every noise scale x 0.1 is caught at eps 1.
An algorithm without settings is audited at its defaults, its power design clip_pull.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dpbench.tuning.spaces import tuning_space


@dataclass(frozen=True)
class AuditSettings:
    params: dict[str, Any] = field(default_factory=dict)
    rows: int | None = None
    branch_n: int | None = None
    power: dict[str, Any] = field(default_factory=dict)


_DP_EBM_POWER = {"n_rounds": 1, "max_bins": 17, "max_leaves": 100, "learning_rate": 1.0, "bin_share": 0.9,
                 "private_bounds": False, "feature_bound": 1.0}

SETTINGS: dict[str, AuditSettings] = {
    "boosted_adassp": AuditSettings(params={"n_rounds": 10}),
    # at 10 rounds the residuals of clip_pull's rows vanish
    "boosted_adassp_clf": AuditSettings(params={"n_rounds": 10}, power={"params": {"n_rounds": 1}}),
    # one step: the clipped gradients reach the output most directly
    "dpgd": AuditSettings(params={"n_rounds": 1}),
    # the weakened copy is caught at the model level (Privacy (a)): on records, the random partition's spread
    # hides which of the m models one record moves (designs.tukey_models); the old code returned the zero
    # model below n = m d = 1000 x 3
    "tukey": AuditSettings(branch_n=2999, power={"design": "tukey_models", "runs": 300}),
    # one gradient release, the added record in S3 with probability 0.95, its clipped gradient Theta theta
    "robgd": AuditSettings(params={"n_rounds": 2, "trace": 1.0}, rows=20_000, power={
        "design": "orthogonal", "rows": 2000, "runs": 1000,
        "params": {"n_rounds": 1, "gamma_fraction": 0.05, "norm_bound": 1.0}}),
    # one batch: the added record's clipped gradient against the noise, alone on its axis (on clip_pull the
    # record count's Laplace noise moves the output more than the weakened gradient noise)
    "ambssgd": AuditSettings(params={"n_rounds": 2}, power={
        "design": "orthogonal", "rows": 2000, "runs": 1000,
        "params": {"n_rounds": 1, "noise_calibration": "analytic"}}),
    # the binning's first merge (max_bins 17: interpret merges to 16) decides the canary's bin
    # y_bound: a public label box, so that a design's few rows reach interpret's fit (with none, a label range
    # not found releases the zero model: post-processing of the bounds' histogram, which both paths release)
    "dp_ebm": AuditSettings(params={"n_rounds": 10, "y_bound": 1e9}, power={
        "design": "quantile_tie", "rows": 646, "runs": 1000, "params": {**_DP_EBM_POWER, "y_bound": 1e9}}),
    # as the regressor's, public bounds
    "dp_ebm_clf": AuditSettings(params={"n_rounds": 10, "max_leaves": 3}, power={
        "design": "quantile_tie", "rows": 646, "runs": 1000,
        "params": _DP_EBM_POWER}),
    # one stump on every record; the sketch's first 1/16 cut decides the canary's leaf
    "dp_xgboost": AuditSettings(params={"n_rounds": 3, "max_depth": 3}, power={
        "design": "quantile_tie", "rows": 320, "runs": 600,
        "params": {"n_rounds": 1, "max_depth": 1, "subsample": 1.0, "max_bins": 30, "n_split_candidates": 16,
                   "feature_bound": 1.0}}),
    # three candidates from the default base's tuning space; power: one candidate (AdaSSP at the whole budget,
    # nothing drawn) on ~95% of the records: AdaSSP's power
    "private_selection": AuditSettings(
        params={"n_candidates": 3, "space": tuning_space("adassp")},
        power={"runs": 600, "params": {"n_candidates": 1, "validation_fraction": 0.05, "space": {}}}),
    # power: one candidate (BoostedAdaSSP, one round, nothing drawn) on ~95% of the records: its power
    # (candidates' rounds capped at 30: Table I's up to 4000 made this the audit's slowest fit, and the
    # selection's privacy does not depend on what the candidates are)
    "private_selection_clf": AuditSettings(
        params={"n_candidates": 3, "space": {**tuning_space("boosted_adassp_clf"),
                                             "n_rounds": {"type": "int", "low": 1, "high": 30, "log": True}}},
        power={"runs": 600, "params": {"n_candidates": 1, "validation_fraction": 0.05, "space": {},
                                       "base_params": {"n_rounds": 1}}}),
}


def as_settings(settings: AuditSettings | Mapping) -> AuditSettings:
    """An AuditSettings from itself or a dict of its fields (ValueError naming an unknown field)."""
    if isinstance(settings, AuditSettings):
        return settings
    unknown = sorted(set(settings) - set(AuditSettings.__dataclass_fields__))
    if unknown:
        raise ValueError(f"unknown audit setting(s) {unknown}; valid: params, rows, branch_n, power")
    return AuditSettings(**settings)


def register_audit(name: str, settings: AuditSettings | Mapping) -> AuditSettings:
    """Declare how the audit fits algorithm `name` (an AuditSettings or a dict of its fields)."""
    if name in SETTINGS:
        raise ValueError(f"algorithm {name!r} already has audit settings")
    SETTINGS[name] = as_settings(settings)
    return SETTINGS[name]


def audit_settings(name: str) -> AuditSettings:
    """Algorithm `name`'s audit settings (the defaults when it declared none)."""
    return SETTINGS.get(name, AuditSettings())
