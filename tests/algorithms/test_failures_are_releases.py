"""Failures are releases (DESIGN.md): a private fit returns a finite model for any finite input and any n >= 0, and
every attribute it sets is declared private (issue 35, items 1-2).

Under add/remove neighbours with n not public, *whether* a fit raises or returns NaN is observable: a fit that
raises on D but not on D' = D plus one record releases which one it saw, whatever its ledger says.  Each private
algorithm is fitted through every entry point a user or a sweep reaches -- `fit`, `fit_batch` (a batch mixing
clip bounds and rounds where the algorithm has them) and as a private selection's candidate -- on the degenerate
datasets of `dpbench.checks.degenerate_cases`; it must not raise, its output at the public probe 0, e_1, ..., e_d
must be finite, and a candidate must never fall back (`dpbench.checks.finite_models`, which `python -m dpbench
check` runs too).  Every fitted attribute (`vars(est)` names ending in `_`) must be declared in
the class's `fitted_attributes` (`base.declared_attributes`): a release, post-processing of releases, or public.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpbench import algorithms
from dpbench.algorithms.base import PUBLIC, RELEASE, declared_attributes
from dpbench.checks import degenerate_cases as cases
from dpbench.checks import finite_models, fitted, ordinary_rows

PRIVATE = [n for n in algorithms.available() if algorithms.get_spec(n).private]
# fit_batch for every algorithm here (one without a batched path fits the batch's other settings one by one)
ENTRIES = [(n, e) for n in PRIVATE for e in ("fit", "fit_batch", "candidate")
           if not (e == "candidate" and "validation_fraction" in algorithms.get_spec(n).estimator().get_params())]


@pytest.mark.parametrize("name, entry", ENTRIES)
def test_a_private_fit_returns_a_finite_model_on_any_finite_input(name, entry):
    finite_models(name, entry)  # CheckFailed (an AssertionError) naming the case


@pytest.mark.parametrize("name, entry", ENTRIES)
def test_every_fitted_attribute_is_declared_private(name, entry):
    """After fits on each degenerate set and its neighbour (one ordinary record more), every public attribute is in
    the class's `fitted_attributes`; undeclared ones (exact counts, noiseless distances, diagnostics of the private
    data) fail here."""
    task = algorithms.get_spec(name).task
    extra = ordinary_rows(1, seed=9)
    for case, (X, y) in cases(task).items():
        y_extra = (extra[1] > 0).astype(float) if task == "classification" else extra[1]
        for Xc, yc in ((X, y), (np.vstack([X, extra[0]]), np.append(y, y_extra))):
            with np.errstate(all="ignore"):
                ests = fitted(name, entry, Xc, yc)
            for est in ests:
                declared = declared_attributes(type(est))
                assert set(declared.values()) <= {RELEASE, PUBLIC}
                found = {a for a in vars(est) if a.endswith("_") and not a.startswith("_")}
                undeclared = sorted(found - set(declared))
                assert not undeclared, f"{name} via {entry} on {case}: undeclared fitted attribute(s) {undeclared}"


def test_the_old_leaks_are_gone():
    """The leaks issue 35 measured: each is a release on one side of a neighbouring pair only."""
    from dpbench.algorithms.base import nonprivate_diagnostics

    # DP-XGBoost raised when every kept record sat in its features' zero bins (bincount of no keys is int64)
    for X, y in [(np.zeros((1, 3)), np.array([1.0])), (np.full((50, 3), 0.01), np.arange(50) % 2.0)]:
        algorithms.make("dp_xgboost", random_state=0, n_rounds=2).fit(X, y)
    # fit_batch of BoostedAdaSSP raised on n = 0 (max() over no row blocks)
    for name in ("boosted_adassp", "boosted_adassp_clf"):
        cls = algorithms.get_spec(name).estimator
        ests = [cls(x_bound=b, random_state=0) for b in (1.0, 2.0)]
        cls.fit_batch(ests, np.zeros((0, 3)), np.zeros(0))
    # the selection's exact votes and TukeyEM's noiseless PTR distance are only behind the debug switch
    X, y = ordinary_rows(200)
    sel = algorithms.make("private_selection", n_candidates=2, random_state=0).fit(X, y)
    tukey = algorithms.make("tukey", n_models=20, random_state=0).fit(X, y)
    assert not hasattr(sel, "votes_") and not hasattr(sel, "nonprivate_diagnostics_")
    assert not hasattr(tukey, "ptr_distance_") and not hasattr(tukey, "nonprivate_diagnostics_")
    with nonprivate_diagnostics():
        sel.fit(X, y)
        tukey.fit(X, y)
    assert sel.nonprivate_diagnostics_["votes"].sum() > 0 and "ptr_distance" in tukey.nonprivate_diagnostics_
