"""BoostedAdaSSP: gradient boosting with AdaSSP as the base learner (paper 000 Alg. 1; paper 001 Alg. 2).

One loop, `boosting_path`, serves the regressor, the classifier (squared,
logistic and hinge losses, paper 001 Table 1) and the non-private boosted
baseline.  Privacy (add or remove one record; n is not public): X^T X and
the ridge lambda are released once (`ssp.private_gram_and_ridge`, budgets
mu_1, mu_3); each of the T rounds releases X^T clip(g_t, y_bound) with
Gaussian noise at mu_2 / sqrt(T): rows are clipped to x_bound, so one
record moves that sum by at most x_bound * y_bound.  The rounds compose to
mu_2 and the fit to mu (Thm 2.2 of paper 001); nothing divides by n.
"""

from __future__ import annotations

import math
from collections import deque

import numpy as np
from scipy.special import expit
from sklearn.base import is_classifier
from sklearn.utils._param_validation import StrOptions

from dpbench.algorithms.base import (
    CLASSES,
    COUNT,
    FRACTION,
    POSITIVE,
    PUBLIC,
    RELEASE,
    SCHEDULE,
    DPLinearClassifier,
    DPLinearRegressor,
    clip_values,
    step_size,
)
from dpbench.algorithms.kernels import boosting_pass
from dpbench.algorithms.linear_algebra import inverse_psd
from dpbench.algorithms.registry import algorithm
from dpbench.algorithms.shared_data import SharedData, row_blocks
from dpbench.algorithms.ssp import SSP_CONSTRAINTS, private_gram_and_ridge
from dpbench.privacy import gaussian_rounds, split_mu

LOSSES = ("squared", "logistic", "hinge")
PRODUCTS = ("float64", "float32")  # dtype of the products X theta, X^T g (float32: float64 sums over row blocks)
# budget_ratio "one_scale": one noise scale for all T + 2 releases (the authors' first public code), i.e.
# a:b:c = 1 : sqrt(T) : 1; paper 000 does not state its split.  Fixed default 1:1:1 as AdaSSP.
ONE_SCALE = "one_scale"
BOOSTING_CONSTRAINTS = {**SSP_CONSTRAINTS, "failure_prob": FRACTION, "n_rounds": COUNT, "learning_rate": POSITIVE,
                        "lr_schedule": SCHEDULE, "budget_ratio": ["array-like", StrOptions({ONE_SCALE})]}


def loss_targets(loss: str, y01: np.ndarray) -> np.ndarray:
    """Labels in the coding paper 001 Table 1 uses for `loss`: {0, 1} for logistic, {-1, +1} otherwise."""
    return y01 if loss == "logistic" else 2.0 * y01 - 1.0


def negative_gradient(loss: str, y: np.ndarray, s: np.ndarray) -> np.ndarray:
    """g = -dL(y, s)/ds of paper 001 Table 1 (y in the loss's coding)."""
    if loss == "squared":
        return y - s
    if loss == "logistic":
        return y - expit(s)
    if loss == "hinge":
        return (1.0 - y * s > 0) * y
    raise ValueError(f"loss must be one of {LOSSES}, got {loss!r}")


def loss_value(loss: str, y: np.ndarray, s: np.ndarray) -> float:
    """Mean training loss of paper 001 Table 1 (the y axis of its Fig. 1)."""
    if loss == "squared":
        return float(np.mean(0.5 * (y - s) ** 2))
    if loss == "logistic":
        return float(np.mean(np.logaddexp(0.0, s) - y * s))
    if loss == "hinge":
        return float(np.mean(np.maximum(0.0, 1.0 - y * s)))
    raise ValueError(f"loss must be one of {LOSSES}, got {loss!r}")


