"""The tuning settings' schema, with their only defaults (here, not in dpbench.config, so that the tuning package
never imports the config: the config validates against tuning, one way)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class TuningConfig:
    """The `tuning:` config section (dpbench.config's schema includes it): these defaults are the only ones
    (conf/tuning/default.yaml is empty; tuning.DEFAULTS is read from here)."""

    n_trials: int = 50  # Optuna trials per study (paper 000 does not say how many it ran); more extends a study
    seeds: int = 3  # fits per trial, each with its own noise; the objective is their mean validation score
    validation_fraction: float = 0.2  # of the training part, held out for the objective (never the test part)
    batch_trials: int = 4  # trials asked of the TPE sampler at once (constant liar) and fitted as one batch
    metric: str | None = None  # null: mse for regression (minimised), f1 for classification (maximised)
    n_candidates: int = 8  # private_selection: random settings fitted, one privately chosen
