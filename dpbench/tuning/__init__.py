"""Tuning modes: how a run's hyperparameters are chosen.

- `fixed`: the algorithm's fixed settings, i.e. its constructor defaults (each class docstring gives the
  source of every value: paper 000 Table I for BoostedAdaSSP, the partners' own papers where they
  recommend one) with the experiment entry's `params` on top.
- `tuned`: paper 000's "non-privately tuned": an Optuna study per (algorithm, fixed params, dataset split,
  epsilon, delta) over the algorithm's tuning space (`dpbench.tuning.spaces`: Table I's ranges; only what
  Table I tunes for that algorithm), objective = the mean validation score over `tuning.seeds` fits on a
  random split of the training part (never the test part).  The chosen setting is then fitted on the whole
  training part with each run's seed and scored on the test part.  The selection looks at private data
  without charging it: rows say `tuning_mode = tuned`, and figures label it "non-privately tuned".
- `private_selection` (beyond the papers): the run's budget pays for the choice too: `n_candidates` random
  settings from the tuning space are fitted on a random part of the training data and one is chosen by the
  exponential mechanism on the rest (`dpbench.algorithms.private_selection`: by squared error for
  regression, by 0-1 error for classification).

The study itself is `dpbench.tuning.study`; the settings are the config's `tuning:` section (defaults:
`dpbench.tuning.settings.TuningConfig`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping

from dpbench.tuning.settings import TuningConfig

MODES = ("fixed", "tuned", "private_selection")
MODE_LABELS = {"fixed": "Fixed", "tuned": "Non-privately tuned", "private_selection": "Privately selected"}

# the `tuning:` config section's defaults: the schema's (dpbench.tuning.settings.TuningConfig documents each key)
DEFAULTS = dataclasses.asdict(TuningConfig())
# the settings each mode's runs depend on (part of their identity)
MODE_KEYS = {"tuned": ("n_trials", "seeds", "validation_fraction", "batch_trials", "metric"),
             "private_selection": ("n_candidates", "validation_fraction")}


def settings(tuning: Mapping | None) -> dict:
    """The tuning settings with defaults filled in, checked (ValueError naming the key)."""
    tuning = dict(tuning or {})
    unknown = sorted(set(tuning) - set(DEFAULTS))
    if unknown:
        raise ValueError(f"unknown tuning key(s) {unknown}; valid: {', '.join(DEFAULTS)}")
    out = {**DEFAULTS, **{k: v for k, v in tuning.items() if v is not None}}
    for key in ("n_trials", "seeds", "batch_trials", "n_candidates"):
        if isinstance(out[key], bool) or not isinstance(out[key], int) or out[key] < 1:
            raise ValueError(f"tuning.{key} must be an integer >= 1, got {out[key]!r}")
    if not isinstance(out["validation_fraction"], (int, float)) or not 0 < out["validation_fraction"] < 1:
        raise ValueError(f"tuning.validation_fraction must be in (0, 1), got {out['validation_fraction']!r}")
    if out["metric"] is not None:
        from dpbench import metrics

        if out["metric"] not in metrics.METRICS:
            raise ValueError(f"tuning.metric={out['metric']!r} is not one of {', '.join(metrics.METRICS)}")
    return out


def search_space(spec, run_tuning: Mapping) -> dict:
    """The ranges a tuned or privately selected run searches: the algorithm's tuning space without the names
    its experiment entry pins (sets in `params` or `grid`, e.g. paper 001's rounds for DP-XGBoost)."""
    from dpbench.algorithms.spaces import without  # here, not above: dpbench.config imports this package's
    from dpbench.tuning.spaces import tuning_space  # settings, and `sweep --help` does not need the algorithms

    return without(tuning_space(spec.name), run_tuning.get("pinned", ()))


def exhaustive_grid(space: Mapping, n_trials: int) -> dict | None:
    """The space as a grid {name: choices} when it is categorical only with at most n_trials points (then a
    study tries each point once); else None (a TPE study of n_trials)."""
    if not space or any(r["type"] != "categorical" for r in space.values()):
        return None
    grid = {n: list(r["choices"]) for n, r in space.items()}
    return grid if math.prod(map(len, grid.values())) <= n_trials else None


def study_trials(spec, run_tuning: Mapping) -> int:
    """The number of trials a run's study runs."""
    grid = exhaustive_grid(search_space(spec, run_tuning), run_tuning["n_trials"])
    return math.prod(map(len, grid.values())) if grid else run_tuning["n_trials"]


def suggest(trial, name: str, space: Mapping):
    """One hyperparameter from a range (dpbench.algorithms.spaces): float / int (log or not) or categorical."""
    kind = space["type"]
    if kind == "float":
        return trial.suggest_float(name, space["low"], space["high"], log=space.get("log", False))
    if kind == "int":
        return trial.suggest_int(name, space["low"], space["high"], log=space.get("log", False))
    if kind == "categorical":
        return trial.suggest_categorical(name, list(space["choices"]))
    raise ValueError(f"unknown range type {kind!r} for {name}")


def is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
