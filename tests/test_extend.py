"""dpbench.extend.register_algorithm: one call declares an algorithm in the library's registry and, by name, in
the harness (tuning space, audit settings, label); tuning, private selection, the audit and figures use them."""

import json

import numpy as np
import pytest

from dpbench import algorithms, results
from dpbench.algorithms import registry
from dpbench.algorithms.base import POSITIVE, PRIVACY, DPLinearRegressor
from dpbench.audit import SETTINGS, audit_settings, run_audit
from dpbench.extend import register_algorithm
from dpbench.plots.common import algorithm_label
from dpbench.plots.styles import LABELS
from dpbench.privacy import gaussian_mechanism
from dpbench.runner.sweep import run_sweep
from dpbench.tuning.spaces import SPACES, tuning_space

SPACE = {"x_bound": {"type": "float", "low": 0.1, "high": 10.0, "log": True}}


class NoisySum(DPLinearRegressor):
    """theta = (X^T clip(y) + Gaussian noise) / 100: one release of L2 sensitivity x_bound (rows clipped)."""

    clips_features = True
    _parameter_constraints = {**PRIVACY, "x_bound": POSITIVE}

    def __init__(self, epsilon=1.0, delta=1e-6, x_bound=1.0, random_state=None):
        self.epsilon, self.delta, self.x_bound, self.random_state = epsilon, delta, x_bound, random_state

    def _fit_theta(self, X, y, mu, rng, ledger):
        return gaussian_mechanism(X.T @ np.clip(y, -1, 1), self.x_bound, mu, rng, ledger, "X^T clip(y)") / 100


def _forget(name):
    for table in (registry._REGISTRY, SPACES, SETTINGS, LABELS):
        table.pop(name, None)


@pytest.fixture
def toy():
    yield register_algorithm(NoisySum, "toy_sum", label="Toy sum", tuning_space=SPACE,
                             audit={"params": {"x_bound": 0.5}}, description="a noisy sum (a test)")
    _forget("toy_sum")


def test_one_call_registers_everywhere(toy):
    spec = algorithms.get_spec("toy_sum")
    assert (spec.estimator, spec.task, spec.private) == (NoisySum, "regression", True)
    assert tuning_space("toy_sum") == SPACE and audit_settings("toy_sum").params == {"x_bound": 0.5}
    assert algorithm_label("toy_sum") == "Toy sum"
    table = run_audit(["toy_sum"], [1.0], ["clip_pull"], runs=20, n_jobs=1)
    assert table["verdict"].tolist() == ["ok"]


def test_tuned_and_selected_runs_search_the_registered_space(toy, tmp_path):
    exp = {"name": "toy", "algorithms": [{"name": "toy_sum", "modes": ["fixed", "tuned", "private_selection"]}],
           "datasets": [{"name": "synthetic", "task": "regression", "n_train": 500, "n_test": 100, "d": 3}],
           "epsilons": [1.0], "deltas": [1e-6], "seeds": [0], "split": "fixed",
           "tuning": {"n_trials": 2, "seeds": 1, "n_candidates": 2}}
    run_sweep(exp, {"n_jobs": 1, "backend": "sequential", "progress": False}, tmp_path)
    df = results.load(tmp_path)
    assert sorted(df["tuning_mode"]) == ["fixed", "private_selection", "tuned"] and (df["status"] == "ok").all()
    for text in df["tuned_params"].dropna():
        assert list(json.loads(text)) == ["x_bound"] and 0.1 <= json.loads(text)["x_bound"] <= 10.0


@pytest.mark.parametrize("kwargs, message", [
    ({"tuning_space": {"nope": SPACE["x_bound"]}}, r"names parameter\(s\) \['nope'\]"),
    ({"tuning_space": {"x_bound": {"type": "float", "low": 0, "high": 1, "log": True}}}, "log range needs low > 0"),
    ({"audit": {"param": {}}}, r"unknown audit setting\(s\) \['param'\]"),
    ({"label": ""}, "non-empty string"),
])
def test_bad_declarations_register_nothing(kwargs, message):
    try:
        with pytest.raises(ValueError, match=message):
            register_algorithm(NoisySum, "toy_bad", **kwargs)
        assert "toy_bad" not in algorithms.available() and "toy_bad" not in SPACES | SETTINGS | LABELS
    finally:
        _forget("toy_bad")


def test_a_name_is_registered_once(toy):
    with pytest.raises(ValueError, match="'toy_sum' is already registered"):
        register_algorithm(NoisySum, "toy_sum")
    with pytest.raises(ValueError, match="'adassp' is already registered"):
        register_algorithm(NoisySum, "adassp")
