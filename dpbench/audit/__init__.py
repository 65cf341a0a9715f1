"""The empirical privacy audit (`python -m dpbench audit`): harness code, outside the library it audits.

`bounds` (the statistics), `designs` (the canary datasets), `run` (fitting through joblib, the table, the
power check), `settings` (how each algorithm is audited, by name); the public names are re-exported here.
"""

from dpbench.audit.bounds import (
    ALPHA,
    audit_outputs,
    choose_test,
    clopper_pearson_lower,
    clopper_pearson_upper,
    epsilon_lower_bound,
    mu_lower_bound,
)
from dpbench.audit.designs import CHEAP_DESIGNS, DESIGNS, N_FEATURES, N_ROWS, Design
from dpbench.audit.run import DEFAULT_DELTA, POWER_FACTOR, POWER_RUNS, check_request, fit_chunk, power_check, run_audit
from dpbench.audit.settings import SETTINGS, AuditSettings, audit_settings, register_audit

__all__ = ["ALPHA", "CHEAP_DESIGNS", "DEFAULT_DELTA", "DESIGNS", "N_FEATURES", "N_ROWS", "POWER_FACTOR", "POWER_RUNS",
           "SETTINGS", "AuditSettings", "Design", "audit_outputs", "audit_settings", "check_request", "choose_test",
           "clopper_pearson_lower", "clopper_pearson_upper", "epsilon_lower_bound", "fit_chunk", "mu_lower_bound",
           "power_check", "register_audit", "run_audit"]
