"""The audit's statistics: Clopper-Pearson bounds, the epsilon / mu lower bounds they imply, and the test.

On the first half of the fits of each side `choose_test` picks the test "statistic >= t" or "<= t"
(threshold, direction, which side the failures fall on, and the statistic itself or its distance from D's
median) that maximises the lower bound; on the second half `audit_outputs` computes that test's
false-positive rate on D and true-positive rate on D' with one-sided Clopper-Pearson bounds (FPR upper, TPR
lower, each at alpha/2: Bonferroni, jointly 95%) and the lower bound (eps, delta)-DP implies, for
add/remove neighbours:

    TPR <= e^eps FPR + delta   and   1 - FPR <= e^eps (1 - TPR) + delta
    eps_lb = max(log((TPR_lo - delta) / FPR_hi), log((1 - FPR_hi - delta) / (1 - TPR_lo)))  (floored at 0)

and, for algorithms whose ledger is pure GDP, mu-GDP's TPR <= Phi(Phi^-1(FPR) + mu):
mu_lb = Phi^-1(TPR_lo) - Phi^-1(FPR_hi).  Choosing the test on one half and bounding on the other keeps
the bound valid: the evaluation half is independent of the choice.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

ALPHA = 0.05
MAX_THRESHOLDS = 400  # candidate thresholds per test on the selection half (quantiles of the pooled values)


def clopper_pearson_lower(k, n, alpha):
    """One-sided (1 - alpha) Clopper-Pearson lower bound on a binomial proportion (0 when k = 0)."""
    k, n = np.asarray(k, float), np.asarray(n, float)
    with np.errstate(invalid="ignore"):
        lo = stats.beta.ppf(alpha, k, n - k + 1)
    return np.where(k <= 0, 0.0, lo)


def clopper_pearson_upper(k, n, alpha):
    """One-sided (1 - alpha) Clopper-Pearson upper bound on a binomial proportion (1 when k = n)."""
    k, n = np.asarray(k, float), np.asarray(n, float)
    with np.errstate(invalid="ignore"):
        hi = stats.beta.ppf(1 - alpha, k + 1, n - k)
    return np.where(k >= n, 1.0, hi)


def _rate_bounds(k0, n0, k1, n1, alpha):
    """(FPR_hi, TPR_lo): the two one-sided bounds, alpha split between them (Bonferroni)."""
    return clopper_pearson_upper(k0, n0, alpha / 2), clopper_pearson_lower(k1, n1, alpha / 2)


def epsilon_lower_bound(k0, n0, k1, n1, delta, alpha=ALPHA):
    """(1 - alpha) lower bound on epsilon from k0/n0 positives on D (FPR) and k1/n1 on D' (TPR); >= 0."""
    fpr_hi, tpr_lo = _rate_bounds(k0, n0, k1, n1, alpha)
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.log(np.maximum(tpr_lo - delta, 0.0) / fpr_hi)
        b = np.log(np.maximum(1.0 - fpr_hi - delta, 0.0) / (1.0 - tpr_lo))
    return np.maximum(np.maximum(np.nan_to_num(a, nan=0.0), np.nan_to_num(b, nan=0.0)), 0.0)


def mu_lower_bound(k0, n0, k1, n1, alpha=ALPHA):
    """(1 - alpha) lower bound on mu for mu-GDP: Phi^-1(TPR_lo) - Phi^-1(FPR_hi); >= 0."""
    fpr_hi, tpr_lo = _rate_bounds(k0, n0, k1, n1, alpha)
    with np.errstate(invalid="ignore"):
        mu = stats.norm.ppf(tpr_lo) - stats.norm.ppf(fpr_hi)  # tpr_lo = 0 or fpr_hi = 1 give -inf
    return np.maximum(np.nan_to_num(mu, nan=0.0, neginf=0.0), 0.0)


# --------------------------------------------------------------------------- choosing the test


