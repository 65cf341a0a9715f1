"""dpbench.privacy.mechanisms and the ledger rules they rely on (merging of rounds, group privacy)."""

import math

import numpy as np
import pytest
from scipy import stats

from dpbench.algorithms.base import random_parts
from dpbench.privacy import (
    PrivacyLedger,
    exponential_mechanism,
    gaussian_mechanism,
    gaussian_rounds,
    gaussian_std,
    gaussian_std_dp,
    laplace_mechanism,
    symmetric_gaussian_mechanism,
)
from dpbench.privacy.mechanisms import recorded_releases


def test_repeated_releases_are_one_entry_with_a_count():
    led, rng = PrivacyLedger(), np.random.default_rng(0)
    gaussian_mechanism(1.0, 1.0, 0.5, rng, led, "count")
    for _ in range(7):
        gaussian_mechanism(np.zeros(3), 2.0, 0.1, rng, led, "round")
    gaussian_mechanism(np.zeros(3), 2.0, 0.2, rng, led, "round")  # a different charge is a new entry
    assert [(e.name, e.count) for e in led.entries] == [("count", 1), ("round", 7), ("round", 1)]
    assert led.total_mu() == pytest.approx(math.sqrt(0.25 + 7 * 0.01 + 0.04), rel=1e-14)



@pytest.mark.parametrize("noise_block", [1 << 16, 7])  # one draw; draws of 2 rounds (the last of 1)
def test_rounds_draw_the_same_noise_as_separate_releases_and_record_one_entry(noise_block, monkeypatch):
    """gaussian_rounds: T releases with the noise of T gaussian_mechanism calls on the same stream, one ledger
    entry of count T, and every round still reported as a release (what the sensitivity tests compare)."""
    from dpbench.privacy import mechanisms

    monkeypatch.setattr(mechanisms, "NOISE_BLOCK", noise_block)
    values = np.arange(15.0).reshape(5, 3)
    led_a, rng_a, led_b, rng_b = PrivacyLedger(), np.random.default_rng(5), PrivacyLedger(), np.random.default_rng(5)
    separate = [gaussian_mechanism(v, 2.0, 0.3, rng_a, led_a, "round") for v in values]
    with recorded_releases() as releases:
        release = gaussian_rounds(2.0, 0.3, 5, 3, rng_b, led_b, "round")
        together = [release(v) for v in values]
    np.testing.assert_array_equal(together, separate)
    assert led_b.entries == led_a.entries and [(e.name, e.count) for e in led_b.entries] == [("round", 5)]
    assert [r.name for r in releases] == ["round"] * 5 and all(r.sensitivity == 2.0 for r in releases)
    assert rng_a.random() == rng_b.random()  # the streams continue alike

def test_group_privacy():
    led = PrivacyLedger(accountant="basic", group_size=2)
    led.record_dp("a", "laplace", 0.3, 0.0)
    led.record_dp("b", "exponential", 0.2, 1e-7)
    eps, delta = led.epsilon_delta(1e-6)
    assert eps == pytest.approx(1.0) and delta == pytest.approx(1e-7 * (1 + math.exp(0.5)))


def test_exponential_mechanism_samples_the_softmax():
    log_w = np.array([np.log(0.5), np.log(0.2), np.log(0.3), -np.inf])  # the last has weight 0
    led, rng = PrivacyLedger(), np.random.default_rng(1)
    draws = np.array([exponential_mechanism(log_w, 1.0, 0.0, rng, led, "em") for _ in range(20_000)])
    counts = np.bincount(draws, minlength=4)
    assert counts[3] == 0
    assert stats.chisquare(counts[:3], 20_000 * np.array([0.5, 0.2, 0.3])).pvalue > 1e-4
    (entry,) = led.entries
    assert entry.count == 20_000 and entry.mechanism == "exponential"
    with pytest.raises(ValueError, match="weight 0"):
        exponential_mechanism([-np.inf], 1.0, 0.0, rng, led, "em")


def test_gumbel_noise_is_the_generators_gumbel_to_an_ulp_and_leaves_the_stream_where_it_does():
    """gumbel_noise computes what Generator.gumbel does in vector loops (numpy's log, not the C library's): the
    same draws to rounding, the exponential mechanism's choices the same, the Generator left at the same state."""
    from dpbench.privacy.mechanisms import gumbel_noise

    for scale, shape in ((1.0, (64, 4000)), (0.1, (7,))):
        ours, theirs = np.random.default_rng(3), np.random.default_rng(3)
        g, ref = gumbel_noise(ours, scale, shape), theirs.gumbel(0.0, scale, shape)
        assert g.shape == ref.shape and np.allclose(g, ref, rtol=1e-13, atol=1e-15 * scale)
        assert ours.random() == theirs.random()
    log_w = np.random.default_rng(4).normal(size=(64, 4000))
    assert (np.argmax(log_w + gumbel_noise(np.random.default_rng(5), 1.0, log_w.shape), axis=1)
            == np.argmax(log_w + np.random.default_rng(5).gumbel(0.0, 1.0, log_w.shape), axis=1)).all()


