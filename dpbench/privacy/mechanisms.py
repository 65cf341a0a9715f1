"""Noise mechanisms: the only code that draws privacy noise.  Each call draws and writes its ledger entry.

A test wraps the random generator and checks, for every private algorithm,
that the noise scales and counts actually drawn equal its ledger: keep every
noisy release in this module (and `histogram.py`), drawing with the named
distribution methods of the Generator (normal, laplace), Gumbel noise with `gumbel_noise`.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass

import numpy as np

from dpbench.privacy.accounting import mu_from_epsilon_delta
from dpbench.privacy.ledger import PrivacyLedger

NOISE_CALIBRATIONS = ("paper", "analytic")
_WEAKENING = [1.0]  # multiplies every noise scale drawn; 1 except inside `weakened_noise` (the audit's power test)


@contextlib.contextmanager
def weakened_noise(factor: float):
    """Within the block every noise draw of this module (and `histogram.py`, dp_ebm's interpret noise) has its
    scale multiplied by `factor`: a deliberately broken copy of every algorithm, for showing that the audit
    catches it.  The ledger still records the correct scale.  In-process only (joblib workers do not see it;
    `audit.run_audit(noise_factor=...)` enters it in each of its fit chunks, wherever they run).
    """
    _WEAKENING.append(float(factor))
    try:
        yield
    finally:
        _WEAKENING.pop()


def noise_weakening() -> float:
    """The current factor on noise scales (1.0 outside `weakened_noise`)."""
    return _WEAKENING[-1]


_AUTHORS_MU: list[float] = []  # the fit's total mu inside `authors_noise`


@contextlib.contextmanager
def authors_noise(mu_total: float):
    """Within the block every Gaussian release of this module draws std = sensitivity x `mu_total` (the fit's
    total GDP mu), not sensitivity / its own mu: the calibration of paper 000's authors' public code (mu
    multiplied, one scale for every release and round), so `dpbench.analyses.diagnose_fig2` can refit their
    results' noise.  Not private; the ledger records the std drawn (its charges say what it should have been).
    Only that analysis enters it; in-process only."""
    _AUTHORS_MU.append(float(mu_total))
    try:
        yield
    finally:
        _AUTHORS_MU.pop()


@dataclass
class Release:
    """One release as a mechanism saw it, before its noise: what a per-release sensitivity test compares."""

    name: str
    mechanism: str  # 'gaussian' (L2), 'laplace' (L1), 'exponential' (log-weights), 'histogram' (bin -> count)
    value: object  # the exact statistic (array), the log-weights, or {bin: count}
    sensitivity: float | None
    epsilon: float | None  # the charge: epsilon, or mu for Gaussian releases
    output: object = None  # what the mechanism returned
    part: str = ""  # the disjoint data part it read ('' the whole data): see `release_part`


_RECORDERS: list = []
_PARTS: list[str] = []


@contextlib.contextmanager
def release_part(part: str):
    """Releases made within the block read only the disjoint data part `part` (parallel composition); the
    per-release test checks that one record changes releases of one part at most.  Ledger names tagged
    'part/what' (`composition.tag`) say the same."""
    _PARTS.append(part)
    try:
        yield
    finally:
        _PARTS.pop()


@contextlib.contextmanager
def recorded_releases(replay: list[Release] | None = None):
    """Capture every release of the block (a list of `Release`, yielded).  With `replay` (an earlier block's
    releases) the i-th mechanism call returns replay[i].output instead of its own (its noise is still drawn,
    so the Generator stays in step): fitting D, then D plus one record replaying D's outputs, gives each
    release's change *given the same past* -- what its sensitivity must bound (adaptive composition).
    In-process only; every mechanism of this module and `histogram.py` reports here."""
    releases: list[Release] = []
    _RECORDERS.append((releases, replay))
    try:
        yield releases
    finally:
        _RECORDERS.pop()


def report_release(mechanism: str, name: str, value, sensitivity, charge, output):
    """Note a release for `recorded_releases` (no-op outside it); returns the output to release (the replayed
    one when replaying)."""
    if not _RECORDERS:
        return output
    releases, replay = _RECORDERS[-1]
    if replay is not None and len(releases) < len(replay) and replay[len(releases)].name == name:
        output = replay[len(releases)].output
    part = _PARTS[-1] if _PARTS else (name.split("/", 1)[0] if "/" in name else "")
    releases.append(Release(name, mechanism, value, sensitivity, charge, output, part))
    return output


def gaussian_std(sensitivity: float, mu: float) -> float:
    """Noise std of the mu-GDP Gaussian mechanism (Thm II.3): sensitivity / mu (inside `authors_noise`: the
    authors' code's sensitivity x total mu, not private)."""
    if mu <= 0:
        raise ValueError(f"mu must be > 0, got {mu!r}")
    if _AUTHORS_MU:
        return sensitivity * _AUTHORS_MU[-1]
    return sensitivity / mu


def gaussian_mechanism(
    value, sensitivity: float, mu: float, rng: np.random.Generator, ledger: PrivacyLedger, name: str
):
    """Release value + N(0, (sensitivity/mu)^2 I); mu-GDP for L2 sensitivity `sensitivity`."""
    std = gaussian_std(sensitivity, mu)
    value = np.asarray(value, dtype=float)
    ledger.record_gaussian(name, sensitivity, std, mu)
    noisy = value + rng.normal(0.0, std * noise_weakening(), size=value.shape)
    return report_release("gaussian", name, value, sensitivity, mu, noisy if noisy.ndim else float(noisy))


NOISE_BLOCK = 1 << 16  # numbers per draw of `gaussian_rounds` (512 kB)


def gaussian_rounds(
    sensitivity: float, mu: float, rounds: int, dim: int, rng: np.random.Generator, ledger: PrivacyLedger, name: str
):
    """The `rounds` releases of an iterative mechanism (one per round, each `gaussian_mechanism`'s mu-GDP release
    of a `dim`-vector with L2 `sensitivity`), recorded as one ledger entry of count `rounds` up front, their
    noise drawn in calls of NOISE_BLOCK numbers (one call for most runs; a batch of thousands of rounds on
    hundreds of features does not hold all its noise at once).  Returns release(value), called once per round;
    the noise is the same stream as `rounds` separate calls would draw (nothing else draws from `rng` between
    the rounds), so results do not move; per round it costs one addition instead of a draw and a ledger record."""
    std = gaussian_std(sensitivity, mu)
    ledger.record_gaussian(name, sensitivity, std, mu, count=rounds)
    scale, per_draw = std * noise_weakening(), max(1, NOISE_BLOCK // max(1, dim))

    def round_noise():
        for first in range(0, rounds, per_draw):
            yield from rng.normal(0.0, scale, size=(min(per_draw, rounds - first), dim))

    noise = round_noise()

    def release(value):
        value = np.asarray(value, dtype=float)
        return report_release("gaussian", name, value, sensitivity, mu, value + next(noise))
    return release


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
    noise = np.triu(rng.normal(0.0, std * noise_weakening(), size=(d, d)))
    noise = noise + np.triu(noise, 1).T
    return report_release("gaussian", name, matrix[np.triu_indices(d)], sensitivity, mu, matrix + noise)


def gaussian_std_dp(sensitivity: float, epsilon: float, delta: float, calibration: str) -> tuple[float, str]:
    """(noise std, mechanism name) of an (eps, delta)-DP Gaussian mechanism with L2 `sensitivity`.

    'paper': the classical sqrt(2 log(1.25/delta)) sensitivity / eps (paper 004
    Lemma 2.2, eq. (1), Alg. 1 line 8), which is only a theorem for eps <= 1;
    above that we switch to 'analytic'.  'analytic': sensitivity / mu with mu
    the GDP parameter equivalent to (eps, delta) -- exact (Balle & Wang 2018),
    never larger than the classical std.
    """
    if calibration not in NOISE_CALIBRATIONS:
        raise ValueError(f"noise_calibration must be one of {sorted(NOISE_CALIBRATIONS)}, got {calibration!r}")
    if calibration == "paper" and epsilon <= 1:
        return sensitivity * math.sqrt(2 * math.log(1.25 / delta)) / epsilon, "gaussian_classical"
    return sensitivity / mu_from_epsilon_delta(epsilon, delta), "gaussian_analytic"


def gaussian_mechanism_dp(
    value, sensitivity: float, epsilon: float, delta: float, calibration: str, rng: np.random.Generator,
    ledger: PrivacyLedger, name: str,
):
    """Release value + N(0, std^2 I), charged (epsilon, delta); std from `gaussian_std_dp`."""
    std, mechanism = gaussian_std_dp(sensitivity, epsilon, delta, calibration)
    value = np.asarray(value, dtype=float)
    ledger.record_dp(name, mechanism, epsilon, delta, sensitivity=sensitivity, noise_scale=std)
    noisy = value + rng.normal(0.0, std * noise_weakening(), size=value.shape)
    return report_release("gaussian", name, value, sensitivity, epsilon, noisy if noisy.ndim else float(noisy))


def laplace_mechanism(
    value, sensitivity: float, epsilon: float, rng: np.random.Generator, ledger: PrivacyLedger, name: str
):
    """Release value + Laplace(sensitivity/epsilon); epsilon-DP for L1 sensitivity `sensitivity`."""
    if epsilon <= 0:
        raise ValueError(f"epsilon must be > 0, got {epsilon!r}")
    scale = sensitivity / epsilon
    value = np.asarray(value, dtype=float)
    ledger.record_dp(name, "laplace", epsilon, 0.0, sensitivity=sensitivity, noise_scale=scale)
    noisy = value + rng.laplace(0.0, scale * noise_weakening(), size=value.shape)
    return report_release("laplace", name, value, sensitivity, epsilon, noisy if noisy.ndim else float(noisy))


def gumbel_noise(rng: np.random.Generator, scale: float, shape) -> np.ndarray:
    """Gumbel(0, scale) draws computed as Generator.gumbel computes them (U = 1 - next_double, -scale log(-log U)),
    in numpy's vector loops: 3.5x faster at DP-XGBoost's levels (126k draws), each draw within an ulp of the
    Generator's (numpy's log against the C library's) and the stream left where the Generator leaves it.  A U of
    exactly 1 (probability 2^-53 a draw; the Generator draws again at once) is drawn again after the others."""
    u = 1.0 - np.asarray(rng.random(shape), dtype=float)
    _redraw_ones(rng, u)
    return -scale * np.log(-np.log(u))


def _redraw_ones(rng: np.random.Generator, u: np.ndarray) -> None:
    ones = u == 1.0
    while ones.any():
        u[ones] = 1.0 - rng.random(int(ones.sum()))
        ones = u == 1.0


def exponential_mechanism(
    log_weights, epsilon: float, delta: float, rng: np.random.Generator, ledger: PrivacyLedger, name: str,
    sensitivity: float = 1.0, restricted: bool = False,
) -> int:
    """Index i with probability proportional to exp(log_weights[i]) (Gumbel-max), charged (epsilon, delta).

    The caller builds the weights (score times epsilon, base measure) and
    states the charge its proof gives; entries of weight 0 (-inf) are never
    drawn.  argmax(log w + Gumbel) has exactly the softmax distribution.
    `restricted`: a restricted exponential mechanism behind a PTR check (TukeyEM), whose log-weights hold
    data-dependent region volumes: its privacy is the check's safety guarantee, not a bound on how one record
    moves the log-weights, so `recorded_releases` reports it as 'restricted_exponential'.
    """
    log_w = np.asarray(log_weights, dtype=float)
    if not np.isfinite(log_w).any():
        raise ValueError("exponential mechanism: every candidate has weight 0")
    ledger.record_dp(name, "exponential", epsilon, delta, sensitivity=sensitivity, noise_scale=1.0)
    choice = int(np.argmax(log_w + gumbel_noise(rng, noise_weakening(), log_w.shape)))
    return report_release("restricted_exponential" if restricted else "exponential", name, log_w, sensitivity,
                          epsilon, choice)


def exponential_mechanism_rows(
    log_weights, epsilon: float, rng: np.random.Generator, ledger: PrivacyLedger, name: str,
    sensitivity: float = 1.0,
) -> np.ndarray:
    """One index per row of the 2-D `log_weights`, row i drawn with probability proportional to exp(row i).

    For selections on disjoint parts of the data (e.g. the nodes of one depth of a tree): by parallel
    composition the rows together are charged epsilon once, one ledger entry.  Gumbel-max, one draw.
    """
    log_w = np.asarray(log_weights, dtype=float)
    if log_w.ndim != 2 or not np.isfinite(log_w).any(axis=1).all():
        raise ValueError("exponential mechanism: each row needs a candidate of positive weight")
    ledger.record_dp(name, "exponential", epsilon, 0.0, sensitivity=sensitivity, noise_scale=1.0)
    choice = np.argmax(log_w + gumbel_noise(rng, noise_weakening(), log_w.shape), axis=1)
    return report_release("exponential_rows", name, log_w, sensitivity, epsilon, choice)
