"""Advanced composition (Kairouz et al. 2015 Thm 3.4; paper 004 Lemma B.4), its inverse and ledger accounting."""

import math

import numpy as np
import pytest
from dp_accounting.pld import accountant, common

from dpbench.privacy import PrivacyLedger
from dpbench.privacy.composition import (
    ADVANCED_PARALLEL,
    BASIC,
    PARALLEL,
    advanced_composition,
    delta_prime_for,
    per_step_budget,
    spent_by,
    tag,
)


def test_hand_computed_values():
    # k=30, eps0=0.1, delta0=1e-7, delta'=1e-6 (40-digit mpmath): kε0 = 3, tanh(0.05) = 0.0499583957...,
    # middle term 0.14987519 + 0.1 sqrt(60 ln(e + sqrt(0.3)/1e-6)) = 2.9655664203110401, last 3.0289906721864886.
    eps, delta = advanced_composition(0.1, 1e-7, 30, 1e-6)
    assert eps == pytest.approx(2.965566420311040106, rel=1e-13)
    assert delta == pytest.approx(3.999992650008409993e-6, rel=1e-12)
    # the third term wins when sqrt(k) eps0 > 1: k=100, eps0=0.5, delta'=1e-5 -> 36.238562681125862501
    assert advanced_composition(0.5, 0.0, 100, 1e-5)[0] == pytest.approx(36.2385626811258625, rel=1e-13)
    # one release is never charged more than itself
    assert advanced_composition(0.3, 1e-6, 1, 1e-6) == pytest.approx((0.3, 1 - (1 - 1e-6) ** 2), rel=1e-12)


@pytest.mark.parametrize("k", [1, 2, 10, 30, 100, 1000])
@pytest.mark.parametrize("eps, delta", [(0.1, 1e-5), (1.0, 1e-6), (10.0, 1e-6), (100.0, 1e-3)])
def test_inverse_round_trip(k, eps, delta):
    eps0, delta0 = per_step_budget(eps, delta, k)
    assert delta0 == delta / (2 * k)  # paper 004 Alg. 1 line 2
    got = advanced_composition(eps0, delta0, k, delta_prime_for(delta0, k, delta))
    assert got == pytest.approx((eps, delta), rel=1e-12)


@pytest.mark.parametrize("k", [5, 30, 300])
@pytest.mark.parametrize("eps, delta", [(0.1, 1e-6), (0.9, 1e-5)])
def test_lemma_b4_is_implied_and_we_are_at_least_as_generous(k, eps, delta):
    # Lemma B.4 (eps <= 0.9): eps/(2 sqrt(2k log(2/delta))), delta/(2k) per step composes to (eps, delta).
    e_b4, d_b4 = eps / (2 * math.sqrt(2 * k * math.log(2 / delta))), delta / (2 * k)
    e_tot, d_tot = advanced_composition(e_b4, d_b4, k, delta / 2)
    assert e_tot <= eps and d_tot <= delta
    assert per_step_budget(eps, delta, k)[0] >= e_b4


@pytest.mark.parametrize("eps0, delta0, k, total_delta",
                         [(0.1, 1e-7, 30, 1e-5), (0.05, 1e-9, 200, 1e-6), (0.5, 0.0, 100, 1e-5)])
def test_against_optimal_composition_of_dp_accounting(eps0, delta0, k, total_delta):
    # dp_accounting implements the optimal Thm 3.3 on the grid eps0 (k - 2i): the exact optimum lies within
    # one grid step (2 eps0) below its value, and a valid bound can't be below the optimum or above basic.
    opt = accountant.advanced_composition(common.DifferentialPrivacyParameters(eps0, delta0), k, total_delta)
    ours = advanced_composition(eps0, delta0, k, delta_prime_for(delta0, k, total_delta))[0]
    assert opt - 2 * eps0 < ours <= k * eps0


def _ledger(accountant_name, entries):
    led = PrivacyLedger(accountant=accountant_name)
    for name, eps, delta, count in entries:
        led.record_dp(name, "laplace", eps, delta, sensitivity=1.0, noise_scale=1 / eps, count=count)
    return led


