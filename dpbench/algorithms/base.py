"""What every dpbench estimator shares: input checks, clipping, seeding, the ledger."""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from dpbench.privacy import PrivacyLedger, check_epsilon_delta, mu_from_epsilon_delta


def check_X_y(X, y=None, *, allow_empty_columns: bool = True):
    """Float arrays, finite, matching lengths, non-empty; ValueError naming the problem."""
    X = np.asarray(X, dtype=float) if not hasattr(X, "toarray") else np.asarray(X.toarray(), dtype=float)
    if X.ndim == 1:
        raise ValueError(
            "X must be 2-D (n_samples, n_features). Reshape your data with X.reshape(-1, 1) if it has a single feature"
        )
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D (n_samples, n_features), got shape {X.shape}")
    if X.shape[0] == 0:
        raise ValueError("X is empty: it has 0 samples")
    if X.shape[1] == 0 and not allow_empty_columns:
        raise ValueError("X has 0 features")
    if not np.all(np.isfinite(X)):
        raise ValueError("X contains NaN or infinite values; drop or impute them before fitting")
    if y is None:
        return X
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.ravel()
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D, got shape {y.shape}")
    if y.shape[0] != X.shape[0]:
        raise ValueError(f"X and y have different numbers of samples: {X.shape[0]} and {y.shape[0]}")
    if y.dtype.kind in "fc" and not np.all(np.isfinite(y)):
        raise ValueError("y contains NaN or infinite values")
    return X, y


def check_positive(name: str, value) -> float:
    if not isinstance(value, numbers.Real) or not np.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return float(value)


def check_positive_int(name: str, value) -> int:
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


def check_fraction(name: str, value, low: float = 0.0, high: float = 1.0) -> float:
    if not isinstance(value, numbers.Real) or isinstance(value, bool) or not low < value < high:
        raise ValueError(f"{name} must lie strictly between {low} and {high}, got {value!r}")
    return float(value)


def random_parts(n: int, probabilities, rng: np.random.Generator) -> list[np.ndarray]:
    """Row indices of each part when every row joins part j with probability probabilities[j], independently.

    This is the partition parallel composition needs when n is not public:
    adding or removing a record changes exactly one part by that record and
    leaves the others as they were (cutting a permutation into sizes that
    depend on n would shift records between parts).
    """
    p = np.asarray(probabilities, dtype=float)
    label = np.searchsorted(np.cumsum(p[:-1]) / p.sum(), rng.random(n), side="right")
    order = np.argsort(label, kind="stable")
    return np.split(order, np.cumsum(np.bincount(label, minlength=p.size))[:-1])


def check_choice(name: str, value, choices) -> None:
    if value not in choices:
        raise ValueError(f"{name} must be one of {sorted(map(str, choices))}, got {value!r}")


def clip_rows(X: np.ndarray, bound: float) -> np.ndarray:
    """Row-norm clipping x * min(1, C / ||x||) (not normalisation)."""
    norms = np.linalg.norm(X, axis=1)
    return X * (bound / np.maximum(norms, bound))[:, None]


def clip_values(v: np.ndarray, bound: float) -> np.ndarray:
    """Scalar clipping to [-bound, bound] (the 1-D case of row-norm clipping)."""
    return np.clip(v, -bound, bound)


def add_intercept_column(X: np.ndarray) -> np.ndarray:
    """Append a constant column.  The constant is data-independent, so clipping after it is still private."""
    return np.hstack([X, np.ones((X.shape[0], 1))])


LEARNING_RATES = ("constant", "1/t", "1/sqrt(t)")


def learning_rate(schedule: str, t: int) -> float:
    """Step size at round t >= 1 for the schedules of paper 000 Table I."""
    if schedule == "constant":
        return 1.0
    if schedule == "1/t":
        return 1.0 / t
    if schedule == "1/sqrt(t)":
        return 1.0 / np.sqrt(t)
    raise ValueError(f"learning_rate must be one of {LEARNING_RATES}, got {schedule!r}")


class DPLinearRegressor(RegressorMixin, BaseEstimator):
    """Base of the (private) linear regressors: validation, seeding, intercept, clipping, ledger.

    The model is linear in the *feature map* phi(x): x with a constant column
    appended when `fit_intercept`, then, for estimators with `clips_features`,
    row-clipped at `x_bound`.  The map is data-independent, so it is applied
    identically at fit and predict time (as the BoostedAdaSSP authors do);
    `coef_`/`intercept_` are the weights on phi(x).

    Subclasses implement `_fit_private(Phi, y, mu, rng, ledger) -> theta` on
    validated float arrays and set `private`.  `mu` is the GDP budget
    equivalent to (epsilon, delta), or None for non-private estimators.
    """

    private = True
    clips_features = False

    def _validate_params(self) -> None:
        if self.private:
            check_epsilon_delta(self.epsilon, self.delta)

    def _features(self, X: np.ndarray) -> np.ndarray:
        if getattr(self, "fit_intercept", False):
            X = add_intercept_column(X)
        if self.clips_features:
            X = clip_rows(X, self.x_bound)
        return X

    def fit(self, X, y):
        self._validate_params()
        check_X_y(X, y)  # dpbench's messages first; then sklearn's bookkeeping (n_features_in_, names)
        min_features = 0 if getattr(self, "fit_intercept", False) else 1  # zero-dimensional case: intercept only
        X, y = validate_data(self, X, y, dtype=float, y_numeric=True, ensure_min_features=min_features)
        self.privacy_ledger_ = PrivacyLedger()
        rng = np.random.default_rng(self.random_state)
        mu = mu_from_epsilon_delta(self.epsilon, self.delta) if self.private else None
        theta = np.asarray(self._fit_private(self._features(X), y, mu, rng, self.privacy_ledger_), dtype=float)
        self.theta_ = theta
        if getattr(self, "fit_intercept", False):
            self.coef_, self.intercept_ = theta[:-1], float(theta[-1])
        else:
            self.coef_, self.intercept_ = theta, 0.0
        return self

    def predict(self, X):
        check_is_fitted(self, "theta_")
        X = validate_data(self, check_X_y(X), dtype=float, reset=False, ensure_min_features=0)
        return self._features(X) @ self.theta_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = self.private
        return tags
