"""Non-private baselines: empty ledger, `private=False` in results, labelled non-private in plots."""

from __future__ import annotations

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.utils._param_validation import StrOptions

from dpbench.algorithms.base import (
    COUNT,
    FIT_INTERCEPT,
    NON_NEGATIVE,
    POSITIVE,
    SCHEDULE,
    DPLinearClassifier,
    DPLinearRegressor,
)
from dpbench.algorithms.boosting import LOSSES, boosting_path, loss_targets, loss_value
from dpbench.algorithms.linear_algebra import inverse_psd, solve_psd
from dpbench.algorithms.registry import algorithm


@algorithm("ols", description="non-private ordinary least squares")
class OLSRegressor(DPLinearRegressor):
    """Ordinary least squares, the figures' non-private reference line: the best non-private linear model a
    reader expects, so it fits an intercept by default (`fit_intercept=False` stays available; the private
    algorithms follow the authors' code, which fits none: the line with an intercept is the fairer yardstick,
    e.g. cpu_act's test MSE 78.8 with it, 240.5 without, where private BoostedAdaSSP gets 67).  Where X is rank
    deficient it is the minimum-norm least-squares solution (the limit of ridge as alpha -> 0), never a
    failure."""

    private = False
    _parameter_constraints = {**FIT_INTERCEPT, "random_state": "no_validation"}

    def __init__(self, fit_intercept=True, random_state=None):
        self.fit_intercept = fit_intercept
        self.random_state = random_state

    def _expected_failed_checks(self) -> dict[str, str]:
        if not self.fit_intercept:
            return {}
        return {"check_estimators_empty_data_messages": "with an intercept, 0 features is the intercept-only model "
                                                        "(the mean of y), not an error"}

    def _fit_theta(self, X, y, mu, rng, ledger):
        return np.linalg.lstsq(X, y, rcond=None)[0]


@algorithm("ridge", description="non-private ridge regression")
class RidgeRegressor(DPLinearRegressor):
    """Ridge regression (X^T X + alpha I)^{-1} X^T y; the intercept column is penalised too."""

    private = False
    _parameter_constraints = {**FIT_INTERCEPT, "random_state": "no_validation", "alpha": POSITIVE}

    def __init__(self, alpha=1.0, fit_intercept=False, random_state=None):
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.random_state = random_state

    def _fit_theta(self, X, y, mu, rng, ledger):
        return solve_psd(X.T @ X + self.alpha * np.eye(X.shape[1]), X.T @ y)


@algorithm("boosted_linear_clf", description="non-private gradient boosting of linear models (paper 001 Fig. 1)")
class BoostedLinearClassifier(DPLinearClassifier):
    """Non-private gradient boosting of ridge regressors (paper 001 Fig. 1): Alg. 2 without noise or clipping.

    Gamma = (X^T X + alpha I)^{-1} (pseudo-inverse if singular).  With the
    default alpha = 0 and the squared loss every round after the first adds
    exactly nothing (paper 001 Sec. 2.2).  `loss_curve_[t-1]` is the mean
    training loss after t rounds (Fig. 1's y axis); only this non-private
    estimator exposes it.
    """

    private = False
    _parameter_constraints = {**FIT_INTERCEPT, "random_state": "no_validation", "loss": [StrOptions(set(LOSSES))],
                              "n_rounds": COUNT, "learning_rate": POSITIVE, "lr_schedule": SCHEDULE,
                              "alpha": NON_NEGATIVE}

    def __init__(self, loss="squared", n_rounds=100, learning_rate=1.0, lr_schedule="constant", alpha=0.0,
                 fit_intercept=False, random_state=None):
        self.loss = loss
        self.n_rounds = n_rounds
        self.learning_rate = learning_rate
        self.lr_schedule = lr_schedule
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.random_state = random_state

    def _fit_theta(self, X, y01, mu, rng, ledger):
        gamma = inverse_psd(X.T @ X + self.alpha * np.eye(X.shape[1]))
        y = loss_targets(self.loss, y01)
        curve, theta = [], np.zeros(X.shape[1])
        for theta in boosting_path(X, y, self.loss, gamma, self.n_rounds, self.learning_rate, self.lr_schedule):
            curve.append(loss_value(self.loss, y, X @ theta))
        self.loss_curve_ = np.array(curve)
        return theta


@algorithm("logreg", description="non-private L2-regularised logistic regression")
class LogisticRegressionClassifier(DPLinearClassifier):
    """Non-private L2-regularised logistic regression (sklearn's lbfgs solver) on phi(x).

    As RidgeRegressor, the intercept is a column of phi(x) and is penalised
    too (weight 1 / C); C = 1 is sklearn's default.
    """

    private = False
    _parameter_constraints = {**FIT_INTERCEPT, "random_state": "no_validation", "C": POSITIVE, "max_iter": COUNT}

    def __init__(self, C=1.0, max_iter=1000, fit_intercept=False, random_state=None):
        self.C = C
        self.max_iter = max_iter
        self.fit_intercept = fit_intercept
        self.random_state = random_state

    def _scores_are_log_odds(self) -> bool:
        return True

    def _fit_theta(self, X, y01, mu, rng, ledger):
        model = LogisticRegression(C=self.C, fit_intercept=False, max_iter=self.max_iter).fit(X, y01)
        self.n_iter_ = model.n_iter_
        return model.coef_[0]
