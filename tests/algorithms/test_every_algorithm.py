"""Checks that run over every registered algorithm."""


from dpbench import algorithms
from dpbench.summary import audit_ledgers


def test_ledger_audit_of_every_private_algorithm():
    """Each private algorithm's ledger composes to the requested (eps, delta) (or less, for a documented early stop)."""
    table = audit_ledgers(epsilon=0.8, delta=1e-6, seed=1)
    private = {n for n in algorithms.available() if algorithms.get_spec(n).private}
    assert set(table["algorithm"]) == private
    assert table["ok"].all(), table.to_string()
    exact = table[table["status"] == "ok"]
    assert exact["spent_epsilon"].sub(0.8).abs().max() < 0.8e-9
