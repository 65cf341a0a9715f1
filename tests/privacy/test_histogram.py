"""Stability-based private histogram (paper 004 Lemma B.1) and its geometric bins."""

import math

import numpy as np
import pytest
from scipy import stats

from dpbench.privacy import PrivacyLedger
from dpbench.privacy.composition import tag
from dpbench.privacy.histogram import (
    OVERFLOW_BIN,
    ZERO_BIN,
    bin_left_edge,
    geometric_bins,
    group_statistics,
    laplace_scale,
    private_mode_left_edge,
    random_groups,
    stability_histogram,
    stability_threshold,
)
from dpbench.privacy.mechanisms import recorded_releases


def test_scale_and_threshold_hand_values():
    # eps = 0.5, delta = 1e-6: b = 2/0.5 = 4, t = 1 + 4 ln(2e6) = 1 + 4 * 14.508657738524219
    assert laplace_scale(0.5) == 4.0
    assert stability_threshold(0.5, 1e-6) == pytest.approx(1 + 4 * 14.508657738524219, rel=1e-14)


def test_ledger_entry():
    led = PrivacyLedger()
    stability_histogram([0, 0, 1], 0.7, 1e-5, np.random.default_rng(0), led, "h")
    (e,) = led.entries
    assert (e.name, e.mechanism, e.epsilon, e.delta) == ("h", "stability_histogram", 0.7, 1e-5)
    assert e.sensitivity == 2.0 and e.noise_scale == pytest.approx(2.0 / 0.7, rel=1e-15)


def test_laplace_noise_has_the_stated_scale():
    # One bin with 10^4 items is always released; noisy - true count must be Laplace(2/eps).
    eps, R = 0.5, 4000
    rng = np.random.default_rng(1)
    led = PrivacyLedger()
    noise = np.array([stability_histogram(np.zeros(10_000), eps, 1e-6, rng, led, "h")[1][0] - 10_000
                      for _ in range(R)])
    b = 2 / eps
    assert stats.kstest(noise, stats.laplace(scale=b).cdf).pvalue > 1e-3
    # sample variance of Laplace(b): mean 2b^2, sd sqrt((mu4 - sigma^4)/R) = sqrt(20/R) b^2
    assert abs(noise.var() - 2 * b**2) < 5 * math.sqrt(20 / R) * b**2


@pytest.mark.parametrize("c", [1, 5, 11])
def test_release_probability_matches_threshold(c):
    # A bin with count c < t = 1 + 2 ln(200) = 11.6 is released w.p. P(c + Lap(b) >= t) = exp(-(t - c)/b) / 2.
    eps, delta, R = 1.0, 0.01, 20_000
    t, b = 1 + 2 * math.log(2 / delta) / eps, 2 / eps  # by hand: the mechanism's own values must equal them
    assert (stability_threshold(eps, delta), laplace_scale(eps)) == (pytest.approx(t, rel=1e-14), b) and c < t
    p = 0.5 * math.exp(-(t - c) / b)
    rng = np.random.default_rng(2)
    led = PrivacyLedger()
    hits = sum(stability_histogram(np.zeros(c), eps, delta, rng, led, "h")[0].size for _ in range(R))
    assert abs(hits / R - p) < 5 * math.sqrt(p * (1 - p) / R)


def test_empty_bins_never_released_and_single_items_fail():
    rng = np.random.default_rng(3)
    led = PrivacyLedger()
    for _ in range(200):
        ids, _ = stability_histogram([5, 7, 7, 7], 1.0, 1e-6, rng, led, "h")
        assert set(ids) <= {5, 7}
    # one item per bin: release needs Lap(2) >= 2 ln(2e6) ~ 29, probability 2.5e-7 each
    assert private_mode_left_edge([1.0, 3.0, 100.0], 2.0, 1.0, 1e-6, rng, led, "h") is None
    assert stability_histogram([], 1.0, 1e-6, rng, led, "h")[0].size == 0


def test_mode_left_edge_and_seeding():
    vals = np.r_[np.full(500, 3.0), np.full(200, 0.3), np.zeros(100)]
    a = private_mode_left_edge(vals, 2.0, 1.0, 1e-6, np.random.default_rng(4), PrivacyLedger(), "h")
    assert a == 2.0  # 3 lies in [2, 4)
    zeros = private_mode_left_edge(np.zeros(500), 2.0, 1.0, 1e-6, np.random.default_rng(4), PrivacyLedger(), "h")
    assert zeros == 0.0
    r1 = stability_histogram([0] * 50 + [1] * 60, 1.0, 1e-6, np.random.default_rng(9), PrivacyLedger(), "h")
    r2 = stability_histogram([0] * 50 + [1] * 60, 1.0, 1e-6, np.random.default_rng(9), PrivacyLedger(), "h")
    np.testing.assert_array_equal(r1[1], r2[1])