def boosting_path(X, y, loss, gamma, n_rounds, learning_rate, schedule, grad_bound=None, release=None,
                  products="float64"):
    """Yield theta after each round of paper 001 Alg. 2 (the loop shared by the private and non-private fits).

    theta_t = theta_{t-1} + eta_t Gamma release(X^T clip(g_t, grad_bound)), with g_t the negative gradient
    at the scores X theta_{t-1} and eta_t = step_size(learning_rate, schedule, t).  grad_bound=None: no
    clipping; release=None: no noise (non-private); otherwise `release` is the privacy mechanism that adds
    the round's noise and records it.  products="float32": X theta, g and X^T g in float32 by row blocks,
    the blocks' sums added in float64 (as `boosting_batch` does with that option).
    """
    blocks = [slice(None)]
    if product_dtype(products) == np.float32:
        X, y, blocks = X.astype(np.float32), y.astype(np.float32), row_blocks(len(y), 1, X.shape[1])
        grad_bound = None if grad_bound is None else np.float32(grad_bound)
    theta = np.zeros(X.shape[1])
    for t in range(1, n_rounds + 1):
        xtg = np.zeros(X.shape[1])
        for rows in blocks:
            g = negative_gradient(loss, y[rows], X[rows] @ theta.astype(X.dtype))
            xtg += X[rows].T @ (g if grad_bound is None else clip_values(g, grad_bound))
        if release is not None:
            xtg = release(xtg)
        theta = theta + step_size(learning_rate, schedule, t) * (gamma @ xtg)
        yield theta


def product_dtype(products: str) -> np.dtype:
    """The dtype of BoostedAdaSSP's products: 'float64' (default, the reference) or 'float32' (opt-in; about
    1.7x as fast; coefficients move by up to ~1e-3 of their spread across seeds, the privacy noise).

    float32 weakens the sensitivity argument slightly: a block's sum X^T clip(g) is rounded to 24 bits, so one
    record can move the released sum by its sensitivity x_bound * y_bound plus the rounding of every other
    record's terms (an insertion moved a float32 block sum by 1.004x its sensitivity in a crafted case).  The
    noise is calibrated to the exact sensitivity, so float32 runs are private up to that rounding, not exactly;
    the runner and every reference result use float64."""
    if products not in PRODUCTS:
        raise ValueError(f"products must be one of {PRODUCTS}, got {products!r}")
    return np.dtype(products)


def last(iterable):
    """The final item of an iterator (the last round of a boosting path)."""
    return deque(iterable, maxlen=1)[0]


def private_start(est, shared: SharedData, key: tuple, mu: float, rng, ledger):
    """The one-off releases of BoostedAdaSSP: (Gamma = (X^T X~ + lambda I)^{-1}, the per-round release)."""
    ratio = (1.0, math.sqrt(est.n_rounds), 1.0) if isinstance(est.budget_ratio, str) else est.budget_ratio
    mu_gram, mu_grad, mu_lambda = split_mu(mu, ratio)
    gram, lam = private_gram_and_ridge(shared, key, est.x_bound, mu_gram, mu_lambda, est.failure_prob, rng, ledger)
    est.ridge_lambda_ = lam
    release = gaussian_rounds(est.x_bound * est.y_bound, mu_grad / math.sqrt(est.n_rounds), est.n_rounds,
                              gram.shape[0], rng, ledger, "X^T clip(g_t)")
    return inverse_psd(gram + lam * np.eye(gram.shape[0])), release


def private_boosting(est, X, y, loss, mu, rng, ledger) -> np.ndarray:
    """BoostedAdaSSP's fit on the clipped features X and the loss-coded labels y (regressor and classifier)."""
    gamma, release = private_start(est, SharedData(X), (False, None), mu, rng, ledger)
    return last(boosting_path(X, y, loss, gamma, est.n_rounds, est.learning_rate, est.lr_schedule, est.y_bound,
                              release, est.products_))


