"""Stability-based private histogram (paper 004 Lemma B.1; Karwa & Vadhan 2017, Lemma 2.3) over geometric bins,
and the private scale estimators of paper 004 Alg. 2-3 built on it (used by DP-ROBGD and DP-AMBSSGD).

Only non-empty bins get noise, so the domain can be infinite (the bins of
paper 004 Alg. 2-3 cover [0, inf) geometrically).  Analysis, for neighbours
that change one histogrammed item (one group statistic of Alg. 2-3 moves
when one record is added, removed or replaced): at most two bin counts
change, each by 1, so the count vector has L1 sensitivity 2 and
Laplace(2/eps) noise makes bins that are non-empty in both datasets
eps-DP.  A bin non-empty in only one of them holds a single item; it is
released only if 1 + Lap(2/eps) >= t, probability (1/2) exp(-(t-1) eps/2)
each, so with t = 1 + 2 log(2/delta)/eps the two such bins leak at most
delta/2 <= delta in total (Karwa & Vadhan's threshold).

The histogrammed items are group statistics; a record must touch one group
only, whatever n is, so records join the k groups independently at random
(`random_groups`): adding or removing one changes one group's statistic
(moving it between two bins), or adds or removes a one-record group.
"""

from __future__ import annotations

import math

import numpy as np

from dpbench.privacy.accounting import check_epsilon_delta
from dpbench.privacy.ledger import PrivacyLedger
from dpbench.privacy.mechanisms import noise_weakening, report_release

ZERO_BIN = np.iinfo(np.int64).min  # the bin {0} of paper 004 Alg. 2-3
OVERFLOW_BIN = np.iinfo(np.int64).max  # a statistic that overflowed (inf, or NaN from inf - inf): one fixed bin
SENSITIVITY = 2.0  # L1 sensitivity of the count vector


def laplace_scale(epsilon: float) -> float:
    """Laplace scale b = 2/eps of the noisy counts."""
    return SENSITIVITY / epsilon


def stability_threshold(epsilon: float, delta: float) -> float:
    """Release threshold t = 1 + 2 log(2/delta)/eps on noisy counts."""
    return 1.0 + SENSITIVITY * math.log(2.0 / delta) / epsilon


def stability_histogram(
    bins, epsilon: float, delta: float, rng: np.random.Generator, ledger: PrivacyLedger, name: str
) -> tuple[np.ndarray, np.ndarray]:
    """(released bin ids, their noisy counts): non-empty bins get Lap(2/eps), kept if >= threshold.

    (eps, delta)-DP; charged once to `ledger` as mechanism 'stability_histogram'.
    Both arrays are empty when no bin survives (the "all bins empty" case of
    paper 004 Alg. 2-3).  Reported to `mechanisms.recorded_releases` as {bin id: exact count}, so the
    per-release test checks its L1 change and the part its ledger name is tagged with.
    """
    check_epsilon_delta(epsilon, delta)
    ids, counts = np.unique(np.asarray(bins, dtype=np.int64), return_counts=True)
    scale = laplace_scale(epsilon)
    ledger.record_dp(name, "stability_histogram", epsilon, delta, sensitivity=SENSITIVITY, noise_scale=scale)
    noisy = counts + rng.laplace(0.0, scale * noise_weakening(), size=counts.size)
    keep = noisy >= stability_threshold(epsilon, delta)
    return report_release("histogram", name, dict(zip(ids.tolist(), counts.tolist(), strict=True)), SENSITIVITY,
                          epsilon, (ids[keep], noisy[keep]))


def geometric_bins(values, base: float) -> np.ndarray:
    """Bin id j of [base^j, base^(j+1)) for each value > 0, ZERO_BIN for 0, OVERFLOW_BIN for inf or NaN.

    Group statistics of finite data can overflow (a record at 1e200 squared): whether they do depends on the
    data, so they go to a fixed bin like any other value instead of raising (DESIGN.md, "Failures are
    releases").  Negative values are a caller's bug (the statistics are squares): ValueError.
    """
    v = np.asarray(values, dtype=float)
    if np.any(v < 0):
        raise ValueError("geometric bins need values >= 0")
    out = np.full(v.shape, ZERO_BIN, dtype=np.int64)
    out[~np.isfinite(v)] = OVERFLOW_BIN
    pos = np.isfinite(v) & (v > 0)
    out[pos] = np.floor(np.log(v[pos]) / math.log(base)).astype(np.int64)
    return out


