"""(epsilon, delta) composition for algorithms analysed without GDP (paper 004 and DP-AMBSSGD).

Advanced composition is Kairouz, Oh & Viswanath (2015), Thm 3.4 -- the
theorem behind paper 004 Lemma B.4: k adaptive (eps0, delta0)-DP releases
are (eps, 1 - (1 - delta0)^k (1 - delta'))-DP for every delta' in (0, 1] with

    eps = min{ k eps0,
               k eps0 tanh(eps0/2) + eps0 sqrt(2k log(e + sqrt(k eps0^2)/delta')),
               k eps0 tanh(eps0/2) + eps0 sqrt(2k log(1/delta')) }

((e^eps0 - 1)/(e^eps0 + 1) = tanh(eps0/2)).  Lemma B.4's per-step budget
(eps/(2 sqrt(2k log(2/delta))), delta/(2k)) is one sufficient choice; we solve
for the largest eps0 instead, so the composition spends exactly the budget.

Ledgers of these algorithms tag each entry's data part in its name
("S2/distance histogram t=3"): releases on disjoint parts compose in
parallel (McSherry 2009; paper 004 Lemma B.2), releases on the same part by
the ledger's accountant.  An untagged entry read the whole dataset (e.g. the
private record count): it composes, by basic composition, with every part.
`spent_by` does exactly that.

Parallel composition needs that one record lands in one part whatever the
other records are: the algorithms assign each record to a part independently
at random (never by cutting a permutation into sizes that depend on n).
"""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np
from scipy.optimize import brentq

from dpbench.privacy.accounting import check_epsilon_delta, compose_mu, epsilon_from_mu_delta

# ledger.accountant values understood by spent_by
BASIC = "basic"  # sum over every entry
PARALLEL = "parallel"  # basic within a part, max across disjoint parts
ADVANCED_PARALLEL = "advanced+parallel"  # advanced (Kairouz Thm 3.4) within a part, max across parts


def tag(part: str, what: str) -> str:
    """Ledger entry name recording the disjoint data part a release touched."""
    return f"{part}/{what}"


def part_of(name: str) -> str:
    return name.split("/", 1)[0] if "/" in name else ""


def _check(eps0: float, delta0: float, k: int) -> None:
    if not (math.isfinite(eps0) and eps0 >= 0):
        raise ValueError(f"per-step epsilon must be finite and >= 0, got {eps0!r}")
    if not 0 <= delta0 < 1:
        raise ValueError(f"per-step delta must lie in [0, 1), got {delta0!r}")
    if int(k) != k or k < 1:
        raise ValueError(f"number of compositions k must be an integer >= 1, got {k!r}")


def advanced_composition(eps0: float, delta0: float, k: int, delta_prime: float) -> tuple[float, float]:
    """(eps, delta) of k adaptive (eps0, delta0)-DP releases (Kairouz et al. 2015, Thm 3.4)."""
    _check(eps0, delta0, k)
    if not 0 < delta_prime <= 1:
        raise ValueError(f"delta_prime must lie in (0, 1], got {delta_prime!r}")
    drift = k * eps0 * math.tanh(eps0 / 2)
    eps = min(
        k * eps0,
        drift + eps0 * math.sqrt(2 * k * math.log(math.e + math.sqrt(k * eps0**2) / delta_prime)),
        drift + eps0 * math.sqrt(2 * k * math.log(1 / delta_prime)),
    )
    delta = -math.expm1(k * math.log1p(-delta0) + math.log1p(-delta_prime))  # 1 - (1-delta0)^k (1-delta')
    return eps, delta


def delta_prime_for(delta0: float, k: int, delta_total: float) -> float:
    """The delta' with 1 - (1 - delta0)^k (1 - delta') = delta_total."""
    dp = -math.expm1(math.log1p(-delta_total) - k * math.log1p(-delta0))
    if not dp > 0:
        raise ValueError(f"delta_total={delta_total} leaves nothing for delta' after {k} releases of delta0={delta0}")
    return dp