def test_gumbel_noise_draws_again_a_uniform_of_exactly_one():
    """U = 1 - next_double is 1 when the double is 0 (probability 2^-53): -log(-log 1) would be +inf, a candidate
    chosen whatever its weight; the Generator draws again, so does gumbel_noise."""
    from dpbench.privacy.mechanisms import gumbel_noise

    class ZeroFirst(np.random.Generator):
        def __init__(self):
            super().__init__(np.random.PCG64(0))
            self.first = True

        def random(self, size=None, dtype=np.float64, out=None):
            u = super().random(size, dtype, out)
            if self.first:
                self.first, u[..., 0] = False, 0.0
            return u

    g = gumbel_noise(ZeroFirst(), 1.0, (5,))
    assert np.isfinite(g).all()


def test_gaussian_calibrations():
    std, mech = gaussian_std_dp(2.0, 0.5, 1e-5, "paper")
    assert mech == "gaussian_classical" and std == pytest.approx(2.0 * math.sqrt(2 * math.log(1.25e5)) / 0.5)
    assert gaussian_std_dp(2.0, 3.0, 1e-5, "paper")[1] == "gaussian_analytic"  # classical is no theorem above 1
    with pytest.raises(ValueError, match="noise_calibration"):
        gaussian_std_dp(1.0, 1.0, 1e-5, "rdp")


def test_random_parts_keep_every_other_record_in_place():
    """Adding a record (drawn last) leaves every existing record in its part: parallel composition's coupling."""
    a = random_parts(1000, [0.2, 0.3, 0.5], np.random.default_rng(7))
    b = random_parts(1001, [0.2, 0.3, 0.5], np.random.default_rng(7))
    for pa, pb in zip(a, b, strict=True):
        assert set(pb) - set(pa) <= {1000} and set(pa) <= set(pb)
    sizes = np.array([p.size for p in a])
    assert stats.chisquare(sizes, 1000 * np.array([0.2, 0.3, 0.5])).pvalue > 1e-4


@pytest.mark.parametrize("sensitivity, mu", [(2.0, 0.5), (1.0, 4.0), (0.3, 0.237)])
def test_gaussian_noise_std_is_sensitivity_over_mu(sensitivity, mu):
    """mu-GDP's Gaussian mechanism (Dong, Roth & Su, Thm 2.7): std = sensitivity / mu, never times mu.  The
    drawn noise's sample std agrees within 4 standard errors (n = 40,000: se = std / sqrt(2 n))."""
    assert gaussian_std(sensitivity, mu) == pytest.approx(sensitivity / mu, rel=1e-15)
    led, rng, n = PrivacyLedger(), np.random.default_rng(3), 40_000
    noise = gaussian_mechanism(np.zeros(n), sensitivity, mu, rng, led, "v")
    std = sensitivity / mu
    assert abs(noise.std() - std) < 4 * std / math.sqrt(2 * n)
    assert led.entries[0].noise_scale == pytest.approx(std) and led.entries[0].mu == mu


def test_symmetric_gaussian_noise_is_mirrored_with_std_sensitivity_over_mu():
    """X^T X's release: every entry of the upper triangle (diagonal included) gets its own N(0, (sens/mu)^2), the
    lower triangle mirrors it.  Averaging a full noise matrix with its transpose instead would leave the
    off-diagonal noise std / sqrt(2) (or std / 2 when one triangle is zero): a sensitivity off by that factor.
    Sample stds within 4 standard errors (se = std / sqrt(2 n))."""
    d, sens, mu = 300, 2.0, 0.5
    led, rng = PrivacyLedger(), np.random.default_rng(5)
    gram = np.arange(d * d, dtype=float).reshape(d, d)
    gram = gram + gram.T
    noise = symmetric_gaussian_mechanism(gram, sens, mu, rng, led, "X^T X") - gram
    std = sens / mu
    np.testing.assert_array_equal(noise, noise.T)
    for part in (np.diag(noise), noise[np.triu_indices(d, 1)]):
        assert abs(part.std() - std) < 4 * std / math.sqrt(2 * part.size), (part.size, part.std())
        assert abs(part.mean()) < 4 * std / math.sqrt(part.size)
    e = led.entries[0]
    assert (e.sensitivity, e.noise_scale, e.mu) == (sens, pytest.approx(std), mu)


def test_laplace_noise_scale_is_sensitivity_over_epsilon():
    led, rng, n = PrivacyLedger(), np.random.default_rng(4), 40_000
    noise = laplace_mechanism(np.zeros(n), 2.0, 0.5, rng, led, "v")
    b = 2.0 / 0.5  # mean |Laplace(b)| = b, its sd = b
    assert abs(np.abs(noise).mean() - b) < 4 * b / math.sqrt(n)
