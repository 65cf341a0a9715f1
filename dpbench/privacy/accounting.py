"""Gaussian differential privacy (Dong, Roth & Su 2021) accounting.

Everything the algorithms charge is expressed in mu-GDP; (epsilon, delta) is
only the user-facing unit.  Conversions follow paper 000, Cor. II.5:

    delta(eps; mu) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)

and are solved with a bracketing root finder (Brent) in log space.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy.optimize import brentq
from scipy.special import log_ndtr

_MU_LO, _MU_HI = 1e-8, 1e3


def delta_from_mu(epsilon: float, mu: float) -> float:
    """delta(eps) of a mu-GDP mechanism (Cor. II.5), evaluated stably."""
    if mu <= 0:
        return 0.0
    a = log_ndtr(-epsilon / mu + mu / 2)
    b = epsilon + log_ndtr(-epsilon / mu - mu / 2)
    if b >= a:  # only rounding can make this happen; delta is >= 0
        return 0.0
    return float(math.exp(a) * -math.expm1(b - a))


def _log_delta(epsilon: float, mu: float) -> float:
    """log delta(eps; mu), floored at -1e6 where delta underflows (keeps the root finder finite)."""
    a = log_ndtr(-epsilon / mu + mu / 2)
    b = epsilon + log_ndtr(-epsilon / mu - mu / 2)
    if not b < a:
        return -1e6
    return max(float(a + math.log(-math.expm1(b - a))), -1e6)


def check_epsilon_delta(epsilon: float, delta: float) -> None:
    """Raise ValueError naming the bad privacy parameter."""
    if not np.isfinite(epsilon) or epsilon <= 0:
        raise ValueError(f"epsilon must be a finite number > 0, got {epsilon!r}")
    if not np.isfinite(delta) or not 0 < delta < 1:
        raise ValueError(f"delta must lie strictly between 0 and 1, got {delta!r}")


def mu_from_epsilon_delta(epsilon: float, delta: float) -> float:
    """The mu such that mu-GDP is exactly (epsilon, delta)-DP.

    delta(eps; mu) is increasing in mu, so the root is unique; we bracket it
    in log(mu) and solve log delta(eps; mu) = log delta with Brent's method.
    """
    check_epsilon_delta(epsilon, delta)
    target = math.log(delta)

    def f(log_mu: float) -> float:
        return _log_delta(epsilon, math.exp(log_mu)) - target

    lo, hi = math.log(_MU_LO), math.log(_MU_HI)
    if f(lo) > 0 or f(hi) < 0:
        raise ValueError(f"no mu in [{_MU_LO}, {_MU_HI}] gives ({epsilon}, {delta})-DP")
    log_mu = brentq(f, lo, hi, xtol=1e-15, rtol=4 * np.finfo(float).eps, maxiter=500)
    return math.exp(log_mu)


def epsilon_from_mu_delta(mu: float, delta: float) -> float:
    """The smallest epsilon with delta(eps; mu) <= delta."""
    if not 0 < delta < 1:
        raise ValueError(f"delta must lie strictly between 0 and 1, got {delta!r}")
    if mu <= 0:
        return 0.0
    if delta_from_mu(0.0, mu) <= delta:
        return 0.0
    target = math.log(delta)
    hi = 1.0
    while _log_delta(hi, mu) > target:
        hi *= 2.0
        if hi > 1e6:
            raise ValueError(f"epsilon for mu={mu}, delta={delta} exceeds 1e6")
    return float(
        brentq(lambda e: _log_delta(e, mu) - target, 0.0, hi, xtol=1e-14, rtol=4 * np.finfo(float).eps, maxiter=500)
    )


def compose_mu(mus: Sequence[float]) -> float:
    """n-fold composition of mu_i-GDP mechanisms is sqrt(sum mu_i^2)-GDP (Cor. II.4)."""
    mus = np.asarray(mus, dtype=float)
    return float(np.sqrt(np.sum(mus**2)))


def split_mu(mu: float, ratios: Sequence[float]) -> np.ndarray:
    """Split a mu-GDP budget into parts proportional to `ratios` that compose to mu.

    mu_i = mu * r_i / ||r||_2, so sqrt(sum mu_i^2) = mu exactly.
    """
    r = np.asarray(ratios, dtype=float)
    if r.ndim != 1 or r.size == 0 or np.any(~np.isfinite(r)) or np.any(r <= 0):
        raise ValueError(f"budget ratios must be positive finite numbers, got {list(ratios)!r}")
    return mu * r / np.linalg.norm(r)
