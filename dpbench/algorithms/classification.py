"""Binary classification (paper 001): BoostedAdaSSP with squared / logistic / hinge loss, and baselines.

The classifier base here is the classification twin of base.DPLinearRegressor:
validation, binary labels, seeding, the ledger, the feature map.
"""

from __future__ import annotations

import math
import numbers
from collections import deque

import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.linear_model import LogisticRegression
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data

from dpbench.algorithms.adassp import private_gram_and_ridge
from dpbench.algorithms.base import (
    LEARNING_RATES,
    add_intercept_column,
    check_choice,
    check_positive,
    check_positive_int,
    check_X_y,
    clip_rows,
    clip_values,
    learning_rate,
)
from dpbench.algorithms.linear_algebra import inverse_psd
from dpbench.algorithms.registry import CLIP_BOUND, ITERATIONS, LEARNING_RATE, AlgorithmSpec, register
from dpbench.privacy import PrivacyLedger, check_epsilon_delta, gaussian_mechanism, mu_from_epsilon_delta, split_mu

LOSSES = ("squared", "logistic", "hinge")


def binary_labels(y) -> tuple[np.ndarray, np.ndarray]:
    """(classes_, y01): the two sorted classes and y coded 0/1 (1 = classes_[1], the positive class)."""
    y_type = type_of_target(y, input_name="y", raise_unknown=True)
    if y_type != "binary":
        raise ValueError(f"Only binary classification is supported. The type of the target is {y_type}.")
    classes, y01 = np.unique(y, return_inverse=True)
    if len(classes) != 2:
        raise ValueError(f"y has only 1 class ({classes[0]!r}); binary classification needs two")
    return classes, y01.astype(float)


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


def boosting_path(X, y, loss, gamma, n_rounds, schedule, grad_bound=None, release=None):
    """Yield theta after each round of paper 001 Alg. 2 (the loop shared by the private and non-private fits).

    theta_t = theta_{t-1} + eta_t Gamma release(X^T clip(g_t, grad_bound)), with g_t the negative gradient
    at the scores X theta_{t-1}.  grad_bound=None: no clipping; release=None: no noise (non-private);
    otherwise `release` is the privacy mechanism that adds the round's noise and records it.
    """
    theta = np.zeros(X.shape[1])
    for t in range(1, n_rounds + 1):
        g = negative_gradient(loss, y, X @ theta)
        if grad_bound is not None:
            g = clip_values(g, grad_bound)
        xtg = X.T @ g
        if release is not None:
            xtg = release(xtg)
        theta = theta + learning_rate(schedule, t) * (gamma @ xtg)
        yield theta


def round_release(sensitivity: float, mu_round: float, rng, ledger):
    """The per-round release of BoostedAdaSSP: X^T clip(g_t) + N(0, (sensitivity / mu_round)^2 I)."""
    return lambda xtg: gaussian_mechanism(xtg, sensitivity, mu_round, rng, ledger, "X^T clip(g_t)")


def last(iterable):
    """The final item of an iterator (the last round of a boosting path)."""
    return deque(iterable, maxlen=1)[0]