def boosting_batch(estimators: list, starts: list, shared: SharedData, y: np.ndarray, loss: str,
                   products: str = "float64") -> np.ndarray:
    """(d, R) thetas of R BoostedAdaSSP runs on one unit: boosting_path's loop with X theta and X^T G as
    matrix-matrix products over the runs (`RoundSums`), each run drawing its noise from its own Generator in
    the order fit would, so each run equals its fit alone up to rounding (products="float32": up to float32
    rounding, as fit with the same option).  The runs share fit_intercept and the loss (`batch_key`); bounds,
    rounds, budgets, step sizes and seeds may differ.  Runs are sorted by n_rounds, so the runs still going
    are the first k and a run leaves the products after its last round.
    """
    dtype = product_dtype(products)
    starts = [private_start(e, shared, e.feature_key(), mu, rng, e.privacy_ledger_)
              for e, (rng, mu) in zip(estimators, starts, strict=True)]
    order = sorted(range(len(estimators)), key=lambda r: -estimators[r].n_rounds)
    ests, releases = [estimators[r] for r in order], [starts[r][1] for r in order]
    gammas = np.stack([starts[r][0] for r in order])
    rounds = np.array([e.n_rounds for e in ests])
    x_bounds, y_bounds = np.array([e.x_bound for e in ests]), np.array([e.y_bound for e in ests])
    theta, k_last = np.zeros((gammas.shape[1], len(ests))), 0
    for t in range(1, rounds[0] + 1):
        k = int(np.count_nonzero(rounds >= t))  # runs still going: the first k
        if k != k_last:
            k_last, round_sums = k, RoundSums(shared, ests[0].fit_intercept, y, x_bounds[:k], y_bounds[:k], dtype)
        th = theta[:, :k]
        xtg = round_sums(th, loss)
        noisy = np.stack([release(xtg[r]) for r, release in enumerate(releases[:k])])
        steps = np.array([step_size(e.learning_rate, e.lr_schedule, t) for e in ests[:k]])
        th += steps * np.einsum("rij,rj->ir", gammas[:k], noisy)  # each run's Gamma_r times its noisy sum
    out = np.empty_like(theta)
    out[:, order] = theta
    return out