def test_spent_by_rules():
    entries = [(tag("A", "x"), 0.5, 1e-7, 1), (tag("A", "y"), 0.25, 1e-7, 2), (tag("B", "z"), 0.8, 2e-7, 1)]
    assert spent_by(_ledger(BASIC, entries), 1e-6) == pytest.approx((1.8, 5e-7))
    assert spent_by(_ledger(PARALLEL, entries), 1e-6) == pytest.approx((1.0, 3e-7))
    adv = [(tag("S2", f"h{t}"), 0.05, 1e-8, 1) for t in range(20)] + [(tag("S3", "g"), 0.05, 1e-8, 19)]
    got = spent_by(_ledger(ADVANCED_PARALLEL, adv), 1e-6)
    assert got == pytest.approx(advanced_composition(0.05, 1e-8, 20, delta_prime_for(1e-8, 20, 1e-6)), rel=1e-14)
    with pytest.raises(ValueError, match="mixes"):
        spent_by(_ledger(ADVANCED_PARALLEL, entries), 1e-6)
    with pytest.raises(ValueError, match="unknown accountant"):
        spent_by(_ledger("gdp", entries), 1e-6)
    gauss = PrivacyLedger(accountant=BASIC)
    gauss.record_gaussian("g", 1.0, 1.0, 1.0)
    with pytest.raises(ValueError, match="GDP"):
        spent_by(gauss, 1e-6)
    assert spent_by(PrivacyLedger(accountant=BASIC), 1e-6) == (0.0, 0.0)


def test_whole_data_entries_compose_with_every_part():
    """An untagged release (the private record count) reads every record: it adds to each part's spend."""
    parts = [(tag("A", "x"), 0.5, 1e-7, 1), (tag("B", "z"), 0.8, 2e-7, 1)]
    count = [("record count n", 0.1, 0.0, 1)]
    assert spent_by(_ledger(PARALLEL, count + parts), 1e-6) == pytest.approx((0.9, 2e-7))
    assert spent_by(_ledger(PARALLEL, count), 1e-6) == pytest.approx((0.1, 0.0))
    adv = [(tag("S2", f"h{t}"), 0.05, 1e-8, 1) for t in range(20)]
    got = spent_by(_ledger(ADVANCED_PARALLEL, count + adv), 1e-6)
    want = advanced_composition(0.05, 1e-8, 20, delta_prime_for(1e-8, 20, 1e-6))
    assert got == pytest.approx((want[0] + 0.1, want[1]), rel=1e-14)


# ------------------------------------------------------------ spent_by on known ledgers, values computed by hand
# (40-digit mpmath, independently of dpbench): an under-reported part (a factor, min for max, a dropped count) fails.
# 400 releases of (0.01, 1e-9) in one part at delta_target 1e-6 beside a whole-data (0.05, 1e-7): delta' =
# 1 - (1 - 9e-7) / (1 - 1e-9)^400; Kairouz's terms 4, 0.01 (400 tanh(0.005) + sqrt(800 ln(e + 0.2 / delta'))),
# 0.01 (400 tanh(0.005) + sqrt(800 ln(1 / delta'))) = 4, 1.0358433670418572638, 1.0973542660: the middle one.
ADVANCED_400 = 1.0358433670418572638
# epsilon of mu-GDP at delta: the root of Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) = delta (bisection)
GDP_EPSILON = {(0.5, 1e-6): 2.254084650219740935, (0.5, 9e-7): 2.265381671507820191}
COUNT_N = [("record count n", 0.1, 0.0, 1)]  # reads every record: added to every part
PART_A = [(tag("A", "x"), 0.3, 1e-7, 1), (tag("A", "y"), 0.2, 0.0, 3)]  # (0.9, 1e-7)
PART_B = [(tag("B", "z"), 0.5, 2e-7, 2)]  # (1.0, 4e-7): the largest epsilon
PART_C = [(tag("C", "w"), 0.95, 5e-7, 1)]  # (0.95, 5e-7): the largest delta