class DPClassifier(ClassifierMixin, BaseEstimator):
    """Base of dpbench's binary classifiers: validation, binary labels, seeding, the ledger.

    fit validates (dpbench's messages first, then sklearn's bookkeeping),
    sets classes_ (sorted; classes_[1] is the positive class), builds the
    Generator from random_state, a fresh `privacy_ledger_` and mu (None for
    non-private estimators), and calls `_fit_model(X, y01, mu, rng, ledger)`
    with y01 in {0, 1}.  predict thresholds `decision_function` at 0.
    """

    private = True

    def _validate_params(self) -> None:
        if self.private:
            check_epsilon_delta(self.epsilon, self.delta)

    def fit(self, X, y):
        self._validate_params()
        check_X_y(X, y)
        min_features = 0 if getattr(self, "fit_intercept", False) else 1
        X, y = validate_data(self, X, y, dtype=float, ensure_min_features=min_features)
        self.classes_, y01 = binary_labels(y)
        self.privacy_ledger_ = PrivacyLedger()
        rng = np.random.default_rng(self.random_state)
        mu = mu_from_epsilon_delta(self.epsilon, self.delta) if self.private else None
        self._fit_model(X, y01, mu, rng, self.privacy_ledger_)
        return self

    def _validated_X(self, X):
        check_is_fitted(self, "classes_")
        return validate_data(self, check_X_y(X), dtype=float, reset=False, ensure_min_features=0)

    def predict(self, X):
        score = self.decision_function(X)  # checks fitted first
        return self.classes_[(score > 0).astype(int)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = self.private
        tags.classifier_tags.multi_class = False
        return tags


class DPLinearClassifier(DPClassifier):
    """Linear score s(x) = theta^T phi(x), phi the feature map of base.DPLinearRegressor.

    phi(x) is x with a constant column appended when `fit_intercept`, then,
    for estimators with `clips_features`, row-clipped at `x_bound`; it is
    data-independent and applied at fit and predict time alike.  Subclasses
    implement `_fit_private(Phi, y01, mu, rng, ledger) -> theta`.  coef_ has
    sklearn's binary shape (1, n_features), intercept_ shape (1,).
    """

    clips_features = False

    def _features(self, X: np.ndarray) -> np.ndarray:
        if self.fit_intercept:
            X = add_intercept_column(X)
        return clip_rows(X, self.x_bound) if self.clips_features else X

    def _fit_model(self, X, y01, mu, rng, ledger):
        theta = np.asarray(self._fit_private(self._features(X), y01, mu, rng, ledger), dtype=float)
        self.theta_ = theta
        coef, intercept = (theta[:-1], theta[-1]) if self.fit_intercept else (theta, 0.0)
        self.coef_, self.intercept_ = coef[None, :], np.array([intercept])

    def decision_function(self, X):
        """The score theta^T phi(x); > 0 predicts classes_[1]."""
        return self._features(self._validated_X(X)) @ self.theta_

    def _scores_are_log_odds(self) -> bool:
        return getattr(self, "loss", None) == "logistic"

    @available_if(lambda self: self._scores_are_log_odds())
    def predict_proba(self, X):
        """sigmoid(score): only for the logistic loss, whose score is a log-odds."""
        p = expit(self.decision_function(X))
        return np.column_stack([1.0 - p, p])


def _check_boosting(est) -> None:
    check_choice("loss", est.loss, LOSSES)
    check_positive_int("n_rounds", est.n_rounds)
    check_choice("learning_rate", est.learning_rate, LEARNING_RATES)


class BoostedAdaSSPClassifier(DPLinearClassifier):
    """BoostedAdaSSP for binary classification (paper 001 Alg. 2).

    X^T X and the AdaSSP ridge lambda are released once (budgets mu_1, mu_3,
    `private_gram_and_ridge`); each of the T = `n_rounds` rounds releases
    X^T clip(g_t, y_bound) with mu_2 / sqrt(T), so the fit composes to mu
    (Thm 2.2).  g_t is the negative gradient of `loss` (Table 1) at the
    current scores, labels coded {0, 1} for logistic and {-1, +1} for squared
    and hinge whatever the user's two labels are.  Rows of phi(x) are clipped
    at `x_bound`, so X^T g has sensitivity x_bound * y_bound.  The score > 0
    predicts the positive class; predict_proba = sigmoid(score) for the
    logistic loss.  Fixed settings of the authors' classification script:
    squared loss, x_bound = y_bound = 1, T = 100, step 1 (constant), no
    intercept; `learning_rate` is the step schedule of paper 001 Sec. 4 /
    paper 000 Table I.
    """

    clips_features = True

    def __init__(
        self,
        epsilon=1.0,
        delta=1e-6,
        loss="squared",
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
        self.loss = loss
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
        _check_boosting(self)
        check_positive("x_bound", self.x_bound)
        check_positive("y_bound", self.y_bound)
        if not 0 < self.rho < 1:
            raise ValueError(f"rho must lie strictly between 0 and 1, got {self.rho!r}")

    def _fit_private(self, X, y01, mu, rng, ledger):
        mu_gram, mu_grad, mu_lambda = split_mu(mu, self.budget_ratio)
        T = self.n_rounds
        gram, lam = private_gram_and_ridge(X, self.x_bound, mu_gram, mu_lambda, self.rho, rng, ledger)
        gamma = inverse_psd(gram + lam * np.eye(X.shape[1]))
        y = loss_targets(self.loss, y01)
        self.ridge_lambda_ = lam
        release = round_release(self.x_bound * self.y_bound, mu_grad / math.sqrt(T), rng, ledger)
        return last(boosting_path(X, y, self.loss, gamma, T, self.learning_rate, self.y_bound, release))


class BoostedLinearClassifier(DPLinearClassifier):
    """Non-private gradient boosting of ridge regressors (paper 001 Fig. 1): Alg. 2 without noise or clipping.

    Gamma = (X^T X + alpha I)^{-1} (pseudo-inverse if singular).  With the
    default alpha = 0 and the squared loss every round after the first adds
    exactly nothing (paper 001 Sec. 2.2).  `loss_curve_[t-1]` is the mean
    training loss after t rounds (Fig. 1's y axis); only this non-private
    estimator exposes it.
    """

    private = False

    def __init__(self, loss="squared", n_rounds=100, learning_rate="constant", alpha=0.0, fit_intercept=False,
                 random_state=None):
        self.loss = loss
        self.n_rounds = n_rounds
        self.learning_rate = learning_rate
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.random_state = random_state

    def _validate_params(self):
        _check_boosting(self)
        if not isinstance(self.alpha, numbers.Real) or not np.isfinite(self.alpha) or self.alpha < 0:
            raise ValueError(f"alpha must be a finite number >= 0, got {self.alpha!r}")

    def _fit_private(self, X, y01, mu, rng, ledger):
        gamma = inverse_psd(X.T @ X + self.alpha * np.eye(X.shape[1]))
        y = loss_targets(self.loss, y01)
        curve, theta = [], np.zeros(X.shape[1])
        for theta in boosting_path(X, y, self.loss, gamma, self.n_rounds, self.learning_rate):
            curve.append(loss_value(self.loss, y, X @ theta))
        self.loss_curve_ = np.array(curve)
        return theta


class LogisticRegressionClassifier(DPLinearClassifier):
    """Non-private L2-regularised logistic regression (sklearn's lbfgs solver) on phi(x).

    As RidgeRegressor, the intercept is a column of phi(x) and is penalised
    too (weight 1 / C); C = 1 is sklearn's default.
    """

    private = False

    def __init__(self, C=1.0, max_iter=1000, fit_intercept=False, random_state=None):
        self.C = C
        self.max_iter = max_iter
        self.fit_intercept = fit_intercept
        self.random_state = random_state

    def _validate_params(self):
        check_positive("C", self.C)
        check_positive_int("max_iter", self.max_iter)

    def _scores_are_log_odds(self) -> bool:
        return True

    def _fit_private(self, X, y01, mu, rng, ledger):
        model = LogisticRegression(C=self.C, fit_intercept=False, max_iter=self.max_iter).fit(X, y01)
        self.n_iter_ = model.n_iter_
        return model.coef_[0]


register(AlgorithmSpec(
    "boosted_adassp_clf", BoostedAdaSSPClassifier, "classification", private=True,
    fixed_params={"loss": "squared", "x_bound": 1.0, "y_bound": 1.0, "n_rounds": 100, "learning_rate": "constant"},
    tuning_space={"x_bound": CLIP_BOUND, "y_bound": CLIP_BOUND, "n_rounds": ITERATIONS,
                  "learning_rate": LEARNING_RATE},
    description="BoostedAdaSSP for binary classification (paper 001 Alg. 2); loss squared/logistic/hinge",
))
register(AlgorithmSpec(
    "boosted_linear_clf", BoostedLinearClassifier, "classification", private=False,
    fixed_params={"loss": "squared", "n_rounds": 100, "learning_rate": "constant"},
    tuning_space={"n_rounds": ITERATIONS, "learning_rate": LEARNING_RATE},
    description="non-private gradient boosting of linear models (paper 001 Fig. 1)",
))
register(AlgorithmSpec(
    "logreg", LogisticRegressionClassifier, "classification", private=False,
    fixed_params={"C": 1.0},
    tuning_space={"C": {"type": "float", "low": 1e-5, "high": 1e5, "log": True}},
    description="non-private L2-regularised logistic regression",
))
