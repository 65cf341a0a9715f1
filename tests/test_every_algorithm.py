"""Checks that run over every registered algorithm."""

from pathlib import Path

import pytest

from dpbench import algorithms
from dpbench.report import audit_ledgers

CONF = Path(__file__).resolve().parent.parent / "conf" / "algorithm"


def test_ledger_audit_of_every_private_algorithm():
    """Each private algorithm's ledger composes to the requested (eps, delta) (or less, for a documented early stop)."""
    table = audit_ledgers(epsilon=0.8, delta=1e-6, seed=1)
    private = {n for n in algorithms.available() if algorithms.get_spec(n).private}
    assert set(table["algorithm"]) == private
    assert table["ok"].all(), table.to_string()
    exact = table[table["status"] == "ok"]
    assert exact["spent_epsilon"].sub(0.8).abs().max() < 0.8e-9


@pytest.mark.parametrize("name", algorithms.available())
def test_registry_entry_is_complete(name):
    spec = algorithms.get_spec(name)
    assert spec.task in ("regression", "classification")
    est = algorithms.make(name)
    params = est.get_params()
    for key in spec.tuning_space:
        assert key in params, f"{name}: tuning range for unknown parameter {key}"
    if spec.private:
        assert {"epsilon", "delta", "random_state"} <= set(params)
    assert (CONF / f"{name}.yaml").exists(), f"conf/algorithm/{name}.yaml is missing"
