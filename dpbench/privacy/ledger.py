"""A ledger of every noisy release an algorithm makes.

Each entry says what was released, its sensitivity, the noise scale actually
drawn and the privacy it was charged.  Gaussian releases are charged in
mu-GDP and compose by Cor. II.4; mechanisms analysed only in (eps, delta)
(Laplace, exponential, PTR, histograms, libraries with their own accounting)
are charged in (eps, delta) and compose by the accountant the algorithm
names ('basic' or 'advanced').  An estimator's ledger is checked by tests
against the budget its user asked for.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace

from dpbench.privacy.accounting import compose_mu, epsilon_from_mu_delta
from dpbench.privacy.composition import ADVANCED_PARALLEL, PARALLEL, spent_by


@dataclass(frozen=True)
class LedgerEntry:
    """One noisy release (or `count` identical ones): what was released, by which mechanism, its sensitivity,
    the noise scale used and its charge (mu for a Gaussian release, else epsilon and delta)."""

    name: str  # the statistic released
    mechanism: str  # 'gaussian', 'laplace', 'exponential', ...
    sensitivity: float | None  # L2 for gaussian, L1 for laplace, score sensitivity for exp. mech.
    noise_scale: float | None  # gaussian std, laplace b, ...
    mu: float | None = None  # GDP charge (gaussian releases)
    epsilon: float | None = None  # (eps, delta) charge (everything else)
    delta: float | None = None
    count: int = 1  # identical releases recorded once (e.g. T rounds)


@dataclass
class PrivacyLedger:
    """Record of releases; composition says what was spent.

    accountant: how (eps, delta) entries compose -- 'basic' (sum) or the name
    of the composition the algorithm's proof uses.  When the ledger mixes GDP
    and (eps, delta) entries, the GDP part is converted at the requested delta
    and added by basic composition.

    group_size: the entries are charged for neighbours that differ in one
    *unit* the algorithm's proof is about (TukeyEM: one of its m models), and
    one record can change `group_size` units; `epsilon_delta` then applies
    group privacy, (k eps, delta sum_{i<k} e^{i eps}).

    Identical consecutive releases (the rounds of a loop) are kept as one
    entry with a count.  Only the mechanisms in `dpbench.privacy.mechanisms`
    (and the stability histogram) record entries: each draws its noise and
    writes its entry in the same call.
    """

    entries: list[LedgerEntry] = field(default_factory=list)
    accountant: str = "gdp"
    group_size: int = 1

    def _append(self, entry: LedgerEntry) -> None:
        same = lambda e: (e.name, e.mechanism, e.sensitivity, e.noise_scale, e.mu, e.epsilon, e.delta)
        if self.entries and same(self.entries[-1]) == same(entry):
            self.entries[-1] = replace(self.entries[-1], count=self.entries[-1].count + entry.count)
        else:
            self.entries.append(entry)

    def record_gaussian(self, name: str, sensitivity: float, noise_std: float, mu: float, count: int = 1) -> None:
        """Record a Gaussian release (noise std `noise_std`) charged `mu` in GDP, `count` times."""
        self._append(LedgerEntry(name, "gaussian", float(sensitivity), float(noise_std), mu=float(mu), count=count))

    def record_dp(
        self,
        name: str,
        mechanism: str,
        epsilon: float,
        delta: float = 0.0,
        sensitivity: float | None = None,
        noise_scale: float | None = None,
        count: int = 1,
    ) -> None:
        """Record a release of `mechanism` charged (epsilon, delta), `count` times."""
        self._append(LedgerEntry(name, mechanism, sensitivity, noise_scale, epsilon=float(epsilon),
                                 delta=float(delta), count=count))

    @property
    def gaussian_entries(self) -> list[LedgerEntry]:
        return [e for e in self.entries if e.mu is not None]

    @property
    def dp_entries(self) -> list[LedgerEntry]:
        return [e for e in self.entries if e.mu is None]

    def total_mu(self) -> float:
        """GDP composition of the Gaussian releases (Cor. II.4)."""
        if self.dp_entries:
            raise ValueError("ledger holds (epsilon, delta) releases; use epsilon_delta()")
        return self.group_size * compose_mu([e.mu * math.sqrt(e.count) for e in self.gaussian_entries])

    def epsilon_delta(self, delta: float) -> tuple[float, float]:
        """(epsilon, delta) actually spent, per record (group privacy applied when group_size > 1)."""
        eps, dlt = self._unit_epsilon_delta(delta)
        k = self.group_size
        if k == 1:
            return eps, dlt
        return k * eps, dlt * sum(math.exp(i * eps) for i in range(k))

    def _unit_epsilon_delta(self, delta: float) -> tuple[float, float]:
        """(epsilon, delta) spent per unit of the algorithm's proof.

        Pure-GDP ledgers: the epsilon of total_mu() at the requested delta.
        Ledgers whose algorithm composes disjoint parts in parallel and/or
        steps by advanced composition ('parallel', 'advanced+parallel'):
        `composition.spent_by`.  Otherwise: basic composition of the
        (eps, delta) entries.
        """
        if not self.entries:
            return 0.0, 0.0
        if self.accountant in (PARALLEL, ADVANCED_PARALLEL):
            return spent_by(self, delta)
        if not self.dp_entries:
            return epsilon_from_mu_delta(self.total_mu() / self.group_size, delta), delta
        eps = sum(e.epsilon * e.count for e in self.dp_entries)
        dlt = sum(e.delta * e.count for e in self.dp_entries)
        if self.gaussian_entries:
            gdp_mu = compose_mu([e.mu * math.sqrt(e.count) for e in self.gaussian_entries])
            eps += epsilon_from_mu_delta(gdp_mu, delta)
            dlt += delta
        return eps, dlt

    def to_records(self) -> list[dict]:
        """The entries as dicts (one per entry, its fields)."""
        return [asdict(e) for e in self.entries]

    def __len__(self) -> int:
        return len(self.entries)
