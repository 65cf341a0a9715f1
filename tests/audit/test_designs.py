"""The audit's canary designs (dpbench/audit/designs.py): deterministic, and each a neighbouring pair."""

from __future__ import annotations

import numpy as np
import pytest

from dpbench import algorithms
from dpbench.audit import DESIGNS, audit_settings

CLASSIFIER_DESIGNS = ("rare_label", "one_class")


@pytest.mark.parametrize("name", DESIGNS)
def test_designs_are_deterministic_and_add_or_swap_one_record(name):
    spec = algorithms.get_spec({"selection_split": "private_selection", "selection_space": "private_selection",
                                "ptr_passes": "tukey", "tukey_models": "tukey"}.get(
        name, "boosted_adassp_clf" if name in CLASSIFIER_DESIGNS else "ssp"))
    a, b = DESIGNS[name](spec), DESIGNS[name](spec)
    if a is None:  # branch_n without a branch_n audit setting
        assert name == "branch_n" and audit_settings(spec.name).branch_n is None
        return
    np.testing.assert_array_equal(a.X, b.X)
    X1, y1 = a.neighbour()
    if a.swap_row is None:
        assert X1.shape[0] == a.X.shape[0] + 1 and len(y1) == len(a.y) + 1 and X1.shape[1] == len(a.x_added)
    else:  # a model-level stage: one row replaced
        assert X1.shape == a.X.shape and (X1 != a.X).any(axis=1).sum() == 1