def test_releases_are_reported_with_exact_counts_and_part():
    """The per-release test sees each histogram as {bin: exact count} (L1 sensitivity 2) with the part its ledger
    name is tagged with; replaying returns the earlier release and still draws the noise."""
    with recorded_releases() as first:
        out = stability_histogram([5, 7, 7, 9] + [9] * 99, 0.5, 1e-6, np.random.default_rng(0), PrivacyLedger(),
                                  tag("S2", "h"))
    (r,) = first
    assert (r.name, r.mechanism, r.value, r.sensitivity, r.epsilon, r.part) == (
        "S2/h", "histogram", {5: 1, 7: 2, 9: 100}, 2.0, 0.5, "S2")
    assert r.output is out and out[0].tolist() == [9]
    rng, twin = np.random.default_rng(1), np.random.default_rng(1)
    with recorded_releases(replay=first) as second:
        assert stability_histogram([9] * 50, 0.5, 1e-6, rng, PrivacyLedger(), "S2/h") is out
    assert second[0].value == {9: 50}
    twin.laplace(size=1)
    assert rng.random() == twin.random()


def test_geometric_bins():
    ids = geometric_bins([0.0, 1.0, 1.5, 2.0, 0.3, 1023.9], 2.0)
    np.testing.assert_array_equal(ids, [ZERO_BIN, 0, 0, 1, -2, 9])
    assert geometric_bins([1.2], 2**0.25)[0] == 1  # 2^(1/4) = 1.189 <= 1.2 < 2^(1/2)
    assert bin_left_edge(ZERO_BIN, 2.0) == 0.0 and bin_left_edge(-2, 2.0) == 0.25
    with pytest.raises(ValueError, match=">= 0"):
        geometric_bins([-1.0], 2.0)
    # a statistic that overflowed is a value like any other (its fixed bin), never an exception
    np.testing.assert_array_equal(geometric_bins([np.inf, np.nan, 1e308], 2.0), [OVERFLOW_BIN, OVERFLOW_BIN, 1023])


def test_an_overflowed_mode_gives_no_scale():
    """The modal bin being the overflow bin gives None (no finite scale), as an empty histogram does."""
    rng = np.random.default_rng(0)
    assert private_mode_left_edge(np.full(2000, np.inf), 2.0, 1.0, 1e-6, rng, PrivacyLedger(), "h") is None
    assert private_mode_left_edge(np.full(2000, 3.0), 2.0, 1.0, 1e-6, rng, PrivacyLedger(), "h") == 2.0


@pytest.mark.parametrize("eps, delta", [(0.0, 1e-6), (-1, 1e-6), (1.0, 0.0), (1.0, 1.0), (np.nan, 0.1)])
def test_bad_privacy_parameters(eps, delta):
    with pytest.raises(ValueError, match="epsilon|delta"):
        stability_histogram([0, 1], eps, delta, np.random.default_rng(0), PrivacyLedger(), "h")


def test_group_statistics_match_a_loop():
    rng = np.random.default_rng(3)
    v, g = rng.exponential(size=500), random_groups(500, 40, rng)
    trimmed = group_statistics(v, g, 0.7)
    want_mean, want_trim = [], []
    for j in range(40):
        G = v[g == j]
        if G.size:
            want_mean.append(G.mean())
            psi = np.quantile(G, 0.7, method="inverted_cdf")
            want_trim.append(np.where(G <= psi, G, 0.0).sum() / G.size)
    np.testing.assert_allclose(group_statistics(v, g), want_mean, rtol=1e-12)
    np.testing.assert_allclose(trimmed, want_trim, rtol=1e-12)


@pytest.mark.parametrize("k", [1, 40, 40_000])  # 40,000 groups: past int16, the stable sort is not a radix sort
def test_the_group_order_reads_as_lexsort_s(k):
    """DP-ROBGD's per-round sort: the values in group-then-value order are exactly np.lexsort's sequence (ties,
    zeros and the overflow bin's inf included), so the trimmed means are bit for bit the same."""
    from dpbench.privacy.histogram import _by_group_then_value

    rng = np.random.default_rng(4)
    v = np.round(rng.exponential(size=3000), 1)  # many ties
    v[:5] = [0.0, np.inf, np.inf, 0.0, 1e300]
    g = random_groups(v.size, k, rng)
    np.testing.assert_array_equal(v[_by_group_then_value(v, g)], v[np.lexsort((v, g))])
    assert _by_group_then_value(v[:0], g[:0]).size == 0