@pytest.mark.parametrize(("accountant_name", "entries", "spent"), [
    (PARALLEL, PART_A, (0.9, 1e-7)),  # one part: its entries summed, counts included
    (PARALLEL, COUNT_N + PART_A, (1.0, 1e-7)),
    (PARALLEL, PART_A + PART_B + PART_C, (1.0, 5e-7)),  # the max over parts, of epsilon and of delta apart
    (PARALLEL, COUNT_N + PART_C + PART_B + PART_A, (1.1, 5e-7)),
    (BASIC, COUNT_N + PART_A + PART_B + PART_C, (2.95, 1e-6)),  # no parts: everything summed
], ids=["one_part", "count_one_part", "three_parts", "count_three_parts", "basic"])
def test_spent_by_basic_and_parallel_charges_by_hand(accountant_name, entries, spent):
    assert spent_by(_ledger(accountant_name, entries), 1e-6) == pytest.approx(spent, rel=1e-12)


@pytest.mark.parametrize("counts", [[1] * 400, [1] * 100 + [300], [400]], ids=["400x1", "100x1+300", "1x400"])
@pytest.mark.parametrize(("single", "spent"), [
    ((0.9, 2e-7), (0.05 + ADVANCED_400, 1e-6)),  # the 400 releases' part is the largest
    ((1.5, 2e-7), (1.55, 1e-6)),  # a part's one release is charged as itself; delta: the 400 releases' 9e-7
], ids=["many_largest", "single_largest"])
def test_spent_by_advanced_composition_of_a_part_by_hand(counts, single, spent):
    """ADVANCED_PARALLEL: within a part, k = every release (entries and their counts) composed by Kairouz's
    Thm 3.4 with delta' leaving room for the whole-data entries' delta; the max over parts; whole-data added."""
    whole = [("record count n", 0.05, 1e-7, 1)]
    many = [(tag("S2", f"h{i}"), 0.01, 1e-9, c) for i, c in enumerate(counts)]
    led = _ledger(ADVANCED_PARALLEL, whole + [(tag("S1", "norm"), *single, 1)] + many)
    assert spent_by(led, 1e-6) == pytest.approx(spent, rel=1e-12)


@pytest.mark.parametrize("accountant_name", [PARALLEL, ADVANCED_PARALLEL])
def test_spent_by_composes_a_gaussian_part_in_gdp_by_hand(accountant_name):
    """A part of Gaussian releases: mu = sqrt(sum count mu_i^2) (16 x 0.1 and 0.3: 0.5), charged the epsilon of
    that mu at delta_target less the whole-data delta; the other parts and the whole-data entries as above."""
    led = _ledger(accountant_name, [("record count n", 0.05, 1e-7, 1), (tag("S2", "h"), 0.01, 1e-9, 100)])
    led.record_gaussian(tag("S3", "gradient t=0"), 1.0, 10.0, 0.1, count=16)
    led.record_gaussian(tag("S3", "gradient t=16"), 1.0, 10 / 3, 0.3)
    assert spent_by(led, 1e-6) == pytest.approx((0.05 + GDP_EPSILON[0.5, 9e-7], 1e-6), rel=1e-12)
    alone = PrivacyLedger(accountant=accountant_name)
    alone.record_gaussian(tag("G", "g"), 1.0, 2.0, 0.5)
    assert spent_by(alone, 1e-6) == pytest.approx((GDP_EPSILON[0.5, 1e-6], 1e-6), rel=1e-12)


@pytest.mark.parametrize("args", [(0.0, 1e-6, 10), (1.0, 0.0, 10), (1.0, 1e-6, 0), (1.0, 1e-6, 2.5), (np.inf, 1e-6, 3)])
def test_bad_inputs(args):
    with pytest.raises(ValueError):
        per_step_budget(*args)
    with pytest.raises(ValueError, match="delta_prime"):
        advanced_composition(0.1, 1e-6, 10, 0.0)
    with pytest.raises(ValueError, match="leaves nothing"):
        delta_prime_for(1e-6, 10, 1e-6)
