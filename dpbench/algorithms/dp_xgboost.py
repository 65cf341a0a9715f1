"""DP-XGBoost (Grislain & Gonzalvez 2021, arXiv:2110.12770): the mechanism of Sarus' fork of XGBoost, in numpy.

Why in-repo and not the package: `dp-xgboost` 0.2.10 (the package paper 001 ran) is a source distribution
that takes minutes to build, whose Python layer fails under numpy 2, and whose noise is seeded from the clock
(`seed = time(0)` in its updater), so no run is reproducible; its ledger would have to be trusted, not
tested.  This module follows its updater `grow_dp_histmaker` (`src/tree/updater_histmaker.cc`,
`GlobalDPHistmaker`; mechanisms in `include/xgboost/mechanisms.h`; gradient filtering bound set in
`src/gbm/gbtree.cc`) and the paper's Sec. 4, draws every noise through `dpbench.privacy` and is checked against
the package (`scripts/dp_xgboost_crosscheck.py`).

The model (objective `reg:squarederror` on labels y in {0, 1}, as the package's classification example):
score s = base_score + sum of trees, base_score = 0.5; a round fits one regression tree to the gradients
g = s - y (hessian 1).  Each round, on a Poisson subsample (each record kept with probability `subsample`,
XGBoost's row subsampling), with per-round budget eps_t split as the package splits `dp_epsilon_per_tree`:

1. Gradient data filtering (Li et al. 2020, GDF): only records with |g| < grad_bound (g* = 1, the package's
   value for this objective) enter the round.
2. Sketch, eps_t / 2: for each of the d features, the hessian (here: count) histogram of the filtered records
   over `max_bins` = 1024 equal bins of the feature's public bounds, plus Laplace noise; one record moves one
   bin of each histogram by 1 (L1 sensitivity d for the d histograms, i.e. eps_t / (2 d) per feature, as the
   package).  Negative counts are set to 0 and `n_split_candidates` weighted quantiles of each noisy histogram are
   the candidate cuts (post-processing; the package feeds the noisy histogram to XGBoost's quantile sketch,
   whose summary holds ~2 / sketch_eps = 66 points).
3. Splits, eps_t / 4: each of the `max_depth` levels selects, for every node of the level, a (feature, cut)
   with the exponential mechanism on the gain G_L^2/(N_L + lambda) + G_R^2/(N_R + lambda) - G^2/(N + lambda)
   (the parent term, common to a node's candidates, does not change the draw; the children's part has
   sensitivity 3 g*^2: Li et al. 2020, the package's default), eps_t / (4 max_depth) per level: the nodes of
   a level hold disjoint records (parallel composition).
4. Leaves, eps_t / 4: the leaf value clip(-G / (max(N, min_child_weight) + lambda), +-g*) plus Laplace noise of
   sensitivity 2 g* / (min_child_weight + 1 + lambda) (the package's calibration), times the learning rate.

What dpbench changes, so that each release is private under add/remove with n not public (the package's
argument assumes what the data decide):
- The package's split candidates are only those with both children's hessian >= min_child_weight, and a node
  is split only when the selected gain is > 0: the candidate set and the tree shape depend on the data
  unaccounted (a split possible on D' but not on D has probability 0 under D).  Here every (feature, cut) is
  a candidate and every node is split down to max_depth (a fixed tree shape); min_child_weight instead shrinks
  the leaf value's denominator to max(N, min_child_weight), which gives the package's leaf sensitivity for
  every N (with N_min = min_child_weight: |G/(N + lam) - (G + g)/(N + 1 + lam)| <= 2 g* / (N + 1 + lam) for
  N >= N_min, and g* / (N_min + lam) below it).
- Feature bounds are public, never the data's min / max (the package's examples take them from the training
  data): a one-hot indicator ('nominal' in `feature_types`, the schema's types, which the runner passes) is
  binned over [0, 1]; any other feature x enters as t = sign(x) log(1 + |x|), clipped to +-log(1 + feature_bound).
  Trees are invariant to this monotone map (only the 1024-bin grid of the sketch sees it), and it lets one
  bound serve columns of very different scales (counts up to 1e5 in the paper's datasets).
- The noise is drawn from the estimator's seeded Generator (the package reads the clock).
- Gumbel-max for the exponential mechanism (the package's "racing" sampler draws the same distribution).

Accounting: each round is eps_t-DP on its subsample (basic composition inside, as the package); Poisson
subsampling amplifies it to log(1 + q (e^eps_t - 1)) and the n_rounds rounds are composed with dp-accounting's
PLD accountant at delta (`dpbench.privacy.subsampling`); eps_t is solved so that the fit spends exactly
(epsilon, delta).  (The package's README instead sums the amplified epsilons, pure DP.)

Fixed settings: n_rounds 100, subsample 0.8 (paper 001: tuned over {0.2, 0.5, 0.8}, 0.8 best), max_depth 6,
learning_rate 0.3 (XGBoost's default and the DP-XGBoost paper's), reg_lambda 0.1 and min_child_weight 50
(DP-XGBoost paper Sec. 5 for datasets below 1e5 rows), max_bins 1024 (the package), n_split_candidates 64
(XGBoost's sketch_eps 0.03), grad_bound 1, feature_bound 1e5.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval

from dpbench.algorithms.base import CLASSES, COUNT, POSITIVE, PRIVACY, PUBLIC, RELEASE, DPClassifier, record_generator
from dpbench.algorithms.registry import algorithm
from dpbench.privacy.mechanisms import exponential_mechanism_rows, laplace_mechanism
from dpbench.privacy.subsampling import SubsampledPureDPLedger, per_round_epsilon, tag_round

BASE_SCORE = 0.5
FEATURE_TYPES = ("continuous", "nominal")
GAIN_SENSITIVITY = 3.0  # x g*^2 (Li et al. 2020; the package's exponentialMech default)


def feature_bounds(feature_types, d: int, feature_bound: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(low, high, nominal) per feature, in the mapped space: [0, 1] for a one-hot indicator ('nominal', the
    schema's type, passed by the runner), +-log(1 + feature_bound) otherwise.  Public: the schema and feature_bound."""
    types = ["continuous"] * d if feature_types is None else list(feature_types)
    if len(types) != d:
        raise ValueError(f"feature_types has {len(types)} entries but X has {d} features")
    bad = sorted({t for t in types if t not in FEATURE_TYPES}, key=str)
    if bad:
        raise ValueError(f"feature_types entries must be one of {FEATURE_TYPES}, got {bad}")
    nominal = np.array([t == "nominal" for t in types], dtype=bool)
    b = float(np.log1p(feature_bound))
    return np.where(nominal, 0.0, -b), np.where(nominal, 1.0, b), nominal


