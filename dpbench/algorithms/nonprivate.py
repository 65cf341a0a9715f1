"""Non-private baselines (empty ledger, labelled non-private in results)."""

from __future__ import annotations

import numpy as np

from dpbench.algorithms.base import DPLinearRegressor, check_positive
from dpbench.algorithms.linear_algebra import solve_psd
from dpbench.algorithms.registry import AlgorithmSpec, register


class OLSRegressor(DPLinearRegressor):
    """Ordinary least squares (minimum-norm solution when X is rank deficient)."""

    private = False

    def __init__(self, fit_intercept=False, random_state=None):
        self.fit_intercept = fit_intercept
        self.random_state = random_state

    def _fit_private(self, X, y, mu, rng, ledger):
        return np.linalg.lstsq(X, y, rcond=None)[0]


class RidgeRegressor(DPLinearRegressor):
    """Ridge regression (X^T X + alpha I)^{-1} X^T y; the intercept column is penalised too."""

    private = False

    def __init__(self, alpha=1.0, fit_intercept=False, random_state=None):
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.random_state = random_state

    def _fit_private(self, X, y, mu, rng, ledger):
        check_positive("alpha", self.alpha)
        return solve_psd(X.T @ X + self.alpha * np.eye(X.shape[1]), X.T @ y)


register(AlgorithmSpec("ols", OLSRegressor, "regression", private=False,
                       description="non-private ordinary least squares"))
register(AlgorithmSpec("ridge", RidgeRegressor, "regression", private=False,
                       fixed_params={"alpha": 1.0},
                       tuning_space={"alpha": {"type": "float", "low": 1e-5, "high": 1e5, "log": True}},
                       description="non-private ridge regression"))
