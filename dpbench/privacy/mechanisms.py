"""Noise mechanisms.  Each draws from a numpy Generator and writes its ledger entry."""

from __future__ import annotations

import numpy as np

from dpbench.privacy.ledger import PrivacyLedger


def gaussian_std(sensitivity: float, mu: float) -> float:
    """Noise std of the mu-GDP Gaussian mechanism (Thm II.3): sensitivity / mu."""
    if mu <= 0:
        raise ValueError(f"mu must be > 0, got {mu!r}")
    return sensitivity / mu


def gaussian_mechanism(
    value, sensitivity: float, mu: float, rng: np.random.Generator, ledger: PrivacyLedger, name: str
):
    """Release value + N(0, (sensitivity/mu)^2 I); mu-GDP for L2 sensitivity `sensitivity`."""
    std = gaussian_std(sensitivity, mu)
    value = np.asarray(value, dtype=float)
    ledger.record_gaussian(name, sensitivity, std, mu)
    noisy = value + rng.normal(0.0, std, size=value.shape)
    return noisy if noisy.ndim else float(noisy)


def symmetric_gaussian_mechanism(
    matrix: np.ndarray, sensitivity: float, mu: float, rng: np.random.Generator, ledger: PrivacyLedger, name: str
) -> np.ndarray:
    """Release a symmetric matrix with symmetric noise: draw the upper triangle, mirror it.

    For X^T X under row-norm clip C, ||x x^T||_F = ||x||^2 <= C^2, so the
    L2 sensitivity of the upper triangle (which determines the release) is at
    most C^2 and each drawn entry has std sensitivity / mu.
    """
    std = gaussian_std(sensitivity, mu)
    d = matrix.shape[0]
    ledger.record_gaussian(name, sensitivity, std, mu)
    noise = np.triu(rng.normal(0.0, std, size=(d, d)))
    noise = noise + np.triu(noise, 1).T
    return matrix + noise


def laplace_mechanism(
    value, sensitivity: float, epsilon: float, rng: np.random.Generator, ledger: PrivacyLedger, name: str
):
    """Release value + Laplace(sensitivity/epsilon); epsilon-DP for L1 sensitivity `sensitivity`."""
    if epsilon <= 0:
        raise ValueError(f"epsilon must be > 0, got {epsilon!r}")
    scale = sensitivity / epsilon
    value = np.asarray(value, dtype=float)
    ledger.record_dp(name, "laplace", epsilon, 0.0, sensitivity=sensitivity, noise_scale=scale)
    noisy = value + rng.laplace(0.0, scale, size=value.shape)
    return noisy if noisy.ndim else float(noisy)
