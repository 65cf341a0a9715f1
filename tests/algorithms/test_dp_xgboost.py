"""DP-XGBoost (dpbench/algorithms/dp_xgboost.py); its accounting on its own: tests/privacy/test_subsampling.py."""


import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from dpbench import algorithms
from dpbench.algorithms.dp_xgboost import (
    GAIN_SENSITIVITY,
    bin_index,
    feature_bounds,
    feature_map,
    split_utility,
    weighted_cuts,
)


def data(n=4000, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = (X[:, 0] + 0.5 * X[:, 1] ** 2 > 0.5).astype(int)
    return X, y


# --------------------------------------------------------------------------- accounting


def test_ledger_has_the_packages_split_of_each_round_and_composes_to_the_budget():
    X, y = data()
    est = algorithms.make("dp_xgboost", epsilon=0.8, n_rounds=4, max_depth=3, subsample=0.5, random_state=0).fit(X, y)
    ledger = est.privacy_ledger_
    eps_t = est.epsilon_per_round_
    assert len(ledger) == 4 * (1 + 3 + 1)  # per round: sketch, one entry per level, leaves
    assert ledger.round_epsilons() == pytest.approx([eps_t] * 4, rel=1e-12)
    sketch = [e for e in ledger.entries if e.name.endswith("sketch histograms")]
    levels = [e for e in ledger.entries if "splits level" in e.name]
    leaves = [e for e in ledger.entries if e.name.endswith("leaf values")]
    assert all(e.epsilon == pytest.approx(eps_t / 2) and e.sensitivity == X.shape[1] for e in sketch)
    assert all(e.epsilon == pytest.approx(eps_t / 12) and e.sensitivity == GAIN_SENSITIVITY for e in levels)
    assert all(e.epsilon == pytest.approx(eps_t / 4) and e.noise_scale == pytest.approx(2 / 51.1 / (eps_t / 4))
               for e in leaves)
    spent, delta = ledger.epsilon_delta(1e-6)
    assert spent == pytest.approx(0.8, rel=1e-9) and delta == 1e-6


# --------------------------------------------------------------------------- the sensitivities the noise assumes


def test_leaf_value_sensitivity_holds_for_every_leaf_size():
    """clip(-G / (max(N, N_min) + lam), +-g*) moves by <= 2 g* / (N_min + 1 + lam) when a record (|g| < g*) joins."""
    rng = np.random.default_rng(0)
    n_min, lam, gs = 50.0, 0.1, 1.0
    N = rng.integers(0, 300, size=200_000).astype(float)
    G = rng.uniform(-1, 1, size=N.size) * N
    G[: N.size // 4] = np.sign(G[: N.size // 4]) * N[: N.size // 4]  # extreme sums
    g = rng.choice([-1.0, 1.0, 0.0], size=N.size) * rng.uniform(0.9, 1.0, size=N.size)
    value = lambda G, N: np.clip(-G / (np.maximum(N, n_min) + lam), -gs, gs)
    change = np.abs(value(G + g, N + 1) - value(G, N))
    assert change.max() <= 2 * gs / (n_min + 1 + lam) + 1e-12


def test_split_utility_sensitivity_is_at_most_three_g_squared():
    """Adding a record (|g| < g* = 1) to one child changes the split utility by <= 3 g*^2 (Li et al. 2020).

    (The full gain, with the parent term, can move by more -- ~3.7 in this sample -- but the parent term is
    common to the node's candidates and leaves the exponential mechanism's draw unchanged.)"""
    rng = np.random.default_rng(1)
    lam = 0.1
    NL, NR = rng.integers(0, 3000, size=(2, 400_000)).astype(float)
    GL, GR = rng.uniform(-1, 1, size=(2, NL.size)) * (NL, NR)
    GL[::3], GR[1::3] = NL[::3], -NR[1::3]  # extreme sums
    g = rng.choice([-1.0, 1.0], size=NL.size) * rng.uniform(0.99, 1.0, size=NL.size)
    change = split_utility(GL + g, NL + 1, GR, NR, lam) - split_utility(GL, NL, GR, NR, lam)
    assert np.abs(change).max() <= GAIN_SENSITIVITY
    assert change.min() < -2.9 and change.max() > 0.9  # in [-3, 1] g*^2: the bound is nearly reached
    full = lambda GL, NL, GR, NR: split_utility(GL, NL, GR, NR, lam) - (GL + GR) ** 2 / (NL + NR + lam)
    assert np.abs(full(GL + g, NL + 1, GR, NR) - full(GL, NL, GR, NR)).max() > GAIN_SENSITIVITY


def test_weighted_cuts_are_quantiles_of_the_histogram():
    hist = np.zeros((2, 100))
    hist[0, :50] = 1.0  # mass on the first half: cuts there
    cuts = weighted_cuts(hist, 4)
    assert list(cuts[0]) == [12, 24, 37]
    assert len(cuts[1]) == 3 and cuts[1].max() < 99  # no mass: uniform cuts, never the last bin


# --------------------------------------------------------------------------- behaviour


def test_seeded_fits_are_reproducible_and_seeds_differ():
    X, y = data()
    fit = lambda seed: algorithms.make("dp_xgboost", epsilon=1.0, n_rounds=5, random_state=seed).fit(X, y)
    a, b, c = fit(3).decision_function(X), fit(3).decision_function(X), fit(4).decision_function(X)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_learns_at_large_epsilon_and_not_at_tiny_epsilon():
    """At eps = 200 the trees find the signal (AUROC of a non-private depth-6 boosted model is ~0.99); at
    eps = 1e-4 the scores are noise: over 8 seeds the AUROCs average 0.5 within 4 standard errors."""
    X, y = data(n=6000)
    Xt, yt = data(n=4000, seed=1)
    auc = lambda eps, seed: roc_auc_score(
        yt, algorithms.make("dp_xgboost", epsilon=eps, n_rounds=10, random_state=seed).fit(X, y).decision_function(Xt))
    assert min(auc(200.0, s) for s in range(3)) > 0.9
    small = np.array([auc(1e-4, s) for s in range(8)])
    assert abs(small.mean() - 0.5) < 4 * max(small.std(ddof=1), 0.01) / np.sqrt(len(small))


def test_labels_and_decision_function():
    X, y = data()
    labels = np.where(y == 1, "yes", "no")
    est = algorithms.make("dp_xgboost", epsilon=200.0, n_rounds=10, classes=["no", "yes"],
                          random_state=0).fit(X, labels)
    score = est.decision_function(X)
    np.testing.assert_array_equal(est.predict(X), np.where(score > 0, "yes", "no"))
    assert list(est.classes_) == ["no", "yes"]


def test_bad_parameters_are_named():
    X, y = data(n=100)
    with pytest.raises(ValueError, match="subsample"):
        algorithms.make("dp_xgboost", subsample=0.0).fit(X, y)
    with pytest.raises(ValueError, match="epsilon"):
        algorithms.make("dp_xgboost", epsilon=-1.0).fit(X, y)


def test_public_feature_bounds_and_map():
    low, high, nominal = feature_bounds(["nominal", "continuous"], 2, 1e5)
    assert list(low) == [0.0, -np.log1p(1e5)] and list(high) == [1.0, np.log1p(1e5)] and list(nominal) == [1, 0]
    x = np.array([[0.0, -3e6], [1.0, -2.0], [1.0, 0.0], [0.0, 5.0], [1.0, 2e5]])
    T = feature_map(x, nominal, 1e5)
    assert np.all(np.diff(T[:, 1]) >= 0)  # monotone (x sorted), clipped at +-log(1 + feature_bound)
    assert T[0, 1] == -np.log1p(1e5) and T[-1, 1] == np.log1p(1e5)
    B = bin_index(T, low, high, 1024)
    assert set(B[:, 0]) == {0, 1023}  # an indicator's two values fall in the two extreme bins
    with pytest.raises(ValueError, match="feature_types has 1 entries"):
        algorithms.make("dp_xgboost", feature_types=["nominal"]).fit(*data(n=50))
    with pytest.raises(ValueError, match="feature_types entries"):
        algorithms.make("dp_xgboost", feature_types=["ordinal"] * 4).fit(*data(n=50))
