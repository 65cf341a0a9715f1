"""GDP <-> (eps, delta) conversion, composition and budget splitting."""

import math

import dp_accounting
import numpy as np
import pytest
from dp_accounting.pld import pld_privacy_accountant
from scipy.stats import norm

from dpbench.privacy import (
    compose_mu,
    delta_from_mu,
    epsilon_from_mu_delta,
    mu_from_epsilon_delta,
    split_mu,
)

EPS = np.geomspace(0.01, 20, 15)
DELTAS = [1e-12, 1e-10, 1e-8, 1e-6, 1e-4, 1e-2]


@pytest.mark.parametrize("delta", DELTAS)
@pytest.mark.parametrize("eps", EPS)
def test_round_trip_exact(eps, delta):
    mu = mu_from_epsilon_delta(eps, delta)
    assert delta_from_mu(eps, mu) == pytest.approx(delta, rel=1e-10)
    assert epsilon_from_mu_delta(mu, delta) == pytest.approx(eps, rel=1e-10)


def test_matches_naive_formula_where_it_is_stable():
    # Cor. II.5 evaluated directly with scipy's normal cdf (a second implementation).
    for eps, mu in [(0.5, 0.5), (1.0, 1.0), (2.0, 1.5), (3.0, 2.0), (0.1, 0.2)]:
        naive = norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2)
        assert delta_from_mu(eps, mu) == pytest.approx(naive, rel=1e-12)


def test_published_value():
    # Dong, Roth & Su (2021): 1-GDP is (1, 0.127)-DP; mu=0.5 at eps=0: delta = 2 Phi(mu/2) - 1 = 0.1974.
    assert delta_from_mu(1.0, 1.0) == pytest.approx(0.12693674, rel=1e-7)
    assert delta_from_mu(0.0, 0.5) == pytest.approx(2 * norm.cdf(0.25) - 1, rel=1e-12)


@pytest.mark.parametrize("mu", [0.1, 0.5, 1.0, 2.0])
@pytest.mark.parametrize("delta", [1e-8, 1e-6, 1e-3])
def test_against_dp_accounting_pld(mu, delta):
    """Google's PLD accountant on the Gaussian mechanism with noise multiplier 1/mu (discretised: ~1e-4)."""
    acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
    acc.compose(dp_accounting.GaussianDpEvent(noise_multiplier=1 / mu))
    assert acc.get_epsilon(delta) == pytest.approx(epsilon_from_mu_delta(mu, delta), rel=1e-3, abs=1e-4)


def test_delta_increasing_in_mu():
    mus = np.geomspace(0.1, 10, 50)
    deltas = [delta_from_mu(0.5, m) for m in mus]
    assert np.all(np.diff(deltas) > 0)


def test_composition_and_split():
    assert compose_mu([0.3, 0.4]) == pytest.approx(0.5)
    parts = split_mu(1.3, [1, 2, 3])
    assert compose_mu(parts) == pytest.approx(1.3, rel=1e-12)
    assert parts[1] / parts[0] == pytest.approx(2) and parts[2] / parts[0] == pytest.approx(3)
    # T rounds at mu/sqrt(T) compose to mu
    assert compose_mu([0.7 / math.sqrt(100)] * 100) == pytest.approx(0.7, rel=1e-12)


@pytest.mark.parametrize("eps,delta", [(0, 1e-6), (-1, 1e-6), (1, 0), (1, 1), (1, -0.1), (float("nan"), 1e-6)])
def test_bad_privacy_parameters(eps, delta):
    with pytest.raises(ValueError, match="epsilon|delta"):
        mu_from_epsilon_delta(eps, delta)


def test_bad_ratios():
    with pytest.raises(ValueError, match="ratios"):
        split_mu(1.0, [1, 0, 1])