def per_step_budget(epsilon: float, delta: float, k: int, delta0: float | None = None) -> tuple[float, float]:
    """(eps0, delta0) whose k-fold advanced composition is exactly (epsilon, delta).

    delta0 defaults to delta/(2k) (paper 004 Alg. 1 line 2); the rest of delta
    goes to delta'.  eps0 is the root of advanced_composition(eps0) = epsilon,
    which is continuous and increasing in eps0, bracketed in [0, hi] (hi
    doubled from epsilon until it overshoots) and found with Brent's method.
    """
    check_epsilon_delta(epsilon, delta)
    _check(0.0, 0.0, k)
    delta0 = delta / (2 * k) if delta0 is None else delta0
    dp = delta_prime_for(delta0, k, delta)
    f = lambda e0: advanced_composition(e0, delta0, k, dp)[0] - epsilon
    hi = epsilon
    while f(hi) < 0:
        hi *= 2.0
    eps0 = brentq(f, 0.0, hi, xtol=1e-300, rtol=4 * np.finfo(float).eps, maxiter=500)
    return float(eps0), float(delta0)


def spent_by(ledger, delta_target: float) -> tuple[float, float]:
    """(eps, delta) a `PrivacyLedger` spends, composed the way the algorithms' privacy proofs do.

    (The ledger imports this module, not the other way round: composition is the lower layer.)

    Entries are grouped by data part (`part_of(name)`).  Within a part:
    BASIC/PARALLEL sum epsilons and deltas; ADVANCED_PARALLEL applies
    advanced composition to the part's k releases (all must carry the same
    (eps0, delta0); one release is charged as it is) with delta' chosen so
    that the part's delta plus that of the whole-data entries is
    delta_target.  A part of Gaussian (mu-GDP) releases only composes them
    in GDP and is charged the epsilon of their mu at that delta.  Whole-data
    (untagged) entries, (epsilon, delta) only, are added to every part.
    Across parts: PARALLEL and ADVANCED_PARALLEL take the maximum (disjoint
    data), BASIC sums.
    """
    if ledger.accountant == BASIC and ledger.gaussian_entries:
        raise ValueError("spent_by composes Gaussian (GDP) entries only within a tagged part; use ledger.total_mu()")
    if not ledger.entries:
        return 0.0, 0.0
    accountant = ledger.accountant
    if accountant not in (BASIC, PARALLEL, ADVANCED_PARALLEL):
        raise ValueError(f"unknown accountant {accountant!r}; expected one of {BASIC!r}, {PARALLEL!r}, "
                         f"{ADVANCED_PARALLEL!r}")
    basic = lambda entries: (sum(e.epsilon * e.count for e in entries), sum(e.delta * e.count for e in entries))
    if accountant == BASIC:
        return basic(ledger.entries)
    parts = defaultdict(list)
    for e in ledger.entries:
        parts[part_of(e.name)].append(e)
    whole = parts.pop("", [])
    if any(e.mu is not None for e in whole):
        raise ValueError("a Gaussian release on the whole data must be tagged with its part or charged in (eps, delta)")
    whole_eps, whole_delta = basic(whole)
    spent = [(0.0, 0.0)]
    for name, entries in parts.items():
        gaussian = [e.mu is not None for e in entries]
        if any(gaussian):
            if not all(gaussian):
                raise ValueError(f"part {name!r} mixes Gaussian (GDP) and (epsilon, delta) releases")
            part_delta = delta_target - whole_delta
            eps, dlt = epsilon_from_mu_delta(compose_mu([e.mu * math.sqrt(e.count) for e in entries]),
                                             part_delta), part_delta
        elif accountant == PARALLEL or sum(e.count for e in entries) == 1:
            eps, dlt = basic(entries)
        else:
            charges = {(e.epsilon, e.delta) for e in entries}
            if len(charges) != 1:
                raise ValueError(f"part {name!r} mixes per-release budgets {sorted(charges)}; advanced "
                                 "composition here needs identical releases")
            (eps0, delta0), = charges
            k = sum(e.count for e in entries)
            eps, dlt = advanced_composition(eps0, delta0, k, delta_prime_for(delta0, k, delta_target - whole_delta))
        spent.append((eps, dlt))
    return whole_eps + max(s[0] for s in spent), whole_delta + max(s[1] for s in spent)