class RoundSums:
    """theta (d x k) -> the k runs' sums clip_{C_r}(X)^T clip(g_r, tau_r), (k x d), in row blocks of X that
    stay in cache, each read once per round for both products.

    Row clipping is a row scaling: clip_C(x_i) = x_i min(1, C / ||x_i||) = C u_i min(||x_i|| / C, 1) with
    u_i = x_i / ||x_i||.  When the runs share one C they use its clipped copy of X.  Otherwise the products run
    on U, the unit rows sorted by norm (`SharedData.rows_by_norm`), with the runs sorted by C: in a block of
    rows with norms in [lo, hi] the runs with C <= lo are clipped, x_i -> C u_i (C folded into theta and into
    the sum: no pass), those with C >= hi unclipped, x_i = ||x_i|| u_i (the block's norms, one vector for all
    of them), and only the few with lo < C < hi (a run's C lies in one or two blocks) need a factor per row and
    run.  All elementwise work is done in place on one (runs x rows) buffer, each run a contiguous row (numpy's
    loops are fast along it): scores, negative gradient, clip (`kernels.boosting_pass`: one compiled pass
    when numba is installed, else numpy's passes; the same numbers).  float32 products are summed over blocks in
    float64.
    """

    def __init__(self, shared: SharedData, fit_intercept: bool, y, x_bounds, y_bounds, dtype):
        k = len(x_bounds)
        self.blocks = []  # (rows, a, b, f): runs [:a] clipped, [a:b] mixed with factors f, [b:] unclipped
        if np.all(x_bounds == x_bounds[0]):  # one feature map: its clipped copy (all runs "clipped" at C = 1)
            self.X, self.norms = shared.features(fit_intercept, float(x_bounds[0]), dtype), None
            self.cols, self.bounds = np.arange(k), np.ones(k)
            self.blocks = [(rows, k, k, None) for rows in row_blocks(len(y), k, self.X.shape[1])]
        else:
            by_norm = shared.rows_by_norm(fit_intercept, dtype)
            self.X, self.norms, y = by_norm.unit, by_norm.norms.astype(dtype), y[by_norm.order]
            self.cols = np.argsort(x_bounds, kind="stable")  # runs by C: clipped, mixed, unclipped in a block
            self.bounds = x_bounds[self.cols]
            for rows in row_blocks(len(y), k, self.X.shape[1]):
                lo, hi = by_norm.norms[rows.start], by_norm.norms[rows.stop - 1]
                a, b = np.searchsorted(self.bounds, lo, "right"), np.searchsorted(self.bounds, hi, "left")
                f = np.minimum(by_norm.norms[rows] / self.bounds[a:b, None], 1.0).astype(dtype) if b > a else None
                self.blocks.append((rows, int(a), int(b), f))
        self.y, tau = y.astype(dtype), y_bounds[self.cols]
        # clip(g, tau) = tau clip(g / tau, 1): runs with different bounds scale their gradients and clip at 1
        # (np.clip is fast with one bound only), tau folded into the sums
        self.tau, self.tau_runs = (dtype.type(tau[0]), None) if np.all(tau == tau[0]) else (dtype.type(1), tau)
        # n = 0 has no blocks (every sum 0): a fit on the empty dataset returns a model like any other
        self.buffer = np.empty(max((r.stop - r.start for r, *_ in self.blocks), default=0) * k, dtype)

    def __call__(self, theta: np.ndarray, loss: str) -> np.ndarray:
        d, k = theta.shape
        th = theta[:, self.cols]  # in the runs' order by C; (d x runs): BLAS is twice as fast as with (runs x d)
        plain, scaled = (np.ascontiguousarray(v, self.buffer.dtype) for v in (th, th * self.bounds))
        inverse_tau = None if self.tau_runs is None else (1.0 / self.tau_runs).astype(self.buffer.dtype)
        on = np.empty_like(plain)  # theta of the block's runs: C theta for clipped and mixed runs, theta for others
        sums, scaled_sums = np.zeros((k, d)), np.zeros((k, d))  # the latter times C at the end
        gradients = boosting_pass(loss, self.buffer.dtype)
        for rows, a, b, f in self.blocks:
            s = self.buffer[:(rows.stop - rows.start) * k].reshape(k, -1)  # (runs x rows) scores, then gradients
            on[:, :b], on[:, b:] = scaled[:, :b], plain[:, b:]
            np.matmul(self.X[rows], on, out=s.T)
            # row factors, negative gradient, 1 / tau_r, clip, row factors: one pass with numba, else numpy's
            gradients(s, self.y[rows], a, b, f, None if b == k else self.norms[rows], inverse_tau, self.tau)
            block = s @ self.X[rows]
            scaled_sums[:b] += block[:b]
            sums[b:] += block[b:]
        sums += self.bounds[:, None] * scaled_sums
        if self.tau_runs is not None:
            sums *= self.tau_runs[:, None]
        out = np.empty_like(sums)
        out[self.cols] = sums
        return out


class BoostingBatch:
    """The batched fit shared by the BoostedAdaSSP regressor and classifier."""

    budget_shares = ("budget_ratio",)
    fitted_attributes = {"ridge_lambda_": RELEASE, "products_": PUBLIC}  # products_: the fit's `products`

    def batch_key(self):
        """Runs on one unit share a batch whatever their bounds, rounds, step sizes and budgets."""
        classes = tuple(np.asarray(getattr(self, "classes", ())).tolist())  # the labels are coded per batch
        return (type(self).__name__, bool(self.fit_intercept), getattr(self, "loss", "squared"), classes)

    def fit(self, X, y, products="float64"):
        """fit(X, y); products="float32": X theta and X^T g in float32 (summed in float64 over row blocks)."""
        self.products_ = products
        return super().fit(X, y)

    @classmethod
    def fit_batch(cls, estimators, X, y, shared=None, products="float64"):
        """Every run's fit at once (`boosting_batch`); products as in `fit`."""
        product_dtype(products)
        for est in estimators:
            est.products_ = products
        starts, X, y = cls._begin_batch(estimators, X, y, y_numeric=not is_classifier(estimators[0]))
        loss = getattr(estimators[0], "loss", "squared")
        if is_classifier(estimators[0]):
            for est in estimators:
                est.classes_, y01 = est._labels(y)
            y = loss_targets(loss, y01)
        shared = SharedData(X, y) if shared is None else shared
        theta = boosting_batch(estimators, starts, shared, np.asarray(y, dtype=float), loss, products)
        for r, est in enumerate(estimators):
            est._set_theta(theta[:, r].copy())
        return estimators


