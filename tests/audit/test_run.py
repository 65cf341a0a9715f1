"""The empirical privacy audit (dpbench/audit/run.py): its power against known bugs, the CLI, and every algorithm.

Its bounds: tests/audit/test_bounds.py; its canary designs: tests/audit/test_designs.py."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator, RegressorMixin

from dpbench import algorithms
from dpbench.__main__ import main
from dpbench.algorithms import registry
from dpbench.audit import (
    CHEAP_DESIGNS,
    DESIGNS,
    POWER_RUNS,
    SETTINGS,
    audit_settings,
    power_check,
    register_audit,
    run_audit,
)
from dpbench.privacy import PrivacyLedger, mu_from_epsilon_delta
from dpbench.privacy.mechanisms import weakened_noise

# ----------------------------------------------------------------------------- power: deliberately broken estimators


class _SumRelease(RegressorMixin, BaseEstimator):
    """theta = X^T clip(y) + Gaussian noise (rows clipped to x_bound: L2 sensitivity x_bound * y_bound), released
    `n_rounds` times and averaged; predict x^T theta.  Self-contained on purpose (only the ledger and accounting).

    bug 'none': each round gets mu / sqrt(T) (correct); 'noise_times_mu': std = sensitivity * mu instead of / mu;
    'no_sqrt_T': each round's noise is calibrated to the whole mu, yet the ledger claims mu / sqrt(T) a round.
    """

    def __init__(self, epsilon=1.0, delta=1e-6, x_bound=1.0, y_bound=1.0, n_rounds=1, bug="none", random_state=None):
        self.epsilon = epsilon
        self.delta = delta
        self.x_bound = x_bound
        self.y_bound = y_bound
        self.n_rounds = n_rounds
        self.bug = bug
        self.random_state = random_state

    def _clip(self, X):
        return X * np.minimum(1.0, self.x_bound / np.maximum(np.linalg.norm(X, axis=1), 1e-300))[:, None]

    def fit(self, X, y):
        rng = np.random.default_rng(self.random_state)
        mu = mu_from_epsilon_delta(self.epsilon, self.delta)
        sens, T = self.x_bound * self.y_bound, self.n_rounds
        mu_round = mu / math.sqrt(T)
        std = {"none": sens / mu_round, "noise_times_mu": sens * mu_round, "no_sqrt_T": sens / mu}[self.bug]
        self.privacy_ledger_ = PrivacyLedger()
        self.privacy_ledger_.record_gaussian("X^T clip(y)", sens, std, mu_round, count=T)
        s = self._clip(np.asarray(X, float)).T @ np.clip(y, -self.y_bound, self.y_bound)
        self.coef_ = np.mean([s + rng.normal(0.0, std, size=s.shape) for _ in range(T)], axis=0)
        return self

    def predict(self, X):
        return self._clip(np.asarray(X, float)) @ self.coef_


BROKEN = {"test_sum_ok": {"bug": "none", "n_rounds": 25},
          "test_sum_noise_times_mu": {"bug": "noise_times_mu"},
          "test_sum_no_sqrt_T": {"bug": "no_sqrt_T", "n_rounds": 25}}


@pytest.fixture
def broken_algorithms():
    for name, params in BROKEN.items():
        registry.register(registry.AlgorithmSpec(name, _SumRelease, "regression", True))
        register_audit(name, {"params": params})
    yield list(BROKEN)
    for name in BROKEN:
        registry._REGISTRY.pop(name, None)
        SETTINGS.pop(name, None)


def test_audit_flags_the_broken_estimators_and_passes_the_correct_one(broken_algorithms):
    table = run_audit(broken_algorithms, [1.0], ["clip_pull", "tiny_n"], runs=300, n_jobs=2).set_index(
        ["algorithm", "design"])
    print(table[["eps_lb", "mu", "mu_lb", "verdict"]])
    assert (table.loc["test_sum_ok", "verdict"] == "ok").all()
    for bad in ("test_sum_noise_times_mu", "test_sum_no_sqrt_T"):
        assert (table.loc[bad, "verdict"] == "violation").all()
    # noise multiplied by mu: mu_eff = 1 / mu (~4.2 at eps = 1), far beyond what 150 + 150 runs can certify
    assert (table.loc["test_sum_noise_times_mu", "eps_lb"] > 3).all()
    assert (table["failures"] == 0).all() and table["mu"].notna().all()


def test_audit_is_reproducible_and_independent_of_chunking(broken_algorithms):
    a = run_audit(["test_sum_no_sqrt_T"], [1.0], ["clip_pull"], runs=40, n_jobs=1, chunk=7)
    b = run_audit(["test_sum_no_sqrt_T"], [1.0], ["clip_pull"], runs=40, n_jobs=1, chunk=100)
    pd.testing.assert_frame_equal(a.drop(columns="seconds"), b.drop(columns="seconds"))


def test_runs_may_differ_by_algorithm_and_design(broken_algorithms):
    """runs as a function (algorithm, design) -> fits a side: each row is the audit of that row alone at its runs."""
    runs = {("test_sum_ok", "clip_pull"): 20, ("test_sum_ok", "tiny_n"): 30, ("test_sum_no_sqrt_T", "clip_pull"): 40,
            ("test_sum_no_sqrt_T", "tiny_n"): 50}
    table = run_audit(["test_sum_ok", "test_sum_no_sqrt_T"], [1.0], ["clip_pull", "tiny_n"],
                      runs=lambda a, d: runs[a, d], n_jobs=1).set_index(["algorithm", "design"])
    for (name, design), n in runs.items():
        alone = run_audit([name], [1.0], [design], runs=n, n_jobs=1).iloc[0]
        assert table.loc[(name, design), "runs"] == n
        pd.testing.assert_series_equal(table.loc[(name, design)].drop("seconds"), alone.drop(
            ["algorithm", "design", "seconds"]), check_names=False)
    with pytest.raises(ValueError, match="runs must be >= 10"):
        run_audit(["test_sum_ok"], [1.0], ["clip_pull"], runs=lambda a, d: 5, n_jobs=1)


def test_the_weakened_copy_is_the_same_in_workers_as_in_process():
    """run_audit(noise_factor=...) enters `weakened_noise` in each chunk's process: two workers give the in-process
    weakened audit row for row (so power_check may run its two sides at once), and the copy is not the algorithm."""
    args = (["adassp"], [1.0], ["clip_pull"])
    with weakened_noise(0.1):
        in_process = run_audit(*args, runs=40, n_jobs=1)
    workers = run_audit(*args, runs=40, n_jobs=2, chunk=10, noise_factor=0.1)
    pd.testing.assert_frame_equal(in_process.drop(columns="seconds"), workers.drop(columns="seconds"))
    plain = run_audit(*args, runs=40, n_jobs=1)
    assert (plain["eps_lb"] < workers["eps_lb"]).all() and (plain["mu_lb"] < workers["mu_lb"]).all()


# ----------------------------------------------------------------------------- CLI


def test_cli_help_runs_nothing(capsys, tmp_path):
    assert main(["audit", "--help"]) == 0
    assert "--ledger" in capsys.readouterr().out


@pytest.mark.parametrize("args, message", [
    (["--algorithms", "no_such_algorithm"], "unknown algorithm"),
    (["--algorithms", "ols"], "not private"),
    (["--epsilons", "0"], "epsilons must be"),
    (["--epsilons=-1,1"], "epsilons must be"),
    (["--epsilons", "abc"], "comma-separated numbers"),
    (["--runs", "5"], "runs must be >= 10"),
    (["--designs", "nope"], "unknown design"),
    (["--no-such-flag"], "unrecognized arguments"),
])
def test_cli_bad_input_is_a_one_line_error(capsys, tmp_path, args, message):
    assert main(["audit", "--out", str(tmp_path), *args]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert not any(tmp_path.iterdir())


def test_cli_writes_table_and_figure_and_exits_1_on_violation(capsys, tmp_path, broken_algorithms):
    code = main(["audit", "--algorithms", "test_sum_noise_times_mu,test_sum_ok", "--designs", "clip_pull",
                 "--runs", "60", "--epsilons", "1,10", "--n-jobs", "1", "--out", str(tmp_path)])
    assert code == 1
    table = pd.read_parquet(tmp_path / "audit.parquet")
    assert len(table) == 4 and {"eps_lb", "mu_lb", "verdict", "runs", "failures"} <= set(table.columns)
    assert (tmp_path / "audit.png").stat().st_size > 0
    assert "violation" in capsys.readouterr().out


# ----------------------------------------------------------------------------- every private algorithm


FAST_RUNS = 300  # fits a side of the fast audit below, on every (algorithm, design) but those `fast_runs` lowers
# Fewer fits where they see what a row is for (the suite's slowest test; issue 39), each number measured on every
# private algorithm the design applies to (seed 0; seeds 0-4 where a flagged copy was close).  A row bounds epsilon
# and counts failures (a fit that raises or returns NaN, a release).  A failure with probability p on one side shows
# among N fits of that side with probability 1 - (1 - p)^N: p = 0.03 w.p. 0.95 and p = 0.05 w.p. 0.994 at N = 100,
# p = 0.03 w.p. 0.99 at 150 (over both sides' 2N fits, p = 0.015 and 0.01 w.p. 0.95).  The failures the event designs
# were written for come on every fit of a side (DP-XGBoost's int histograms on all-zero bins, a batched path raising
# on no rows) or on about half (a selection candidate told another label set): test_events.py runs that old code at
# these numbers and it is flagged.  The bound's power: every copy with its noise x 0.1 (`power_check`'s weakening)
# that a row flags at 300 fits a side it still flags at the row's number.
EVENT_RUNS = 100
FEWER_RUNS = {  # design -> fits a side, on every algorithm
    "zero_record": EVENT_RUNS,  # noise x 0.1 flagged on no algorithm at 300; the old histograms: 5 of 5 seeds at 100
    "one_class": EVENT_RUNS,  # noise x 0.1 flagged on no classifier at 300
    "ptr_passes": EVENT_RUNS,  # TukeyEM's noise x 0.1 (and x 0.01) not flagged at 300 (eps_lb 0): here it runs the EM
    "batch_empty": 150,  # noise x 0.1 flagged on AdaSSP, BoostedAdaSSP (both tasks), DP-GD: 5 of 5 seeds at 300 and 150
    "selection_space": 150,  # noise x 0.1 not flagged at 300; the label-set override: 5 of 5 seeds at 150 (60: 1 of 5)
}
FAILURE_DESIGNS = ("empty", "tiny_n", "overflow", "zero_bins")
# algorithm -> the FAILURE_DESIGNS that flag no noise x 0.1 copy of it at 300 fits a side (seeds 0-2; the largest
# eps_lb 0.72 < 1): EVENT_RUNS there.  Not here, so 300: AdaSSP, SSP, BoostedAdaSSP (both tasks), DP-GD and
# DP-AMBSSGD, whose copies these designs flag (some only at 300: BoostedAdaSSPClassifier on empty, SSP on tiny_n;
# DP-AMBSSGD on tiny_n at seed 1, overflow at seed 2), and DP-ROBGD's overflow (4 of 5 seeds at 300, 1 of 5 at 150).
_NOT_FLAGGED = ("dp_ebm", "dp_ebm_clf", "dp_xgboost", "private_selection", "private_selection_clf", "tukey")
FAILURES_ONLY = {**{name: FAILURE_DESIGNS for name in _NOT_FLAGGED}, "robgd": ("empty", "tiny_n", "zero_bins")}
# 300 on the others: clip_pull, rare_category, rare_label, batch_clip_pull, branch_n, tukey_models (distributions: a
# flagged copy is lost at 150 or 100 on clip_pull, rare_label, batch_clip_pull) and selection_split (the exact votes:
# 5 of 5 seeds at 300, 3 of 5 at 150).  `power` is not run here: the test after this one audits each algorithm's power
# design unweakened at its power runs (>= 300 a side, from the same seeds) and asserts more (verdict 'ok', no failures).
FAST_DESIGNS = tuple(d for d in (*CHEAP_DESIGNS, "branch_n") if d != "power")


def fast_runs(algorithm: str, design: str) -> int:
    """Fits a side of (algorithm, design) in the fast audit (and in test_events.py's copies of old code)."""
    if design in FAILURES_ONLY.get(algorithm, ()):
        return EVENT_RUNS
    return FEWER_RUNS.get(design, FAST_RUNS)


def test_every_private_algorithm_passes_a_fast_audit():
    names = [n for n in algorithms.available() if algorithms.get_spec(n).private]
    table = run_audit(names, [1.0], list(FAST_DESIGNS), runs=fast_runs, n_jobs=2)
    print(table.drop(columns=["error", "test"]).to_string())
    assert set(table["algorithm"]) == set(names)
    assert not (table["verdict"] == "violation").any(), table[table["verdict"] == "violation"].to_string()
    # whether a fit raises or returns NaN is a release: no private fit may fail on any design (n = 0, one
    # class, a record at 1e200, empty selection parts included)
    assert (table["failures"] == 0).all(), table[table["failures"] > 0][["algorithm", "design", "error"]].to_string()


@pytest.mark.parametrize("name", [n for n in algorithms.available() if algorithms.get_spec(n).private])
def test_the_audit_catches_a_weakened_copy_of_every_private_algorithm(name):
    """Power: on the algorithm's `power` design, a copy with every noise scale x 0.1 (the ledger unchanged) is a
    violation at eps 1, so a release whose noise is too small (noise times mu, a missing sqrt(T) split, a
    halved sensitivity) cannot pass the audit unseen; and the algorithm itself, on the same design and runs, is
    not (the design is no false alarm)."""
    runs = audit_settings(name).power.get("runs", POWER_RUNS)  # one chunk a side: the two sides at once
    plain = run_audit([name], epsilons=(1.0,), designs=["power"], runs=runs, n_jobs=2, chunk=runs).iloc[0]
    assert plain["verdict"] == "ok" and plain["failures"] == 0, plain.to_dict()
    row = power_check(name, n_jobs=2)
    assert row["verdict"] == "violation", row


@pytest.mark.parametrize("jitter_seed", range(5))
def test_tukey_models_straddles_the_ptr_threshold(jitter_seed):
    """The premise of TukeyEM's power design: Lemma 3.6's distance is 27 on D and 26 on D' (threshold 26.24 at
    eps 1, delta 1e-6) whatever the public jitter, so only the check's Laplace noise decides between them."""
    import math

    from dpbench.algorithms.tukey import log_depth_volumes, ptr_distance, sorted_projections

    design = DESIGNS["tukey_models"](algorithms.get_spec("tukey"))
    m, eps, delta = design.params["n_models"], 1.0, 1e-6
    ks = []
    for X in (design.X, design.neighbour()[0]):
        S = sorted_projections(X, 1e-10, np.random.default_rng(jitter_seed))
        ks.append(ptr_distance(log_depth_volumes(S), math.ceil(m / 4), eps / 2, math.log(delta / 8) - eps / 2))
    assert ks == [27, 26]
    assert 26 < (math.log(1 / (2 * delta))) / (eps / 2) < 27
