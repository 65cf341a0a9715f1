"""The noise actually drawn equals the ledger, for every private algorithm (issue: one place draws and records).

A Generator subclass records every call to the distributions the mechanisms
draw privacy noise from (normal, laplace, gumbel) with its scale.  Each
ledger entry stands for `count` draws of its family at its noise scale (a
`gaussian_rounds` call draws `count` releases' noise at once: one per row); the
two multisets must be equal.  Any noise drawn outside `dpbench.privacy`
(unrecorded) or recorded without being drawn fails the test.
"""

import sys
from collections import Counter

import numpy as np
import pytest

from dpbench import algorithms

FAMILY = {"gaussian": "normal", "gaussian_classical": "normal", "gaussian_analytic": "normal",
          "laplace": "laplace", "stability_histogram": "laplace", "exponential": "gumbel"}
EXTERNAL = {"interpret_binning", "interpret_boosting", "interpret_dp_ebm"}  # noise drawn inside interpret's C++


class RecordingGenerator(np.random.Generator):
    """A numpy Generator that notes (family, scale) of each privacy-noise draw."""

    def __init__(self, seed):
        super().__init__(np.random.PCG64(seed))
        self.draws = []

    def normal(self, loc=0.0, scale=1.0, size=None):
        # gaussian_rounds draws the noise of many rounds (one release per row) in one call
        releases = size[0] if sys._getframe(1).f_code.co_name == "round_noise" else 1
        self.draws += [("normal", float(scale))] * releases
        return super().normal(loc, scale, size)

    def laplace(self, loc=0.0, scale=1.0, size=None):
        self.draws.append(("laplace", float(scale)))
        return super().laplace(loc, scale, size)

    def gumbel(self, loc=0.0, scale=1.0, size=None):
        self.draws.append(("gumbel", float(scale)))
        return super().gumbel(loc, scale, size)

    def standard_normal(self, *args, **kwargs):
        raise AssertionError("privacy noise must be drawn with an explicit scale by dpbench.privacy")


def data(task, seed=0, n=30_000, d=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) / np.sqrt(d)
    score = X @ np.array([0.5, -0.3, 0.2][:d]) + 0.1 * rng.normal(size=n)
    return X, (score > 0).astype(int) if task == "classification" else score


# enough rounds/models to run every branch, small enough to be quick
PARAMS = {"robgd": {"n_rounds": 3, "best_iterate": True}, "tukey": {"n_models": 300},
          "ambssgd": {"n_rounds": 3}, "dp_ebm": {"n_rounds": 20}, "dp_ebm_clf": {"n_rounds": 20},
          "dp_xgboost": {"n_rounds": 5}}


def rounded(scale):
    return float(f"{scale:.12g}")


@pytest.mark.parametrize("name", [n for n in algorithms.available() if algorithms.get_spec(n).private])
def test_noise_drawn_equals_ledger(name):
    spec = algorithms.get_spec(name)
    X, y = data(spec.task)
    statuses = []
    for seed in range(3):
        gen = RecordingGenerator(seed)
        est = algorithms.make(name, epsilon=4.0, delta=1e-6, random_state=gen, **PARAMS.get(name, {})).fit(X, y)
        statuses.append(getattr(est, "fit_status_", "ok"))
        ledger = est.privacy_ledger_
        assert len(ledger) > 0
        expected = Counter()
        for e in ledger.entries:
            if e.mechanism in EXTERNAL:
                continue
            assert e.mechanism in FAMILY, f"{name}: ledger mechanism {e.mechanism!r} has no known noise family"
            expected[(FAMILY[e.mechanism], rounded(e.noise_scale))] += e.count
        drawn = Counter((family, rounded(scale)) for family, scale in gen.draws)
        assert drawn == expected, f"{name} seed {seed}: drawn {dict(drawn)} != ledger {dict(expected)}"
        spent_eps, spent_delta = ledger.epsilon_delta(1e-6)
        assert spent_eps <= 4.0 * (1 + 1e-9) and spent_delta <= 1e-6 * (1 + 1e-9)
    assert "ok" in statuses, f"{name}: no fit ran to the end ({statuses}); the test would miss later releases"
