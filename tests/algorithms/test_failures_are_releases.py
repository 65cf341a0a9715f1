"""Failures are releases (DESIGN.md): a private fit returns a finite model for any finite input and any n >= 0, and
every attribute it sets is declared private (issue 35, items 1-2).

Under add/remove neighbours with n not public, *whether* a fit raises or returns NaN is observable: a fit that
raises on D but not on D' = D plus one record releases which one it saw, whatever its ledger says.  Each private
algorithm is fitted through every entry point a user or a sweep reaches -- `fit`, `fit_batch` (a batch mixing
clip bounds and rounds where the algorithm has them) and as a private selection's candidate -- on the degenerate
datasets of `CASES`; it must not raise, its output at the public probe 0, e_1, ..., e_d must be finite, and a
candidate must never fall back.  Every fitted attribute (`vars(est)` names ending in `_`) must be declared in
the class's `fitted_attributes` (`base.declared_attributes`): a release, post-processing of releases, or public.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpbench import algorithms
from dpbench.algorithms.base import PUBLIC, RELEASE, declared_attributes
from dpbench.audit import audit_settings

PRIVATE = [n for n in algorithms.available() if algorithms.get_spec(n).private]
D = 3
PROBE = np.vstack([np.zeros((1, D)), np.eye(D)])


def _ordinary(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, D)) / (2 * np.sqrt(D))
    return X, X @ np.array([0.5, -0.3, 0.2])


def _with(X, y, x, label):
    return np.vstack([X, x[None]]), np.append(y, label)


def cases(task: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Degenerate datasets inside the data domain (finite).  Classification labels are 0/1 (0 where a regression
    label is <= 0), so 'one_class' and the one-record sets hold a single class."""
    X, y = _ordinary(60)
    e1 = np.eye(D)[0]
    out = {
        "empty": (np.zeros((0, D)), np.zeros(0)),
        "one_record": (e1[None], np.array([1.0])),
        "one_record_at_zero": (np.zeros((1, D)), np.array([1.0])),
        "all_zero": (np.zeros((50, D)), np.arange(50) % 2.0),
        "zero_bins": (np.full((50, D), 0.01), np.arange(50) % 2.0),  # every entry in its feature's bin of 0
        "constant_columns": (np.full((50, D), 0.3), np.arange(50) % 2.0),
        "one_class": (X, np.ones(len(y))),
        "at_the_clip_bound": (X / np.linalg.norm(X, axis=1, keepdims=True), y),
        "record_at_1e300": _with(X, y, 1e300 * e1, 1e300),
        "record_at_1e-300": _with(X, y, 1e-300 * e1, 1e-300),
        "label_1e300": _with(X, y, e1, -1e300),
    }
    if task == "classification":
        out = {k: (Xc, (yc > 0).astype(float)) for k, (Xc, yc) in out.items()}
    return out


def _params(name: str) -> dict:
    return dict(audit_settings(name).params)


def _output(est, task):
    return est.decision_function(PROBE) if task == "classification" else est.predict(PROBE)


def _batch(name: str) -> list:
    """Three runs of `name` that one fit_batch fits together: other seeds, clip bounds and rounds where it has them."""
    base = _params(name)
    ests = [algorithms.make(name, **base, random_state=s) for s in range(3)]
    params = ests[0].get_params()
    for est, scale in zip(ests[1:], (0.5, 4.0), strict=True):
        change = {k: params[k] * scale for k in ("x_bound", "y_bound", "grad_bound") if k in params}
        if "n_rounds" in params:
            change["n_rounds"] = max(1, int(params["n_rounds"] * scale))
        est.set_params(**change)
    return ests


def _selection(name: str, task: str):
    selector = "private_selection" if task == "regression" else "private_selection_clf"
    return algorithms.make(selector, algorithm=name, base_params=_params(name), n_candidates=2, space={},
                           random_state=0)


def fitted(name: str, entry: str, X, y) -> list:
    """The estimators `entry` fits on (X, y)."""
    task = algorithms.get_spec(name).task
    if entry == "fit":
        return [algorithms.make(name, **_params(name), random_state=0).fit(X, y)]
    if entry == "fit_batch":
        ests = _batch(name)
        return type(ests[0]).fit_batch(ests, X, y)
    return [_selection(name, task).fit(X, y)]


ENTRIES = [(n, e) for n in PRIVATE for e in ("fit", "fit_batch", "candidate")
           if not (e == "candidate" and "validation_fraction" in algorithms.get_spec(n).estimator().get_params())]


@pytest.mark.parametrize("name, entry", ENTRIES)
def test_a_private_fit_returns_a_finite_model_on_any_finite_input(name, entry):
    task = algorithms.get_spec(name).task
    for case, (X, y) in cases(task).items():
        where = f"{name} via {entry} on {case}"
        try:
            with np.errstate(all="ignore"):
                ests = fitted(name, entry, X, y)
        except Exception as exc:  # noqa: BLE001 - the failure is the finding
            pytest.fail(f"{where}: the fit raised {type(exc).__name__}: {exc}")
        for est in ests:
            assert np.all(np.isfinite(np.asarray(_output(est, task), dtype=float))), f"{where}: non-finite model"
            if entry == "candidate":
                assert est.failed_candidates_ == [], f"{where}: a candidate fell back ({est.failed_candidates_})"


@pytest.mark.parametrize("name, entry", ENTRIES)
def test_every_fitted_attribute_is_declared_private(name, entry):
    """After fits on each degenerate set and its neighbour (one ordinary record more), every public attribute is in
    the class's `fitted_attributes`; undeclared ones (exact counts, noiseless distances, diagnostics of the private
    data) fail here."""
    task = algorithms.get_spec(name).task
    extra = _ordinary(1, seed=9)
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
    X, y = _ordinary(200)
    sel = algorithms.make("private_selection", n_candidates=2, random_state=0).fit(X, y)
    tukey = algorithms.make("tukey", n_models=20, random_state=0).fit(X, y)
    assert not hasattr(sel, "votes_") and not hasattr(sel, "nonprivate_diagnostics_")
    assert not hasattr(tukey, "ptr_distance_") and not hasattr(tukey, "nonprivate_diagnostics_")
    with nonprivate_diagnostics():
        sel.fit(X, y)
        tukey.fit(X, y)
    assert sel.nonprivate_diagnostics_["votes"].sum() > 0 and "ptr_distance" in tukey.nonprivate_diagnostics_
