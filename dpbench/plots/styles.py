"""Display labels of the algorithms in figures and tables, by algorithm name (a harness fact, not the registry's).

`common.algorithm_label` shows LABELS[name], else the published name the algorithm's description starts
with, else its registry name.  A new algorithm adds its label with `register_label` (or
`dpbench.extend.register_algorithm`).
"""

from __future__ import annotations

LABELS: dict[str, str] = {  # the papers' names
    "adassp": "AdaSSP",
    "ssp": "SSP",
    "boosted_adassp": "BoostedAdaSSP",
    "boosted_adassp_clf": "BoostedAdaSSP",
    "dpgd": "DP-GD",
    "tukey": "TukeyEM",
    "robgd": "DP-ROBGD",
    "ambssgd": "DP-AMBSSGD",
    "dp_ebm": "DP-EBM",
    "dp_ebm_clf": "DP-EBM",
    "dp_xgboost": "DP-XGBoost",
    "private_selection": "Private selection",
    "private_selection_clf": "Private selection",
    "ols": "OLS",
    "ridge": "Ridge",
    "boosted_linear_clf": "Boosted linear",
    "logreg": "Logistic regression",
}


def register_label(name: str, label: str) -> None:
    """Declare algorithm `name`'s display label."""
    if name in LABELS:
        raise ValueError(f"algorithm {name!r} already has a label ({LABELS[name]!r})")
    if not isinstance(label, str) or not label:
        raise ValueError(f"a label must be a non-empty string, got {label!r}")
    LABELS[name] = label
