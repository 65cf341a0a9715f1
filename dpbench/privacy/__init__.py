"""Privacy accounting, mechanisms and the per-fit ledger."""

from dpbench.privacy.accounting import (
    check_epsilon_delta,
    compose_mu,
    delta_from_mu,
    epsilon_from_mu_delta,
    mu_from_epsilon_delta,
    split_mu,
)
from dpbench.privacy.ledger import LedgerEntry, PrivacyLedger
from dpbench.privacy.mechanisms import (
    exponential_mechanism,
    gaussian_mechanism,
    gaussian_mechanism_dp,
    gaussian_rounds,
    gaussian_std,
    gaussian_std_dp,
    laplace_mechanism,
    symmetric_gaussian_mechanism,
)

__all__ = [
    "LedgerEntry",
    "PrivacyLedger",
    "check_epsilon_delta",
    "compose_mu",
    "delta_from_mu",
    "epsilon_from_mu_delta",
    "exponential_mechanism",
    "gaussian_mechanism",
    "gaussian_mechanism_dp",
    "gaussian_rounds",
    "gaussian_std",
    "gaussian_std_dp",
    "laplace_mechanism",
    "mu_from_epsilon_delta",
    "split_mu",
    "symmetric_gaussian_mechanism",
]
