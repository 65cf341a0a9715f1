"""Sufficient-statistics perturbation: AdaSSP (Wang 2018, Alg. 2; paper 000 Alg. 2) in mu-GDP, and plain SSP.

Privacy (add or remove one record; n is not public): rows are clipped to
norm x_bound and labels to [-y_bound, y_bound], so one record moves X^T X
by x x^T (Frobenius norm <= x_bound^2), lambda_min(X^T X) by <= x_bound^2
(Weyl) and X^T y by <= x_bound y_bound; each is released once with
Gaussian noise of std sensitivity / mu_i, and the mu_i (the split
`budget_ratio`) compose to mu.  Nothing divides by n.
"""

from __future__ import annotations

import math

import numpy as np

from dpbench.algorithms.base import FIT_INTERCEPT, FRACTION, POSITIVE, PRIVACY, RELEASE, DPLinearRegressor
from dpbench.algorithms.linear_algebra import solve_psd
from dpbench.algorithms.registry import algorithm
from dpbench.algorithms.shared_data import SharedData
from dpbench.privacy import PrivacyLedger, gaussian_mechanism, gaussian_std, split_mu, symmetric_gaussian_mechanism


class SharedStatisticsRegressor(DPLinearRegressor):
    """A regressor whose fit reads the data only through `SharedData` (features, X^T X, X^T y, ...).

    `_fit_shared(shared, key, mu, rng, ledger) -> theta`, key = feature_key():
    one run alone fits on a SharedData of its own mapped features; a batch of
    runs of one unit shares one SharedData of the raw X, so every statistic
    is computed once and each run still releases exactly what it would alone.
    """

    clips_features = True
    budget_shares = ("budget_ratio",)

    def _fit_theta(self, X, y, mu, rng, ledger):
        return self._fit_shared(SharedData(X, y), (False, None), mu, rng, ledger)

    def batch_key(self):
        """Runs on one unit share a batch whatever their bounds and budgets (SharedData.clipped_statistics)."""
        return (type(self).__name__, bool(self.fit_intercept))

    @classmethod
    def fit_batch(cls, estimators, X, y, shared=None):
        starts, X, y = cls._begin_batch(estimators, X, y)
        shared = SharedData(X, y) if shared is None else shared
        shared.clipped_statistics(estimators[0].fit_intercept, [(e.x_bound, e.y_bound) for e in estimators])
        for est, (rng, mu) in zip(estimators, starts, strict=True):
            est._set_theta(est._fit_shared(shared, est.feature_key(), mu, rng, est.privacy_ledger_))
        return estimators


SSP_CONSTRAINTS = {**PRIVACY, **FIT_INTERCEPT, "x_bound": POSITIVE, "y_bound": POSITIVE, "budget_ratio": ["array-like"]}


def private_gram_and_ridge(
    shared: SharedData, key: tuple, x_bound: float, mu_gram: float, mu_lambda: float, rho: float, rng,
    ledger: PrivacyLedger,
) -> tuple[np.ndarray, float]:
    """Release X^T X (mu_gram) and the adaptive ridge lambda (mu_lambda) of AdaSSP.

    X = shared.features(*key) is row-clipped at x_bound.  With sigma_1 = x_bound^2 / mu_gram
    (noise std on X^T X) and sigma_3 = x_bound^2 / mu_lambda:

      lambda_min~ = max(0, lambda_min(X^T X) + sigma_3 Z - sigma_3 sqrt(2 log(2/rho)))
      lambda      = max(0, sigma_1 sqrt(d log(2 d^2 / rho)) - lambda_min~)

    Wang (2018) Alg. 2 written with GDP noise scales: the first line is a
    private lower bound on lambda_min (the Gaussian tail bound makes it hold
    with probability >= 1 - rho/2); the second is the spectral-norm bound of
    the symmetric noise matrix (Wang's Lemma, failure probability rho), so that
    X^T X + noise + lambda I is positive definite with probability >= 1 - rho.
    rho (the estimators' `failure_prob`, default 0.05) is the confidence constant.
    """
    gram = shared.gram(*key)
    d, sens = gram.shape[0], x_bound**2
    lam_min = gaussian_mechanism(shared.min_eigenvalue(*key), sens, mu_lambda, rng, ledger, "lambda_min(X^T X)")
    sigma_lambda = gaussian_std(sens, mu_lambda)  # the std drawn
    lam_min = max(0.0, lam_min - sigma_lambda * math.sqrt(2 * math.log(2 / rho)))
    noisy_gram = symmetric_gaussian_mechanism(gram, sens, mu_gram, rng, ledger, "X^T X")
    sigma_gram = gaussian_std(sens, mu_gram)
    lam = max(0.0, sigma_gram * math.sqrt(d * math.log(2 * max(d, 1) ** 2 / rho)) - lam_min) if d else 0.0
    return noisy_gram, lam


