"""Poisson-subsampled pure-DP rounds composed by the PLD accountant (dpbench/privacy/subsampling.py): the
amplification formula, the accountant against the closed form, and the per-round budget solve."""

import math

import pytest

from dpbench.privacy.subsampling import (
    amplified_epsilon,
    composed_epsilon,
    exact_composed_epsilon,
    per_round_epsilon,
)


def test_amplification_is_the_poisson_subsampling_formula():
    assert amplified_epsilon(0.7, 1.0) == pytest.approx(0.7, rel=1e-15)
    assert amplified_epsilon(0.7, 0.3) == pytest.approx(math.log(1 + 0.3 * (math.exp(0.7) - 1)), rel=1e-14)
    assert amplified_epsilon(800.0, 0.5) == pytest.approx(800.0 + math.log(0.5), rel=1e-14)  # no overflow
    with pytest.raises(ValueError, match="sampling probability"):
        amplified_epsilon(1.0, 0.0)


@pytest.mark.parametrize("eps_round,count", [(0.5, 1), (0.05, 10), (0.01, 100), (0.002, 1000)])
def test_dp_accounting_composition_is_an_upper_bound_close_to_the_closed_form(eps_round, count):
    """The PLD accountant's epsilon is >= the exact (Kairouz et al.) one and within 5% of it."""
    pld = composed_epsilon(((eps_round, count),), 1e-6)
    exact = exact_composed_epsilon(eps_round, count, 1e-6)
    assert exact <= pld * (1 + 1e-9)
    assert pld <= 1.05 * exact
    assert pld <= eps_round * count  # never worse than basic composition


@pytest.mark.parametrize("epsilon,rounds,q", [(0.01, 1, 0.8), (1.0, 10, 0.2), (0.5, 100, 0.5), (10.0, 1000, 0.8)])
def test_budget_solve_spends_exactly_the_budget(epsilon, rounds, q):
    eps_t = per_round_epsilon(epsilon, 1e-6, rounds, q)
    spent = composed_epsilon(((amplified_epsilon(eps_t, q), rounds),), 1e-6)
    assert spent == pytest.approx(epsilon, rel=1e-9)
    assert spent <= epsilon * (1 + 1e-9)