def bin_left_edge(bin_id: int, base: float) -> float:
    return 0.0 if bin_id == ZERO_BIN else float(base) ** int(bin_id)


def private_mode_left_edge(
    values, base: float, epsilon: float, delta: float, rng: np.random.Generator, ledger: PrivacyLedger, name: str
) -> float | None:
    """Left end of the released geometric bin with the largest noisy count, or None (paper 004 Alg. 2-3 lines 4-8;
    also None when that bin is the overflow bin: no finite scale, post-processing of the release)."""
    ids, noisy = stability_histogram(geometric_bins(values, base), epsilon, delta, rng, ledger, name)
    if ids.size == 0 or ids[np.argmax(noisy)] == OVERFLOW_BIN:
        return None
    return bin_left_edge(ids[np.argmax(noisy)], base)


def n_groups(c1: float, epsilon: float, delta: float, zeta: float) -> int:
    """k = ceil(2 + C1 log(1/(delta zeta)) / eps) groups (paper 004 Alg. 2-3 line 2, plus 2); public.

    With C1 = 4 this is exactly the k for which the largest bin (>= k/2 of the
    group statistics when they straddle two bins, as Thm 4 shows) clears the
    histogram threshold 1 + 2 log(2/delta)/eps after Laplace(2/eps) noise with
    probability >= 1 - zeta: k/2 - (2/eps) log(1/(2 zeta)) >= 1 + (2/eps) log(2/delta).
    The paper's floor(C1 log(1/(delta zeta))/eps) drops the additive 2, which
    matters at large eps (few groups).  k does not depend on n (not public).
    """
    return max(1, math.ceil(2 + c1 * math.log(1 / (delta * zeta)) / epsilon))


def random_groups(n: int, k: int, rng: np.random.Generator) -> np.ndarray:
    """(n,) group label of each row, uniform over k groups and independent across rows."""
    return rng.integers(k, size=n)


def group_statistics(values: np.ndarray, groups: np.ndarray, keep_quantile: float | None = None) -> np.ndarray:
    """Statistic of each non-empty group (labels `groups`): plain mean (Alg. 3 line 3) or trimmed mean (Alg. 2).

    keep_quantile = q gives phi_j = (1/|G_j|) sum_{i in G_j} b_i 1{b_i <= psi_j}
    with psi_j the q-quantile of G_j (Alg. 2 line 3).
    """
    values = np.asarray(values, dtype=float)
    counts = np.bincount(groups)
    present = np.flatnonzero(counts)
    if keep_quantile is None:
        return np.bincount(groups, weights=values)[present] / counts[present]
    v, starts = values[_by_group_then_value(values, groups)], np.concatenate([[0], np.cumsum(counts)])
    m = counts[present]
    # psi_j = the ceil(q m_j)-th smallest value of group j (numpy's 'inverted_cdf' quantile)
    psi = v[starts[present] + np.maximum(np.ceil(keep_quantile * m).astype(int), 1) - 1]
    kept = np.where(v <= np.repeat(psi, m), v, 0.0)
    with np.errstate(over="ignore"):  # a sum that overflows is inf: the histogram's overflow bin
        return np.add.reduceat(kept, starts[present]) / m


def _by_group_then_value(values: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """An order of the rows by group, then by value: values[order] is np.lexsort((values, groups))'s sequence
    (rows of equal value may swap, which changes nothing read from it), in about half its time (DP-ROBGD sorts its
    S2 residuals every round): one sort of the values, then a stable sort by group, a radix sort for small ints."""
    by_value = np.argsort(values)
    labels = groups[by_value]
    if labels.size and labels.max() <= np.iinfo(np.int16).max:
        labels = labels.astype(np.int16)
    return by_value[np.argsort(labels, kind="stable")]


def private_scale_estimate(
    values: np.ndarray, groups: np.ndarray, keep_quantile: float | None, base: float, epsilon: float, delta: float,
    rng: np.random.Generator, ledger: PrivacyLedger, name: str,
) -> float | None:
    """Alg. 2 / Alg. 3: group statistics, then the left end of the modal bin of the private histogram (or None)."""
    return private_mode_left_edge(group_statistics(values, groups, keep_quantile), base, epsilon, delta, rng,
                                  ledger, name)
