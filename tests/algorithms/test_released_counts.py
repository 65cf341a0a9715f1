"""Each step that uses a private record count uses the released one, never the true n.

A DP-GD dividing its step by the true n while still releasing (and ignoring) its noisy count passes every
sensitivity and ledger check.  Here each algorithm is fitted on D, then on D' = D plus ZEROS records at x = 0,
y = 0 (n five times larger) with the same seed, replaying D's releases (`mechanisms.recorded_releases`):

- every release of D' returns D's output, so a model that is post-processing of its releases (and of public
  parameters and data-free randomness) is D's model, to rounding, whatever n is;
- the added records go at the end, so every per-record draw of D's rows (`base.record_generator`: random parts,
  groups of the fit/validation split, subsamples) is unchanged and they join parts without moving D's rows;
- x = 0, y = 0 adds nothing to X^T X, X^T y, lambda_min, any clipped gradient sum or any part's least-squares
  model, so what an algorithm reads outside its releases (TukeyEM's sorted projections, which its final sample
  reads) is unchanged too.  Statistics that do move (group statistics of the stability histograms, DP-XGBoost's
  counts and gradients, the selection's votes) only feed releases, whose outputs are replayed.

A step that reads the true n (or anything else unreleased) gives a different model on D'.  Each batched
algorithm is also checked through `fit_batch` (what sweeps run), a batch mixing budgets, bounds and rounds.

Not covered: DP-EBM (`dp_ebm`, `dp_ebm_clf`) -- its binning and boosting noise is drawn inside interpret, not
reported to `recorded_releases`, so D''s noisy histograms (the zero records sit in a bin) cannot be replayed;
test_dp_ebm checks its merge threshold and bag weights come from the released bin weights, not n.
Non-private baselines read n by design.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpbench import algorithms
from dpbench.privacy.mechanisms import recorded_releases

NOT_REPLAYABLE = {"dp_ebm", "dp_ebm_clf"}  # module docstring
PRIVATE = [n for n in algorithms.available() if algorithms.get_spec(n).private and n not in NOT_REPLAYABLE]
ROWS, ZEROS, SEED = 5000, 20000, 3
# enough rows and budget that the fits do more than fall back (histograms release, TukeyEM's PTR check passes)
PARAMS = {
    "dpgd": {"n_rounds": 5},
    "boosted_adassp": {"n_rounds": 5},
    "boosted_adassp_clf": {"n_rounds": 5},
    "robgd": {"epsilon": 10.0, "n_rounds": 3},
    "ambssgd": {"epsilon": 10.0, "n_rounds": 3},
    "tukey": {"epsilon": 10.0, "n_models": 100},
    "dp_xgboost": {"n_rounds": 3, "max_depth": 3},
    "private_selection": {"n_candidates": 3},
    "private_selection_clf": {"n_candidates": 3, "base_params": {"n_rounds": 5}},
}
# the other runs of a fit_batch: budgets, bounds and rounds that differ from the first run's
BATCH_VARIANTS = {
    "dpgd": [{"epsilon": 3.0, "grad_bound": 0.5, "n_rounds": 3}, {"learning_rate": 0.5, "n_rounds": 8}],
    "boosted_adassp": [{"epsilon": 3.0, "x_bound": 0.3, "n_rounds": 3}, {"y_bound": 0.5, "n_rounds": 8}],
    "boosted_adassp_clf": [{"epsilon": 3.0, "x_bound": 0.3, "n_rounds": 3}, {"y_bound": 0.5, "n_rounds": 8}],
    "adassp": [{"epsilon": 3.0, "x_bound": 0.3}, {"y_bound": 0.5}],
    "ssp": [{"epsilon": 3.0, "x_bound": 0.3}, {"y_bound": 0.5}],
}


def data(classification: bool):
    """(D, D'): D's rows in the unit ball; D' appends ZEROS records at x = 0, y = 0 (label 0: in the public set)."""
    rng = np.random.default_rng(SEED)
    X = rng.normal(size=(ROWS, 3)) / 3
    y = X @ np.array([1.0, -0.5, 0.25]) + rng.normal(0, 0.1, ROWS)
    if classification:
        y = (y > 0).astype(float)
    return (X, y), (np.vstack([X, np.zeros((ZEROS, 3))]), np.concatenate([y, np.zeros(ZEROS)]))


def fitted(name, entry, X, y, replay=None):
    """(estimators, releases) of fitting `name` on (X, y) through `entry` ('fit' or 'fit_batch')."""
    runs = [{}] + (BATCH_VARIANTS[name] if entry == "fit_batch" else [])
    ests = [algorithms.make(name, **{**PARAMS.get(name, {}), **run}, random_state=SEED + i)
            for i, run in enumerate(runs)]
    with recorded_releases(replay) as out:
        if entry == "fit":
            ests[0].fit(X, y)
        else:
            assert len({e.batch_key() for e in ests}) == 1
            type(ests[0]).fit_batch(ests, X, y)
    return ests, out


def scores(est, X):
    return est.decision_function(X) if hasattr(est, "decision_function") else est.predict(X)


CASES = [(n, "fit") for n in PRIVATE] + [(n, "fit_batch") for n in PRIVATE if n in BATCH_VARIANTS]


@pytest.mark.parametrize(("name", "entry"), CASES)
def test_a_private_fit_reads_its_released_count_not_n(name, entry):
    (X, y), (X1, y1) = data(algorithms.get_spec(name).task == "classification")
    on_d, releases = fitted(name, entry, X, y)
    on_d1, releases1 = fitted(name, entry, X1, y1, replay=releases)
    assert [r.name for r in releases1] == [r.name for r in releases], "the fits make different releases"
    probe = np.vstack([X[:50], np.eye(3), -np.eye(3)])
    for run, (a, b) in enumerate(zip(on_d, on_d1, strict=True)):
        sa, sb = scores(a, probe), scores(b, probe)
        assert np.any(sa != 0), f"run {run}: the fit on D fell back to the zero model (the check would be vacuous)"
        np.testing.assert_allclose(sb, sa, rtol=1e-9, atol=1e-12,
                                   err_msg=f"run {run}: the model moved with n although every release was replayed")
