"""diagnose_dpxgb (issue 37 item 4): DP-XGBoost refitted with the dp-xgboost package's accounting."""

import numpy as np
import pandas as pd
import pytest

from dpbench import algorithms
from dpbench.analyses import diagnose_dpxgb as diag
from dpbench.privacy.subsampling import amplified_epsilon, per_round_epsilon


@pytest.mark.parametrize("eps, rounds, q", [(0.01, 1, 0.2), (1.0, 100, 0.5), (10.0, 1000, 0.8)])
def test_the_package_sums_the_amplified_epsilons(eps, rounds, q):
    eps_t = diag.package_epsilon(eps, 1e-6, rounds, q)
    assert rounds * amplified_epsilon(eps_t, q) == pytest.approx(eps, rel=1e-12)
    # PLD composition at delta gives each round at least as much (more the more rounds)
    assert per_round_epsilon(eps, 1e-6, rounds, q) >= eps_t * (1 - 1e-9)


def test_the_switch_reaches_the_fit_and_is_restored():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(400, 3)), rng.integers(0, 2, 400)
    make = lambda: algorithms.make("dp_xgboost", epsilon=1.0, delta=1e-6, n_rounds=50, subsample=0.5,  # noqa: E731
                                   classes=[0, 1], random_state=0)
    with diag.package_accounting():
        inside = make().fit(X, y)
    after = make().fit(X, y)
    assert inside.epsilon_per_round_ == pytest.approx(diag.package_epsilon(1.0, 1e-6, 50, 0.5))
    assert after.epsilon_per_round_ == pytest.approx(per_round_epsilon(1.0, 1e-6, 50, 0.5))
    assert after.epsilon_per_round_ > 1.5 * inside.epsilon_per_round_  # 1.7x at 50 rounds


def test_refits_replace_dp_xgboosts_f1_only():
    rows = pd.DataFrame({"run_id": ["a", "b", "c"], "algorithm": ["dp_xgboost", "dp_xgboost", "boosted_adassp_clf"],
                         "test_f1": [0.5, 0.6, 0.7]})
    out = diag.with_refits(rows, pd.DataFrame({"source_run_id": ["a"], "test_f1": [0.1]}))
    assert out["run_id"].tolist() == ["a", "c"] and out["test_f1"].tolist() == [0.1, 0.7]