def feature_map(X: np.ndarray, nominal: np.ndarray, feature_bound: float) -> np.ndarray:
    """An indicator clipped to [0, 1]; any other x as t = sign(x) log(1 + |x|) clipped to +-log(1 + feature_bound).

    Monotone per feature and data-independent (trees split the same data the same way before and after)."""
    b = np.log1p(feature_bound)
    return np.where(nominal, np.clip(X, 0.0, 1.0), np.clip(np.sign(X) * np.log1p(np.abs(X)), -b, b))


def bin_index(T: np.ndarray, low: np.ndarray, high: np.ndarray, max_bins: int) -> np.ndarray:
    """Bin of each mapped value on the max_bins equal bins of its feature's [low, high]."""
    idx = np.floor((T - low) / (high - low) * max_bins)
    return np.clip(idx, 0, max_bins - 1).astype(np.int16 if max_bins <= 32767 else np.int32)


def split_utility(GL, NL, GR, NR, lam):
    """The children's part of XGBoost's gain, G_L^2/(N_L + lam) + G_R^2/(N_R + lam).

    The gain's parent term -G^2/(N + lam) is the same for every candidate of a node, so the exponential
    mechanism draws the same split with or without it; without it, adding or removing a record changes one
    child's term, by at most 3 g*^2 (in [-3, 1] g*^2; Li et al. 2020) -- the sensitivity charged.
    """
    return GL**2 / (NL + lam) + GR**2 / (NR + lam)


