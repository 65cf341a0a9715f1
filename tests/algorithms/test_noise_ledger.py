"""The noise actually drawn equals the ledger, for every private algorithm (issue: one place draws and records).

A Generator subclass (`dpbench.checks.RecordingGenerator`, as `python -m dpbench check` uses) records every
call to the distributions the mechanisms draw privacy noise from (normal, laplace; the uniforms of
`gumbel_noise`) with its scale.  Each ledger entry stands for `count` draws of its family at its noise scale
(a `gaussian_rounds` call draws `count` releases' noise at once: one per row); the two multisets must be equal.
Any noise drawn outside `dpbench.privacy` (unrecorded) or recorded without being drawn fails the test.  Sweeps
fit through `fit_batch`: the algorithms with a batched path are checked through it too.

DP-EBM's noise is drawn by interpret's native generator (binning and boosting):
each draw's scale must be its ledger entry's, and the values drawn, and the
noise the binning histograms actually got, must have that scale (chi-square).
"""

from collections import Counter

import numpy as np
import pytest
from scipy import stats

from dpbench import algorithms
from dpbench.algorithms._interpret_patch import BINNING_RELEASE, observed_noise
from dpbench.checks import EXTERNAL, RecordingGenerator, batch_params, ledger_draws, rounded
from dpbench.checks import ledger_data as data
from dpbench.privacy.mechanisms import recorded_releases
from tests.algorithms.test_release_sensitivity import BATCHED

# enough rounds/models to run every branch, small enough to be quick
PARAMS = {"robgd": {"n_rounds": 3, "best_iterate": True}, "tukey": {"n_models": 300},
          "ambssgd": {"n_rounds": 3}, "dp_ebm": {"n_rounds": 20}, "dp_ebm_clf": {"n_rounds": 20},
          "dp_xgboost": {"n_rounds": 5}}


def assert_gaussian_scale(noise, scale, where):
    """sum (noise / scale)^2 ~ chi2(N): two-sided p >= 1e-6 (at half the scale p is ~1e-30 here)."""
    noise = np.concatenate(noise)
    t = float(np.sum((noise / scale) ** 2))
    p = min(stats.chi2.cdf(t, noise.size), stats.chi2.sf(t, noise.size))
    assert p >= 1e-6, f"{where}: {noise.size} draws have std {np.sqrt(t / noise.size) * scale:.4g}, ledger {scale:.4g}"


def check_interpret_noise(est, draws, releases, where):
    """interpret's draws against the ledger: one per feature's histogram, then one per boosting step (n_rounds
    cycles over the d features), each at its entry's noise scale exactly, and the values at that scale."""
    entries = {e.mechanism: e for e in est.privacy_ledger_.entries if e.mechanism in EXTERNAL}
    if not entries:
        assert not draws, f"{where}: interpret drew noise the ledger does not hold"
        return
    binning, boosting = entries["interpret_binning"], entries["interpret_boosting"]
    d = est.n_features_in_
    scales = [binning.noise_scale] * d + [boosting.noise_scale] * (est.n_rounds * d)
    assert [rounded(s) for s, _ in draws] == [rounded(s) for s in scales], f"{where}: interpret's draws' scales"
    added = [r.output - r.value for r in releases if r.name == BINNING_RELEASE]  # the noise each histogram got
    assert len(added) == d
    for noise, entry in (([v for _, v in draws[:d]], binning), ([v for _, v in draws[d:]], boosting),
                         (added, binning)):
        assert_gaussian_scale(noise, entry.noise_scale, f"{where} {entry.mechanism}")


@pytest.mark.parametrize("name", [n for n in algorithms.available() if algorithms.get_spec(n).private])
def test_noise_drawn_equals_ledger(name):
    spec = algorithms.get_spec(name)
    X, y = data(spec.task)
    statuses = []
    for seed in range(3):
        gen = RecordingGenerator(seed)
        est = algorithms.make(name, epsilon=4.0, delta=1e-6, random_state=gen, **PARAMS.get(name, {}))
        with observed_noise() as native_draws, recorded_releases() as releases:
            est.fit(X, y)
        statuses.append(getattr(est, "fit_status_", "ok"))
        ledger = est.privacy_ledger_
        assert len(ledger) > 0
        drawn = Counter((family, rounded(scale)) for family, scale in gen.draws)
        expected = ledger_draws(ledger)
        assert drawn == expected, f"{name} seed {seed}: drawn {dict(drawn)} != ledger {dict(expected)}"
        check_interpret_noise(est, native_draws, releases, f"{name} seed {seed}")
        spent_eps, spent_delta = ledger.epsilon_delta(1e-6)
        assert spent_eps <= 4.0 * (1 + 1e-9) and spent_delta <= 1e-6 * (1 + 1e-9)
    assert "ok" in statuses, f"{name}: no fit ran to the end ({statuses}); the test would miss later releases"


@pytest.mark.parametrize("name", BATCHED)
def test_noise_drawn_in_fit_batch_equals_ledger(name):
    """Each run of one `fit_batch` (clip bounds and rounds mixed, one far row) draws exactly its own ledger."""
    spec = algorithms.get_spec(name)
    X, y = data(spec.task)
    X[0] *= 20
    runs = batch_params(name)
    gens = [RecordingGenerator(seed) for seed in range(len(runs))]
    ests = [algorithms.make(name, epsilon=4.0, delta=1e-6, random_state=gen, **params)
            for gen, params in zip(gens, runs, strict=True)]
    type(ests[0]).fit_batch(ests, X, y)
    for r, (est, gen) in enumerate(zip(ests, gens, strict=True)):
        drawn = Counter((family, rounded(scale)) for family, scale in gen.draws)
        expected = ledger_draws(est.privacy_ledger_)
        assert drawn == expected, f"{name} run {r}: drawn {dict(drawn)} != ledger {dict(expected)}"
        spent_eps, spent_delta = est.privacy_ledger_.epsilon_delta(1e-6)
        assert spent_eps <= 4.0 * (1 + 1e-9) and spent_delta <= 1e-6 * (1 + 1e-9)
