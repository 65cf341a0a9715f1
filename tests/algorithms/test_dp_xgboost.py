"""DP-XGBoost (dpbench/algorithms/dp_xgboost.py); its accounting on its own: tests/privacy/test_subsampling.py."""


import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from dpbench import algorithms
from dpbench.algorithms.base import record_generator
from dpbench.algorithms.dp_xgboost import (
    BASE_SCORE,
    GAIN_SENSITIVITY,
    DPXGBoostClassifier,
    DPXGBoostTrees,
    bin_index,
    feature_bounds,
    feature_map,
    split_utility,
    weighted_cuts,
)
from dpbench.data import load_dataset
from dpbench.privacy.mechanisms import exponential_mechanism_rows, laplace_mechanism
from dpbench.privacy.subsampling import SubsampledPureDPLedger, per_round_epsilon, tag_round


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
    hist = np.zeros((3, 100))
    hist[0, :50] = 1.0  # mass on the first half: cuts there
    hist[2, 7] = 1.0  # mass in one bin: one cut
    cut_bins, valid = weighted_cuts(hist, 4)
    assert list(cut_bins[0]) == [12, 24, 37] and valid[0].all()
    assert valid[1].all() and cut_bins[1].max() < 99  # no mass: uniform cuts, never the last bin
    assert list(cut_bins[2]) == [7, 99, 99] and list(valid[2]) == [True, False, False]  # padded


def weighted_cuts_per_feature(hist, n_split_candidates):
    """weighted_cuts as it was, one feature at a time."""
    max_bins = hist.shape[1]
    cum = np.cumsum(hist, axis=1)
    out = []
    for f in range(hist.shape[0]):
        total = cum[f, -1]
        if total <= 0:
            cuts = np.linspace(0, max_bins - 1, n_split_candidates + 1)[1:-1].astype(int)
        else:
            levels = total * np.arange(1, n_split_candidates) / n_split_candidates
            cuts = np.searchsorted(cum[f], levels, side="left")
        out.append(np.unique(cuts[cuts < max_bins - 1]))
    return out


@pytest.mark.parametrize("max_bins, n_split_candidates", [(1024, 64), (64, 8), (8, 64), (2, 4)])
def test_weighted_cuts_equal_the_per_feature_loop(max_bins, n_split_candidates):
    """On noisy histograms (Laplace noise, negatives set to 0 as in the fit; some rows all 0, some spiky)."""
    rng = np.random.default_rng(max_bins)
    hist = np.maximum(rng.laplace(0, 3, size=(40, max_bins)) + rng.poisson(2, size=(40, max_bins)) * (
        rng.random((40, max_bins)) < 0.1), 0.0)
    hist[:3] = 0.0
    hist[3:6] = np.where(rng.random((3, max_bins)) < 0.02, 50.0, 0.0)
    cut_bins, valid = weighted_cuts(hist, n_split_candidates)
    ref = weighted_cuts_per_feature(hist, n_split_candidates)
    assert cut_bins.shape == valid.shape == (40, max(len(c) for c in ref))
    for f, c in enumerate(ref):
        np.testing.assert_array_equal(cut_bins[f][valid[f]], c)
        assert valid[f, :len(c)].all() and not valid[f, len(c):].any() and (cut_bins[f, len(c):] == max_bins - 1).all()


# --------------------------------------------------------------------------- the histograms of before