def weighted_cuts(hist: np.ndarray, n_split_candidates: int) -> tuple[np.ndarray, np.ndarray]:
    """Per feature, the bins (sorted, unique, < max_bins - 1) where the noisy cumulative weight crosses k/K.

    A cut at bin c sends bins <= c left.  Post-processing of the noisy histogram.  Returned as a (d, width)
    array, each feature's cuts first and padded with max_bins - 1 to the most cuts any feature has, and
    the mask of its cuts.
    """
    d, max_bins = hist.shape
    cum = np.cumsum(hist, axis=1)
    total = cum[:, -1:]
    levels = total * np.arange(1, n_split_candidates) / n_split_candidates
    cuts = np.array([np.searchsorted(c, q, side="left") for c, q in zip(cum, levels, strict=True)],
                    dtype=np.int64).reshape(d, n_split_candidates - 1)
    uniform = np.linspace(0, max_bins - 1, n_split_candidates + 1)[1:-1].astype(np.int64)
    cuts = np.where(total <= 0, uniform, cuts)  # no signal: uniform cuts
    is_cut = (cuts < max_bins - 1) & (np.diff(cuts, axis=1, prepend=-1) > 0)  # rows are sorted: first of equals
    n_cuts = is_cut.sum(axis=1)
    valid = np.arange(n_cuts.max(initial=0)) < n_cuts[:, None]
    cut_bins = np.full(valid.shape, max_bins - 1, dtype=np.int64)
    cut_bins[valid] = cuts[is_cut]
    return cut_bins, valid