@algorithm("boosted_adassp", description="BoostedAdaSSP (paper 000 Alg. 1): gradient boosting over AdaSSP")
class BoostedAdaSSPRegressor(BoostingBatch, DPLinearRegressor):
    """Private gradient boosting of ridge regressors (paper 000 Alg. 1).

    The residuals g_t = y - X theta are clipped at tau = `y_bound`, rows of X
    at `x_bound`; theta <- theta + eta_t Gamma (X^T clip(g_t) + noise) with
    eta_t = `learning_rate` x `lr_schedule` in {'constant', '1/t',
    '1/sqrt(t)'} (paper 000 Table I).  Fixed settings (Table I): x_bound =
    y_bound = 1, n_rounds T = 100, learning rate 1 (constant); budget split
    1:1:1 and failure_prob (AdaSSP's rho) = 0.05 as AdaSSP (the paper does not state its split;
    `budget_ratio="one_scale"` is 1 : sqrt(T) : 1, one noise scale for all
    T + 2 releases, as in the authors' first public code).
    """

    clips_features = True
    _parameter_constraints = BOOSTING_CONSTRAINTS

    def __init__(self, epsilon=1.0, delta=1e-6, x_bound=1.0, y_bound=1.0, n_rounds=100, learning_rate=1.0,
                 lr_schedule="constant", budget_ratio=(1.0, 1.0, 1.0), failure_prob=0.05, fit_intercept=False,
                 random_state=None):
        self.epsilon = epsilon
        self.delta = delta
        self.x_bound = x_bound
        self.y_bound = y_bound
        self.n_rounds = n_rounds
        self.learning_rate = learning_rate
        self.lr_schedule = lr_schedule
        self.budget_ratio = budget_ratio
        self.failure_prob = failure_prob
        self.fit_intercept = fit_intercept
        self.random_state = random_state

    def _fit_theta(self, X, y, mu, rng, ledger):
        return private_boosting(self, X, y, "squared", mu, rng, ledger)


@algorithm("boosted_adassp_clf",
           description="BoostedAdaSSP for binary classification (paper 001 Alg. 2); loss squared/logistic/hinge")
class BoostedAdaSSPClassifier(BoostingBatch, DPLinearClassifier):
    """BoostedAdaSSP for binary classification (paper 001 Alg. 2).

    g_t is the negative gradient of `loss` (Table 1) at the current scores,
    labels coded {0, 1} for logistic and {-1, +1} for squared and hinge
    whatever the user's two labels are.  The score > 0 predicts the positive
    class; predict_proba = sigmoid(score) for the logistic loss.  Fixed
    settings of the authors' classification script: squared loss, x_bound =
    y_bound = 1, T = 100, step 1 (constant), no intercept.  `classes` =
    [negative, positive] is the public label set (never read from the rows).
    """

    clips_features = True
    one_label_check_passes = True  # at random_state 0 (2 of random_state 0-9 do)
    _parameter_constraints = {**BOOSTING_CONSTRAINTS, **CLASSES, "loss": [StrOptions(set(LOSSES))]}

    def __init__(self, epsilon=1.0, delta=1e-6, loss="squared", x_bound=1.0, y_bound=1.0, n_rounds=100,
                 learning_rate=1.0, lr_schedule="constant", budget_ratio=(1.0, 1.0, 1.0), failure_prob=0.05,
                 fit_intercept=False, classes=(0, 1), random_state=None):
        self.epsilon = epsilon
        self.delta = delta
        self.loss = loss
        self.x_bound = x_bound
        self.y_bound = y_bound
        self.n_rounds = n_rounds
        self.learning_rate = learning_rate
        self.lr_schedule = lr_schedule
        self.budget_ratio = budget_ratio
        self.failure_prob = failure_prob
        self.fit_intercept = fit_intercept
        self.classes = classes
        self.random_state = random_state

    def _fit_theta(self, X, y01, mu, rng, ledger):
        return private_boosting(self, X, loss_targets(self.loss, y01), self.loss, mu, rng, ledger)
