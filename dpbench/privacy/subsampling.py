"""Poisson-subsampled pure-DP rounds composed by dp-accounting's PLD accountant (DP-XGBoost's accounting).

An algorithm whose every round is a pure epsilon_t-DP mechanism run on a
Poisson subsample (each record kept independently with probability q; the
rounds may be adaptive) spends, per round, the amplified

    epsilon_t' = log(1 + q (e^{epsilon_t} - 1))

(amplification by Poisson subsampling under add/remove neighbours: Li, Qardaji
& Su 2012, Thm 1; Balle, Barthe & Gaboardi 2018, Thm 8 -- the bound DP-XGBoost's
README quotes).  The rounds are composed by dp-accounting's privacy-loss
distribution (PLD) accountant: each round is represented by the dominating pair
of an (epsilon_t', 0)-DP mechanism (`from_privacy_parameters`), the PLDs are
composed and `get_epsilon_for_delta` gives the total.  This is the optimal
composition of pure-DP mechanisms (Kairouz, Oh & Viswanath 2015), evaluated
pessimistically by the library; a test checks it against the closed form.

The discretisation interval is epsilon_t' / `GRID` (times 1 + 1e-12, so that
the pessimistic rounding of the loss up to the grid is by 1e-12 only): the
composed epsilon is then a continuous function of epsilon_t and the budget
solve (`per_round_epsilon`, Brent in log epsilon_t) spends the requested
epsilon to 1e-9 relative.

Ledger: `SubsampledPureDPLedger` holds the (epsilon, 0) entries of each round,
named `round <t>: <what>` (`tag_round`; not a '/' part tag: the rounds' subsamples overlap, they are not
disjoint parts); within a round the entries compose by
basic composition (as DP-XGBoost's own analysis: sketch + splits + leaves),
releases on disjoint nodes being one entry (parallel composition).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy.optimize import brentq

from dpbench.privacy.accounting import check_epsilon_delta
from dpbench.privacy.ledger import PrivacyLedger

GRID = 100  # PLD points per round's privacy loss
BASIC_ABOVE = 300.0  # a round epsilon above this is composed by basic composition (a valid, looser bound)
ACCOUNTANT = "poisson_subsampled_pure_dp+pld"


def amplified_epsilon(epsilon: float, q: float) -> float:
    """Epsilon of an epsilon-DP mechanism run on a Poisson subsample with rate q (add/remove neighbours)."""
    if not 0 < q <= 1:
        raise ValueError(f"sampling probability must lie in (0, 1], got {q!r}")
    if epsilon > 30:  # log1p(q expm1(e)) = e + log(q + (1 - q) e^-e), without overflow
        return float(epsilon + math.log(q + (1 - q) * math.exp(-epsilon)))
    return float(math.log1p(q * math.expm1(epsilon)))


def _pld(eps_round: float, count: int):
    from dp_accounting.pld import privacy_loss_distribution as pld
    from dp_accounting.pld.common import DifferentialPrivacyParameters

    grid = eps_round / GRID * (1 + 1e-12)
    one = pld.from_privacy_parameters(DifferentialPrivacyParameters(eps_round, 0.0), value_discretization_interval=grid)
    return one.self_compose(count) if count > 1 else one


@lru_cache(maxsize=4096)
def composed_epsilon(rounds: tuple[tuple[float, int], ...], delta: float) -> float:
    """Epsilon at `delta` of the composition of `count` (eps, 0)-DP rounds for each (eps, count) in `rounds`.

    dp-accounting's PLD accountant (`PrivacyLossDistribution.compose`).
    """
    rounds = tuple((e, c) for e, c in rounds if e > 0 and c > 0)
    if not rounds:
        return 0.0
    if max(e for e, _ in rounds) > BASIC_ABOVE:  # no privacy to speak of; the PLD's exp(eps) overflows
        return float(sum(e * c for e, c in rounds))
    total = None
    for eps, count in rounds:
        part = _pld(eps, count)
        total = part if total is None else total.compose(part)
    return float(total.get_epsilon_for_delta(delta))


def exact_composed_epsilon(eps_round: float, count: int, delta: float) -> float:
    """Closed form of the same composition (for tests): the privacy loss of `count` (eps, 0)-DP rounds is
    eps (count - 2B), B ~ Binomial(count, 1 / (1 + e^eps)) (Kairouz, Oh & Viswanath 2015, Thm 3.3)."""
    from scipy import stats

    k = np.arange(count + 1)
    p = stats.binom.pmf(k, count, 1.0 / (1.0 + math.exp(eps_round)))
    loss = eps_round * (count - 2 * k)

    def excess(e):
        with np.errstate(over="ignore"):
            return float(np.sum(p * np.clip(-np.expm1(e - loss), 0, None))) - delta

    return 0.0 if excess(0.0) <= 0 else float(brentq(excess, 0.0, count * eps_round, xtol=1e-14, rtol=1e-14))


@lru_cache(maxsize=1024)
def per_round_epsilon(epsilon: float, delta: float, n_rounds: int, q: float) -> float:
    """The epsilon_t of each round such that n_rounds Poisson(q)-subsampled epsilon_t-DP rounds are (epsilon, delta)-DP.

    Brent's method on log epsilon_t (the composed epsilon increases with epsilon_t); the root is taken from
    below, so the fit never spends more than asked.
    """
    check_epsilon_delta(epsilon, delta)
    target = math.log(epsilon)

    def f(log_eps_t: float) -> float:
        spent = composed_epsilon(((amplified_epsilon(math.exp(log_eps_t), q), n_rounds),), delta)
        return (math.log(spent) if spent > 0 else -1e6) - target

    lo, hi = math.log(epsilon) - math.log(n_rounds) - 5.0, math.log(epsilon) + 1.0
    while f(lo) > 0:
        lo -= 5.0
    while f(hi) < 0:
        hi += 1.0
    root = brentq(f, lo, hi, xtol=1e-13, rtol=1e-13, maxiter=500)
    for _ in range(60):  # step down until the spent epsilon is <= the budget (rounding of the last evaluation)
        if f(root) <= 1e-12:
            break
        root -= 1e-12 * max(1.0, abs(root))
    return math.exp(root)


def tag_round(t: int, what: str) -> str:
    return f"round {t}: {what}"


@dataclass
class SubsampledPureDPLedger(PrivacyLedger):
    """A ledger of rounds of pure-DP releases, each round on a Poisson subsample with `sampling_probability`.

    epsilon_delta(delta): per round, basic composition of its entries' epsilons; each amplified by
    subsampling; the rounds composed by dp-accounting's PLD accountant at `delta`.  Entries must be pure
    (delta 0) and named `round <t>: ...`.
    """

    accountant: str = ACCOUNTANT
    sampling_probability: float = 1.0

    def round_epsilons(self) -> list[float]:
        per_round = defaultdict(float)
        for e in self.entries:
            if e.mu is not None or e.delta:
                raise ValueError(f"{ACCOUNTANT} ledgers hold pure epsilon-DP entries only, got {e}")
            if not e.name.startswith("round ") or ": " not in e.name:
                raise ValueError(f"ledger entry {e.name!r} is not tagged with its round (tag_round)")
            per_round[e.name.split(": ", 1)[0]] += e.epsilon * e.count
        return list(per_round.values())

    def _unit_epsilon_delta(self, delta: float) -> tuple[float, float]:
        if not self.entries:
            return 0.0, 0.0
        q = self.sampling_probability
        counts = Counter(round(amplified_epsilon(e, q), 15) for e in self.round_epsilons())
        return composed_epsilon(tuple(sorted(counts.items())), delta), delta