def off_zero_entries(B: np.ndarray, zero_bins: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The entries of B off their feature's zero bin (the bin of x = 0): the number per record, and each one's
    bin * d + feature, record by record.

    Histograms are summed over these only (XGBoost's sparsity-aware histograms): a one-hot indicator is
    mostly 0 (adult: 89% of its entries), and a node's zero cell is its total minus its other cells."""
    rows, features = np.nonzero(B != zero_bins)
    return np.bincount(rows, minlength=B.shape[0]), B[rows, features].astype(np.int64) * B.shape[1] + features


def histograms(keys, weights, shape, zero_cells, totals) -> np.ndarray:
    """The (nodes, cells, d) histogram of the entries' weights (None: counts) by key (node * cells + cell) * d
    + feature, each cell summed in record order; then each feature's zero cell (not among the entries) gets
    its node's total minus the feature's other cells (exact for counts, to rounding for sums).

    Feature last: the entries of a record that share a cell (a one-hot's 1s) land side by side, not a page
    apart (which thrashes a cache set and made the sketch's bincount 10x slower)."""
    H = np.bincount(keys, weights, minlength=int(np.prod(shape))).reshape(shape)
    if weights is not None:  # bincount over no keys returns int64 even with float weights: the += below would raise
        H = H.astype(float, copy=False)
    H[:, zero_cells, np.arange(shape[2])] += totals[:, None] - H.sum(axis=1)
    return H


def cumulate_buckets(H: np.ndarray) -> np.ndarray:
    """H (nodes, buckets, features) summed over buckets in place, as np.cumsum(H, axis=1) (the same additions
    in the same order) but a bucket at a time over all nodes and features: 3x faster than the strided cumsum."""
    for j in range(1, H.shape[1]):
        H[:, j] += H[:, j - 1]
    return H


class DPXGBoostTrees:
    """The fitted ensemble: per tree and level the split feature and cut bin of each node, and the leaf values."""

    def __init__(self, max_depth: int):
        self.max_depth = max_depth
        self.features: list[list[np.ndarray]] = []
        self.cuts: list[list[np.ndarray]] = []
        self.leaves: list[np.ndarray] = []

    def leaf_of(self, B: np.ndarray, t: int) -> np.ndarray:
        node = np.zeros(B.shape[0], dtype=np.int64)
        rows = np.arange(B.shape[0])
        for f, c in zip(self.features[t], self.cuts[t], strict=True):
            node = 2 * node + (B[rows, f[node]] > c[node])
        return node

    def predict(self, B: np.ndarray) -> np.ndarray:
        s = np.full(B.shape[0], BASE_SCORE)
        for t in range(len(self.leaves)):
            s += self.leaves[t][self.leaf_of(B, t)]
        return s


@algorithm("dp_xgboost",
           description="DP-XGBoost (Grislain & Gonzalvez 2021): private XGBoost trees, Poisson subsampling, "
                       "rounds composed by dp-accounting's PLD")
class DPXGBoostClassifier(DPClassifier):
    """DP-XGBoost for binary classification (paper 001's tree-based baseline); see the module docstring.

    decision_function is the score minus base_score 0.5 (> 0 predicts classes_[1]).  Fixed settings and their
    sources are in the module docstring; paper 001 tunes only `subsample` over {0.2, 0.5, 0.8}.  `classes` =
    [negative, positive] is the public label set (never read from the rows: a fit on one class, or on none,
    is a fit like any other).
    """

    composes_in_gdp = False  # rounds composed by dp-accounting's PLD
    fitted_attributes = {"bounds_": PUBLIC, "epsilon_per_round_": PUBLIC, "trees_": RELEASE}

    _parameter_constraints = {
        **PRIVACY, "n_rounds": COUNT, "subsample": [Interval(Real, 0, 1, closed="right")], "max_depth": COUNT,
        "learning_rate": POSITIVE, "reg_lambda": POSITIVE, "min_child_weight": [Interval(Real, 0, None, closed="left")],
        "max_bins": [Interval(Integral, 2, None, closed="left")],
        "n_split_candidates": [Interval(Integral, 2, None, closed="left")],
        "grad_bound": POSITIVE, "feature_bound": POSITIVE, "feature_types": [None, "array-like"], **CLASSES,
    }

    def __init__(self, epsilon=1.0, delta=1e-6, n_rounds=100, subsample=0.8, max_depth=6, learning_rate=0.3,
                 reg_lambda=0.1, min_child_weight=50.0, max_bins=1024, n_split_candidates=64, grad_bound=1.0,
                 feature_bound=1e5, feature_types=None, classes=(0, 1), random_state=None):
        self.epsilon = epsilon
        self.delta = delta
        self.n_rounds = n_rounds
        self.subsample = subsample
        self.max_depth = max_depth
        self.learning_rate = learning_rate
        self.reg_lambda = reg_lambda
        self.min_child_weight = min_child_weight
        self.max_bins = max_bins
        self.n_split_candidates = n_split_candidates
        self.grad_bound = grad_bound
        self.feature_bound = feature_bound
        self.feature_types = feature_types
        self.classes = classes
        self.random_state = random_state

    def _fit_model(self, X, y01, mu, rng, ledger):
        ledger = self.privacy_ledger_ = SubsampledPureDPLedger(sampling_probability=float(self.subsample))
        self.epsilon_per_round_ = eps_t = per_round_epsilon(float(self.epsilon), float(self.delta),
                                                            int(self.n_rounds), float(self.subsample))
        self.bounds_ = feature_bounds(self.feature_types, X.shape[1], self.feature_bound)
        B = self._bins(X)
        zero_bins = self._bins(np.zeros((1, X.shape[1])))[0]
        counts, entries = off_zero_entries(B, zero_bins)
        columns = np.ascontiguousarray(B.T)  # routing reads a few features of every record: one column each
        self.trees_ = trees = DPXGBoostTrees(self.max_depth)
        s = np.full(X.shape[0], BASE_SCORE)
        for t in range(self.n_rounds):
            g = s - y01
            keep = (record_generator(rng).random(X.shape[0]) < self.subsample) & (np.abs(g) < self.grad_bound)
            kept_entries = (counts[keep], entries[np.repeat(keep, counts)])
            leaf = self._grow_tree(columns, keep, kept_entries, zero_bins, g[keep], eps_t, rng, ledger, t)
            s += trees.leaves[-1][leaf]
        return self

    def _grow_tree(self, columns, keep, entries, zero_bins, g, eps_t, rng, ledger, t):
        """One tree on the kept records (entries: their entries off zero_bins, from `off_zero_entries`; g: their
        gradients); returns every record's leaf (columns: every record's bins, feature by feature)."""
        d, n_all = columns.shape
        n, (counts, entries) = g.size, entries
        nb, depth, lam, gs = self.max_bins, self.max_depth, float(self.reg_lambda), float(self.grad_bound)
        # 2. sketch: noisy count histograms (hessian 1) -> weighted quantile cuts
        hist = histograms(entries, None, (1, nb, d), zero_bins, np.array([n]))[0].T
        noisy = laplace_mechanism(hist, float(d), eps_t / 2, rng, ledger, tag_round(t, "sketch histograms"))
        cut_bins, valid = weighted_cuts(np.maximum(noisy, 0.0), self.n_split_candidates)
        k = 1 + cut_bins.shape[1]  # buckets per feature (padded)
        starts = np.zeros((nb, d), dtype=np.int64)
        starts[cut_bins[valid] + 1, np.nonzero(valid)[0]] = 1
        bucket = np.cumsum(starts, axis=0)  # bucket j of a feature: cut[j-1] < bin <= cut[j]
        cells = (bucket * d + np.arange(d)).ravel()[entries]
        zero_buckets, g_entries = bucket[zero_bins, np.arange(d)], np.repeat(g, counts)
        # 3. splits, level by level, on a full tree; histograms and utilities as (nodes, buckets, features)
        node_all, node = np.zeros(n_all, dtype=np.int64), np.zeros(n, dtype=np.int64)
        eps_level, sens = eps_t / (4 * depth), GAIN_SENSITIVITY * gs**2
        feats, cut_list = [], []
        for level in range(depth):
            m = 2**level
            keys = np.repeat(node * (k * d), counts) + cells
            Gt, Nt = np.bincount(node, g, minlength=m), np.bincount(node, minlength=m)  # the nodes' totals
            G = histograms(keys, g_entries, (m, k, d), zero_buckets, Gt)
            N = histograms(keys, None, (m, k, d), zero_buckets, Nt)
            GL, NL = cumulate_buckets(G)[:, :-1], cumulate_buckets(N)[:, :-1]
            gain = split_utility(GL, NL, Gt[:, None, None] - GL, Nt[:, None, None] - NL, lam)
            log_w = np.where(valid.T, eps_level * gain / (2 * sens), -np.inf).transpose(0, 2, 1).reshape(m, -1)
            choice = exponential_mechanism_rows(log_w, eps_level, rng, ledger, tag_round(t, f"splits level {level}"),
                                                sensitivity=sens)
            f_sel, j_sel = np.divmod(choice, k - 1)
            feats.append(f_sel)
            cut_list.append(cut_bins[f_sel, j_sel])
            bins = columns.ravel()[f_sel[node_all] * n_all + np.arange(n_all)]
            node_all = 2 * node_all + (bins > cut_list[-1][node_all])
            node = node_all[keep]
        # 4. leaves
        leaves = 2**depth
        G = np.bincount(node, g, minlength=leaves)
        N = np.bincount(node, minlength=leaves).astype(float)
        value = np.clip(-G / (np.maximum(N, self.min_child_weight) + lam), -gs, gs)
        leaf_sens = 2 * gs / (self.min_child_weight + 1 + lam)
        value = laplace_mechanism(value, leaf_sens, eps_t / 4, rng, ledger, tag_round(t, "leaf values"))
        self.trees_.features.append(feats)
        self.trees_.cuts.append(cut_list)
        self.trees_.leaves.append(self.learning_rate * np.asarray(value, dtype=float))
        return node_all

    def _bins(self, X):
        low, high, nominal = self.bounds_
        return bin_index(feature_map(X, nominal, self.feature_bound), low, high, self.max_bins)

    def decision_function(self, X):
        X = self._validated_X(X)
        return self.trees_.predict(self._bins(X)) - BASE_SCORE