@dataclass(frozen=True)
class Test:
    """Reject ("positive") when stat(s) >= threshold (direction +1) or <= threshold (-1); failures -> fail_value.

    `column`: which statistic of a (fits x statistics) matrix (the canary's output, then attribute digests),
    named `label`."""

    statistic: str  # 'output' or 'distance' (|output - center|)
    center: float
    fail_value: float
    direction: int
    threshold: float
    column: int = 0
    label: str = "f(canary)"

    def positives(self, s: np.ndarray) -> int:
        v = self._values(s)
        return int(np.sum(v >= self.threshold) if self.direction > 0 else np.sum(v <= self.threshold))

    def _values(self, s: np.ndarray) -> np.ndarray:
        s = s if s.ndim == 1 else s[:, self.column]
        v = s if self.statistic == "output" else np.abs(s - self.center)
        return np.where(np.isnan(s), self.fail_value, v)

    def describe(self) -> str:
        stat = self.label if self.statistic == "output" else f"|{self.label} - {self.center:.3g}|"
        return f"{stat} {'>=' if self.direction > 0 else '<='} {self.threshold:.4g}"


def _counts(a: np.ndarray, b: np.ndarray, thresholds: np.ndarray, direction: int):
    a, b = np.sort(a), np.sort(b)
    if direction > 0:  # count >= t
        return len(a) - np.searchsorted(a, thresholds, "left"), len(b) - np.searchsorted(b, thresholds, "left")
    return np.searchsorted(a, thresholds, "right"), np.searchsorted(b, thresholds, "right")


def choose_test(s0: np.ndarray, s1: np.ndarray, score, names=None) -> Test:
    """The test maximising score(k0, n0, k1, n1) on these (selection) outputs of D (s0) and D' (s1): vectors, or
    (fits x statistics) matrices whose column the test also chooses (`names` label them).

    Ties (e.g. every bound 0 when the selection half has no power) are broken by the same score at
    alpha = 1, i.e. with median-unbiased rate estimates instead of confidence bounds; between statistics, the
    first (the canary's output) wins a tie.
    """
    s0, s1 = (np.asarray(s, float).reshape(len(s), -1) for s in (s0, s1))
    best, best_score = None, -np.inf
    for column in range(s0.shape[1]):
        c0, c1 = s0[:, column], s1[:, column]
        finite0 = c0[np.isfinite(c0)]
        center = float(np.median(finite0)) if len(finite0) else 0.0
        fails = np.isnan(c0).any() or np.isnan(c1).any()
        label = names[column] if names is not None else "f(canary)"
        for statistic in ("output", "distance"):
            for fail_value in ((np.inf, -np.inf) if fails else (np.inf,)):
                probe = Test(statistic, center, fail_value, 1, 0.0)
                a, b = probe._values(c0), probe._values(c1)
                pooled = np.unique(np.concatenate([a, b]))
                if len(pooled) > MAX_THRESHOLDS:
                    pooled = np.unique(np.quantile(pooled, np.linspace(0, 1, MAX_THRESHOLDS), method="nearest"))
                for direction in (1, -1):
                    k0, k1 = _counts(a, b, pooled, direction)
                    sc = score(k0, len(a), k1, len(b), ALPHA) + 1e-3 * score(k0, len(a), k1, len(b), 1.0)
                    i = int(np.argmax(sc))
                    if sc[i] > best_score:
                        best_score = sc[i]
                        best = Test(statistic, center, fail_value, direction, float(pooled[i]), column, label)
    return best


def audit_outputs(s0: np.ndarray, s1: np.ndarray, delta: float, gdp: bool, alpha: float = ALPHA,
                  names=None) -> dict:
    """Select on the first half of each side, bound on the second: eps_lb (and mu_lb when gdp).  s0, s1: the
    fits' outputs, or (fits x statistics) matrices (the test is chosen among the columns on the first half)."""
    h0, h1 = len(s0) // 2, len(s1) // 2
    sel0, ev0, sel1, ev1 = s0[:h0], s0[h0:], s1[:h1], s1[h1:]
    test = choose_test(sel0, sel1, lambda k0, n0, k1, n1, a: epsilon_lower_bound(k0, n0, k1, n1, delta, a), names)
    k0, k1 = test.positives(ev0), test.positives(ev1)
    out = {"eps_lb": float(epsilon_lower_bound(k0, len(ev0), k1, len(ev1), delta, alpha)),
           "fpr": k0 / len(ev0), "tpr": k1 / len(ev1), "test": test.describe(), "mu_lb": np.nan}
    if gdp:
        mtest = choose_test(sel0, sel1, mu_lower_bound, names)
        out["mu_lb"] = float(mu_lower_bound(mtest.positives(ev0), len(ev0), mtest.positives(ev1), len(ev1), alpha))
    return out
