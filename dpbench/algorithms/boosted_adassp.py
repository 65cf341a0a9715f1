"""BoostedAdaSSP (paper 000 Alg. 1): gradient boosting with AdaSSP as the base learner."""

from __future__ import annotations

import math

import numpy as np

from dpbench.algorithms.adassp import private_gram_and_ridge
from dpbench.algorithms.base import (
    LEARNING_RATES,
    DPLinearRegressor,
    check_choice,
    check_positive,
    check_positive_int,
)
from dpbench.algorithms.classification import boosting_path, last, round_release
from dpbench.algorithms.linear_algebra import inverse_psd
from dpbench.algorithms.registry import CLIP_BOUND, ITERATIONS, LEARNING_RATE, AlgorithmSpec, register
from dpbench.privacy import split_mu


class BoostedAdaSSPRegressor(DPLinearRegressor):
    """Private gradient boosting of ridge regressors.

    X^T X and the ridge lambda are released once (budgets mu_1, mu_3); each
    of the `n_rounds` rounds releases X^T clip(g_t, y_bound) with mu_2 /
    sqrt(T), so the rounds compose to mu_2 and the whole fit to mu.  The
    residuals g_t = y - X theta are clipped at tau = `y_bound`; rows of X at
    `x_bound`.  theta <- theta + eta_t Gamma X^T g_t with eta_t from
    `learning_rate` in {'constant', '1/t', '1/sqrt(t)'} (paper 000 Table I).
    Paper defaults (Table I): x_bound = 1, y_bound = 1, T = 100, eta = 1.
    """

    clips_features = True

    def __init__(
        self,
        epsilon=1.0,
        delta=1e-6,
        x_bound=1.0,
        y_bound=1.0,
        n_rounds=100,
        learning_rate="constant",
        budget_ratio=(1.0, 1.0, 1.0),
        rho=0.05,
        fit_intercept=False,
        random_state=None,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.x_bound = x_bound
        self.y_bound = y_bound
        self.n_rounds = n_rounds
        self.learning_rate = learning_rate
        self.budget_ratio = budget_ratio
        self.rho = rho
        self.fit_intercept = fit_intercept
        self.random_state = random_state

    def _validate_params(self):
        super()._validate_params()
        check_positive("x_bound", self.x_bound)
        check_positive("y_bound", self.y_bound)
        check_positive_int("n_rounds", self.n_rounds)
        check_choice("learning_rate", self.learning_rate, LEARNING_RATES)
        if not 0 < self.rho < 1:
            raise ValueError(f"rho must lie strictly between 0 and 1, got {self.rho!r}")

    def _fit_private(self, X, y, mu, rng, ledger):
        mu_gram, mu_grad, mu_lambda = split_mu(mu, self.budget_ratio)
        T = self.n_rounds
        gram, lam = private_gram_and_ridge(X, self.x_bound, mu_gram, mu_lambda, self.rho, rng, ledger)
        gamma = inverse_psd(gram + lam * np.eye(X.shape[1]))
        release = round_release(self.x_bound * self.y_bound, mu_grad / math.sqrt(T), rng, ledger)
        # the boosting loop is paper 001 Alg. 2's with the squared loss (one loop, one place)
        theta = last(boosting_path(X, y, "squared", gamma, T, self.learning_rate, self.y_bound, release))
        self.ridge_lambda_ = lam
        return theta


register(AlgorithmSpec(
    "boosted_adassp", BoostedAdaSSPRegressor, "regression", private=True,
    fixed_params={"x_bound": 1.0, "y_bound": 1.0, "n_rounds": 100, "learning_rate": "constant"},
    tuning_space={"x_bound": CLIP_BOUND, "y_bound": CLIP_BOUND, "n_rounds": ITERATIONS,
                  "learning_rate": LEARNING_RATE},
    description="BoostedAdaSSP (paper 000 Alg. 1): gradient boosting over AdaSSP",
))
