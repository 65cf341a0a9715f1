"""Paper 000 Sec. VI / App. E: zero-dimensional BoostedAdaSSP (Alg. 3), its infinite-sample version (Alg. 4),
Prop. A.2 and A.3, the one-shot AdaSSP bias, and dpbench's boosted_adassp with an intercept only."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from dpbench import claims
from dpbench.analyses.theory import (
    ClippedMeans,
    algorithm3,
    algorithm4,
    clip,
    expected_clip,
    library_path,
    one_shot_mean,
    prop_a2_bound,
    prop_a3_bound,
    warmup_rounds,
)
from dpbench.privacy import PrivacyLedger, mu_from_epsilon_delta

EPS = np.finfo(float).eps


@pytest.mark.parametrize("m, tau", [(0.0, 1.0), (0.7, 0.5), (-2.0, 0.25), (4.0, 3.0)])
def test_expected_clip_matches_monte_carlo(m, tau):
    rng = np.random.default_rng(1)
    w = rng.normal(m, 1.0, size=400_000)
    vals = clip(w, tau)
    se = vals.std() / math.sqrt(w.size)
    assert abs(vals.mean() - float(expected_clip(m, tau))) < 5 * se


def test_clip_is_the_clip_not_the_printed_formula():
    np.testing.assert_array_equal(clip(np.array([-3.0, -0.2, 0.0, 0.4, 5.0]), 0.5), [-0.5, -0.2, 0.0, 0.4, 0.5])


def test_sorted_clipped_means_equal_the_direct_mean():
    rng = np.random.default_rng(2)
    y = rng.normal(1.5, 1.0, size=20_001)
    means = ClippedMeans(y)
    for theta in (-3.0, 0.0, 1.2, 1.5, 4.0, 10.0):
        for tau in (0.1, 0.5, 2.0):
            assert means(theta, tau) == pytest.approx(clip(y - theta, tau).mean(), abs=1e-12)


def test_algorithm4_stays_under_prop_a2_bound():
    checked = 0
    for mu in (-10.0, -3.0, -1.0, 0.0, 0.3, 1.0, 3.0, 10.0):
        for tau in (0.1, 0.25, 0.5, 1.0, 2.0, 5.0):
            rounds = int(warmup_rounds(mu, tau)) + 150
            err = np.abs(algorithm4(mu, tau, rounds) - mu)
            bound = prop_a2_bound(mu, tau, np.arange(1, rounds + 1))
            past = ~np.isnan(bound)
            # below the bound, up to the rounding of theta near mu (a few ulps of |mu|)
            assert np.all(err[past] <= bound[past] * (1 + 1e-9) + 8 * EPS * max(1.0, abs(mu))), (mu, tau)
            checked += int(past.sum())
    assert checked > 5000


def test_algorithm4_converges_and_warmup_is_lemma_a5():
    mu, tau = 10.0, 0.5
    w = warmup_rounds(mu, tau)
    err = np.abs(algorithm4(mu, tau, int(w) + 100) - mu)
    assert err[-1] < 1e-9
    assert np.isnan(prop_a2_bound(mu, tau, [math.floor(w)])[0]) and not np.isnan(prop_a2_bound(mu, tau, [w + 1])[0])
    # Lemma A.5: while the error exceeds tau it falls by at least (Phi(2 tau) - 1/2) tau per round
    before = np.r_[abs(mu), err]
    far = before[:-1] > tau
    assert far.sum() >= 3
    assert np.all(before[:-1][far] - before[1:][far] >= (norm.cdf(2 * tau) - 0.5) * tau - 1e-12)


def test_one_shot_bias_is_at_least_mu_minus_tau():
    for mu in (-8.0, -2.0, -0.5, 0.0, 0.5, 2.0, 8.0):
        for tau in (0.1, 0.5, 1.0, 3.0):
            bias = abs(float(expected_clip(mu, tau)) - mu)
            assert bias >= abs(mu) - tau - 1e-12
    # the estimator itself: its mean over trials is E C_tau(Y) (noise centred), so |mean - mu| >= |mu| - tau
    mu, tau, n, rho = 3.0, 0.5, 2_000, 1.0
    rng = np.random.default_rng(3)
    est = np.array([one_shot_mean(rng.normal(mu, 1.0, n), tau, rho, rng) for _ in range(400)])
    se = est.std(ddof=1) / math.sqrt(est.size)
    assert abs(est.mean() - float(expected_clip(mu, tau))) < 5 * se
    assert abs(est.mean() - mu) >= abs(mu) - tau - 5 * se


def test_algorithm3_noise_and_ledger_as_written():
    n, tau, rounds, rho = 5_000, 0.7, 16, 0.5
    y = np.random.default_rng(4).normal(1.0, 1.0, n)
    ledger = PrivacyLedger()
    algorithm3(y, tau, rounds, rho, np.random.default_rng(5), ledger)
    assert sum(e.count for e in ledger.gaussian_entries) == rounds
    assert ledger.total_mu() == pytest.approx(math.sqrt(rho))
    std = math.sqrt(4 * rounds * tau**2 / (n**2 * rho))  # eq. (15)
    assert all(e.noise_scale == pytest.approx(std) for e in ledger.gaussian_entries)
    # drawn noise: one round's output minus the noiseless one, over many generators, has variance std^2
    means = ClippedMeans(y)
    first = np.array([algorithm3(None, tau, rounds, rho, np.random.default_rng(s), means=means)[0]
                      for s in range(2_000)])
    z = (first - means(0.0, tau)) / std
    assert abs(z.mean()) < 5 / math.sqrt(z.size)
    assert abs((z**2).sum() - z.size) < 5 * math.sqrt(2 * z.size)  # chi-square(k) within 5 sd


def test_algorithm3_converges_to_algorithm4_at_prop_a3_rate():
    mu, tau, rounds, rho, trials = 3.0, 0.5, 40, 1.0, 120
    theta = algorithm4(mu, tau, rounds)[-1]
    ns, means = (1_000, 10_000, 100_000), []
    for n in ns:
        gaps = []
        for child in np.random.SeedSequence([6, n]).spawn(trials):
            rng = np.random.default_rng(child)
            gaps.append(abs(algorithm3(rng.normal(mu, 1.0, n), tau, rounds, rho, rng)[-1] - theta))
        gaps = np.array(gaps)
        se = gaps.std(ddof=1) / math.sqrt(trials)
        assert gaps.mean() - 4 * se <= prop_a3_bound(rounds, tau, n, rho)  # Prop. A.3 with its proof's constants
        means.append(gaps.mean())
    # the rate: the mean gap falls at least like n^-1/2 (slope ~ -0.5 measured; a standard error ~0.02)
    slope = np.polyfit(np.log(ns), np.log(means), 1)[0]
    assert slope < -0.4, slope


def test_library_boosted_adassp_intercept_only_follows_algorithm3():
    mu, tau, n = 3.0, 0.5, 10_000
    epsilon, delta = 1000.0, 1e-6
    y = np.random.default_rng(7).normal(mu, 1.0, n)
    rounds = [1, 2, 3, 5, 8, 12, 20, 40]
    ideal = algorithm3(y, tau, max(rounds), math.inf)
    lib = library_path(y, tau, rounds, epsilon, delta)
    # dpbench adds noise of sd tau sqrt(R) / mu_2 to the residual sum (mu_2 = mu / sqrt(3)), 1 / mu_1 to
    # X^T X = n; a round is non-expansive in the previous error, so |diff_R| <= sum of R per-round errors
    mu_total = mu_from_epsilon_delta(epsilon, delta)
    mu_i = mu_total / math.sqrt(3)
    for r, value in zip(rounds, lib, strict=True):
        per_round = tau * math.sqrt(r) / (n * mu_i) + tau / (n * mu_i)  # residual-sum noise; Gamma's error
        assert abs(value - ideal[r - 1]) < 6 * r * per_round, r
    # the trajectory is not trivially close: it moves by > 2 between rounds 1 and 20
    assert abs(ideal[19] - ideal[0]) > 2


def test_theory_analysis_smoke(tmp_path):
    from dpbench import analyses

    written = analyses.get("theory").run(tmp_path / "theory", smoke=True)
    assert {p.name for p in written} == {"theory.parquet", "theory.png"}
    assert (tmp_path / "theory" / "theory.pdf").exists()
    df = pd.read_parquet(tmp_path / "theory" / "theory.parquet")
    assert {"alg4", "alg3", "adassp_bias", "adassp_one_shot", "alg3_minus_alg4", "library_minus_alg3"} <= set(
        df["method"])
    theory_claims = claims.claims("theory")
    assert len(theory_claims) == 4
    for c in theory_claims:
        verdict = c.check(lambda name: pd.read_parquet(tmp_path / name / f"{name}.parquet"))
        assert verdict.holds is True, (c.text, verdict.measured)