class DenseHistogramsReference(DPXGBoostClassifier):
    """The estimator as it was before the histograms skipped each feature's zero bin: every histogram one
    bincount over all n x d (record, feature) entries.  The reference the package's fit must reproduce."""

    def _fit_model(self, X, y01, mu, rng, ledger):
        ledger = self.privacy_ledger_ = SubsampledPureDPLedger(sampling_probability=float(self.subsample))
        self.epsilon_per_round_ = eps_t = per_round_epsilon(float(self.epsilon), float(self.delta),
                                                            int(self.n_rounds), float(self.subsample))
        self.bounds_ = feature_bounds(self.feature_types, X.shape[1], self.feature_bound)
        B = self._bins(X)
        self.trees_ = trees = DPXGBoostTrees(self.max_depth)
        s = np.full(X.shape[0], BASE_SCORE)
        for t in range(self.n_rounds):
            g = s - y01
            keep = (record_generator(rng).random(X.shape[0]) < self.subsample) & (np.abs(g) < self.grad_bound)
            self._grow_tree(B[keep], g[keep], eps_t, rng, ledger, t)
            s += trees.leaves[-1][trees.leaf_of(B, t)]
        return self

    def _grow_tree(self, B, g, eps_t, rng, ledger, t):
        n, d = B.shape
        nb, depth, lam, gs = self.max_bins, self.max_depth, float(self.reg_lambda), float(self.grad_bound)
        hist = np.bincount((B.astype(np.int64) + np.arange(d) * nb).ravel(), minlength=d * nb).reshape(d, nb)
        noisy = laplace_mechanism(hist, float(d), eps_t / 2, rng, ledger, tag_round(t, "sketch histograms"))
        cuts = weighted_cuts_per_feature(np.maximum(noisy, 0.0), self.n_split_candidates)
        k = 1 + max(len(c) for c in cuts)
        lut = np.zeros((d, nb), dtype=np.int64)
        valid = np.zeros((d, k - 1), dtype=bool)
        cut_bins = np.full((d, k - 1), nb - 1, dtype=np.int64)
        for f, c in enumerate(cuts):
            lut[f] = np.searchsorted(c, np.arange(nb), side="left")
            valid[f, :len(c)] = True
            cut_bins[f, :len(c)] = c
        Q = lut[np.arange(d), B] if n else np.zeros((0, d), dtype=np.int64)
        node = np.zeros(n, dtype=np.int64)
        eps_level, sens = eps_t / (4 * depth), GAIN_SENSITIVITY * gs**2
        feats, cut_list = [], []
        for level in range(depth):
            m = 2**level
            keys = ((node[:, None] * d + np.arange(d)) * k + Q).ravel()
            G = np.bincount(keys, np.repeat(g, d), minlength=m * d * k).reshape(m, d, k)
            N = np.bincount(keys, minlength=m * d * k).reshape(m, d, k).astype(float)
            GL, NL = np.cumsum(G, axis=2)[:, :, :-1], np.cumsum(N, axis=2)[:, :, :-1]
            Gt, Nt = G[:, :1].sum(axis=2)[:, :, None], N[:, :1].sum(axis=2)[:, :, None]
            gain = split_utility(GL, NL, Gt - GL, Nt - NL, lam)
            log_w = np.where(valid[None], eps_level * gain / (2 * sens), -np.inf).reshape(m, -1)
            choice = exponential_mechanism_rows(log_w, eps_level, rng, ledger, tag_round(t, f"splits level {level}"),
                                                sensitivity=sens)
            f_sel, j_sel = np.divmod(choice, k - 1)
            feats.append(f_sel)
            cut_list.append(cut_bins[f_sel, j_sel])
            if n:
                node = 2 * node + (B[np.arange(n), f_sel[node]] > cut_list[-1][node])
        leaves = 2**depth
        G = np.bincount(node, g, minlength=leaves)
        N = np.bincount(node, minlength=leaves).astype(float)
        value = np.clip(-G / (np.maximum(N, self.min_child_weight) + lam), -gs, gs)
        leaf_sens = 2 * gs / (self.min_child_weight + 1 + lam)
        value = laplace_mechanism(value, leaf_sens, eps_t / 4, rng, ledger, tag_round(t, "leaf values"))
        self.trees_.features.append(feats)
        self.trees_.cuts.append(cut_list)
        self.trees_.leaves.append(self.learning_rate * np.asarray(value, dtype=float))


def one_hot_data(n=3000, seed=0):
    """Shaped like adult: one-hot indicators, most 0, some mostly 1 (their zero bin is the rare one)."""
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.01, 0.3, size=40)
    p[:4] = 0.95
    X = (rng.random((n, p.size)) < p).astype(float)
    y = (X[:, 4] + X[:, 5] - X[:, 0] + rng.normal(0, 0.5, size=n) > 0).astype(int)
    return X, y, ["nominal"] * p.size


def mixed_data(n=3000, seed=1):
    """Continuous features (some with many exact zeros, negatives, values beyond feature_bound) and indicators."""
    X, y = data(n, 4, seed)
    rng = np.random.default_rng(seed)
    X[rng.random(n) < 0.6, 1] = 0.0
    X[:, 2] *= 1e6
    ind = (rng.random((n, 3)) < [0.1, 0.5, 0.9]).astype(float)
    return np.hstack([X, ind]), y, ["continuous"] * 4 + ["nominal"] * 3


def assert_fits_equal(X, y, Xt, **params):
    """Same seed, same trees, leaf values, scores and ledger as the dense histograms of before, bit for bit."""
    new = DPXGBoostClassifier(random_state=3, **params).fit(X, y)
    old = DenseHistogramsReference(random_state=3, **params).fit(X, y)
    model = lambda est: [*(f for tree in est.trees_.features for f in tree), *(c for tree in est.trees_.cuts
                                                                              for c in tree), *est.trees_.leaves]
    assert len(new.trees_.leaves) == len(old.trees_.leaves) == params["n_rounds"]
    for a, b in zip(model(new), model(old), strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(new.decision_function(Xt), old.decision_function(Xt))
    assert new.privacy_ledger_.to_records() == old.privacy_ledger_.to_records()


@pytest.mark.parametrize("case", ["one_hot", "mixed", "mixed_untyped", "one_record", "empty"])
def test_fits_equal_the_dense_histograms_of_before(case):
    """The histogram cells off the zero bin are summed in the same order as before and the sketch counts are
    exact; only the gradient sums' zero cells differ, by rounding, too little to move an exponential-mechanism
    draw.  One-hot data (sparse, some indicators mostly 1), continuous data with exact zeros, values beyond
    the bound and indicators, typed and untyped, one record and none."""
    X, y, types = one_hot_data() if case == "one_hot" else mixed_data()
    params = {"epsilon": 5.0, "n_rounds": 4, "max_depth": 4, "subsample": 0.7, "feature_types": types}
    if case == "mixed_untyped":
        params.update(feature_types=None, max_bins=64, n_split_candidates=8, epsilon=50.0)
    Xt = X[:500]
    if case in ("one_record", "empty"):
        rows = 1 if case == "one_record" else 0
        X, y = X[:rows], y[:rows]
    assert_fits_equal(X, y, Xt, **params)


def test_adult_fits_equal_the_dense_histograms_of_before(mirror):
    data = load_dataset({"name": "adult"}, split_seed=42, data_dir=mirror)
    assert_fits_equal(data.X_train, data.y_train, data.X_test, epsilon=10.0, n_rounds=2,
                      feature_types=list(data.feature_types))


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