@algorithm("adassp", description="AdaSSP (Wang 2018): one-shot private ridge regression")
class AdaSSPRegressor(SharedStatisticsRegressor):
    """Adaptive sufficient-statistics perturbation (one-shot private ridge regression).

    Rows of X are clipped to norm `x_bound`, labels to [-y_bound, y_bound];
    X^T X, X^T y and lambda_min(X^T X) are released with Gaussian noise, the
    GDP budget split `budget_ratio` = a:b:c among them (paper 000 Alg. 2).
    Fixed settings x_bound = y_bound = 1 as BoostedAdaSSP's (paper 000 Table I).
    """

    fitted_attributes = {"ridge_lambda_": RELEASE}
    _parameter_constraints = {**SSP_CONSTRAINTS, "failure_prob": FRACTION}

    def __init__(self, epsilon=1.0, delta=1e-6, x_bound=1.0, y_bound=1.0, budget_ratio=(1.0, 1.0, 1.0),
                 failure_prob=0.05, fit_intercept=False, random_state=None):
        self.epsilon = epsilon
        self.delta = delta
        self.x_bound = x_bound
        self.y_bound = y_bound
        self.budget_ratio = budget_ratio
        self.failure_prob = failure_prob
        self.fit_intercept = fit_intercept
        self.random_state = random_state

    def _fit_shared(self, shared, key, mu, rng, ledger):
        mu_gram, mu_xty, mu_lambda = split_mu(mu, self.budget_ratio)
        gram, lam = private_gram_and_ridge(shared, key, self.x_bound, mu_gram, mu_lambda, self.failure_prob, rng,
                                           ledger)
        xty = gaussian_mechanism(shared.xty(*key, self.y_bound), self.x_bound * self.y_bound, mu_xty, rng, ledger,
                                 "X^T y")
        self.ridge_lambda_ = lam
        return solve_psd(gram + lam * np.eye(gram.shape[0]), xty)


@algorithm("ssp", description="sufficient-statistics perturbation without the adaptive ridge")
class SSPRegressor(SharedStatisticsRegressor):
    """Plain sufficient-statistics perturbation: noisy X^T X and X^T y, no ridge.

    Budget split a:b between X^T X (sensitivity x_bound^2) and X^T y
    (sensitivity x_bound * y_bound); the noisy normal equations are solved by
    least squares when the noisy Gram matrix is not positive definite.
    """

    _parameter_constraints = SSP_CONSTRAINTS

    def __init__(self, epsilon=1.0, delta=1e-6, x_bound=1.0, y_bound=1.0, budget_ratio=(1.0, 1.0),
                 fit_intercept=False, random_state=None):
        self.epsilon = epsilon
        self.delta = delta
        self.x_bound = x_bound
        self.y_bound = y_bound
        self.budget_ratio = budget_ratio
        self.fit_intercept = fit_intercept
        self.random_state = random_state

    def _fit_shared(self, shared, key, mu, rng, ledger):
        mu_gram, mu_xty = split_mu(mu, self.budget_ratio)
        gram = symmetric_gaussian_mechanism(shared.gram(*key), self.x_bound**2, mu_gram, rng, ledger, "X^T X")
        xty = gaussian_mechanism(shared.xty(*key, self.y_bound), self.x_bound * self.y_bound, mu_xty, rng, ledger,
                                 "X^T y")
        return solve_psd(gram, xty)
