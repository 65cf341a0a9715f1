"""Power of the audit's event designs (issue 35 item 4): each catches a copy of the code with the leak it was
written for -- a fit that raises on one side of a neighbouring pair only, a fitted attribute that is not a
release, a selection whose candidates fail on some fit parts only.  The copies are the old code, patched in for
the duration of one in-process audit (n_jobs=1), as `power_check` weakens the noise; the current code passes the
same design and runs.  Each design runs the fits a side it has in the fast audit (test_run.fast_runs, fewer than 300
on some designs), so the copies show the fast audit's power at its own numbers
(test_run.test_every_private_algorithm_passes_a_fast_audit runs every design)."""

from __future__ import annotations

import numpy as np
import pytest

from dpbench.algorithms import boosting, dp_xgboost, private_selection
from dpbench.algorithms.base import nonprivate_diagnostics
from dpbench.audit import run_audit
from tests.audit.test_run import fast_runs


def _audit(name: str, design: str) -> dict:
    runs = fast_runs(name, design)
    table = run_audit([name], epsilons=(1.0,), designs=[design], runs=runs, n_jobs=1, chunk=runs)
    return table.iloc[0].to_dict()


def _old_histograms(keys, weights, shape, zero_cells, totals):
    """dp_xgboost.histograms before the fix: bincount over no keys is int64, and the float += raised."""
    H = np.bincount(keys, weights, minlength=int(np.prod(shape))).reshape(shape)
    H[:, zero_cells, np.arange(shape[2])] += totals[:, None] - H.sum(axis=1)
    return H


@pytest.mark.parametrize("design", ["zero_record", "zero_bins"])
def test_zero_designs_catch_dp_xgboost_raising_on_zero_bins(monkeypatch, design):
    assert _audit("dp_xgboost", design)["verdict"] == "ok"
    monkeypatch.setattr(dp_xgboost, "histograms", _old_histograms)
    row = _audit("dp_xgboost", design)
    assert row["verdict"] == "violation" and row["failures"] > 0, row


def test_batch_empty_catches_a_batched_path_raising_on_no_rows(monkeypatch):
    assert _audit("boosted_adassp", "batch_empty")["verdict"] == "ok"
    fit_batch = boosting.BoostingBatch.fit_batch.__func__

    def old_fit_batch(cls, estimators, X, y, shared=None, products="float64"):
        if len(X) == 0:  # what max() over no row blocks did
            raise ValueError("max() arg is an empty sequence")
        return fit_batch(cls, estimators, X, y, shared, products)

    monkeypatch.setattr(boosting.BoostingBatch, "fit_batch", classmethod(old_fit_batch))
    assert _audit("boosted_adassp", "batch_empty")["verdict"] == "violation"


def test_attributes_are_audited_exact_votes_are_caught():
    """The selection's exact vote counts (its `votes_` before; now only behind the debug switch) on 1 record vs 2:
    their sum is the validation part's size, 0 or 1 on D and up to 2 on D'."""
    assert _audit("private_selection", "selection_split")["verdict"] == "ok"
    with nonprivate_diagnostics():
        row = _audit("private_selection", "selection_split")
    assert row["verdict"] == "violation" and "nonprivate_diagnostics_votes" in row["test"], row


def test_selection_space_catches_candidates_told_another_label_set(monkeypatch):
    """The old override: a candidate whose label set is not the selection's raises exactly when its fit part holds
    the other label, and falls back to the zero model on D' only."""
    assert _audit("private_selection_clf", "selection_space")["verdict"] == "ok"
    monkeypatch.setattr(private_selection.PrivateSelectionClassifier, "_candidate_params",
                        lambda self: {"classes": [1, 2]})
    assert _audit("private_selection_clf", "selection_space")["verdict"] == "violation"
