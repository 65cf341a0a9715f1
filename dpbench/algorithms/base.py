"""What every dpbench estimator shares: parameter and input checks, the feature map, seeding, the ledger.

Parameter constraints are declared once per class in `_parameter_constraints`
(scikit-learn's convention, checked by `BaseEstimator._validate_params` at
the start of every fit; an invalid value is one ValueError naming the
parameter and its valid range).  Cross-parameter rules go in
`_check_params`.  The shorthands below name the common constraints.
"""

from __future__ import annotations

import contextlib
from numbers import Integral, Real

import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, is_classifier
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data

from dpbench.privacy import PrivacyLedger, mu_from_epsilon_delta

POSITIVE = [Interval(Real, 0, np.inf, closed="neither")]
NON_NEGATIVE = [Interval(Real, 0, np.inf, closed="left")]
FRACTION = [Interval(Real, 0, 1, closed="neither")]
COUNT = [Interval(Integral, 1, None, closed="left")]
LR_SCHEDULES = ("constant", "1/t", "1/sqrt(t)")
SCHEDULE = [StrOptions(set(LR_SCHEDULES))]
PRIVACY = {"epsilon": POSITIVE, "delta": FRACTION, "random_state": "no_validation"}
FIT_INTERCEPT = {"fit_intercept": ["boolean"]}
CLASSES = {"classes": ["array-like"]}  # a private classifier's public label set [negative, positive]


def check_X_y(X, y=None, *, allow_empty_columns: bool = True, allow_empty_rows: bool = False):
    """Float arrays, finite, matching lengths, non-empty (rows: unless `allow_empty_rows`); ValueError naming
    the problem.  Private fits allow 0 rows: n is not public, so the empty dataset is a neighbour of every
    one-record dataset and must give a model like any other (DESIGN.md, "Failures are releases")."""
    X = np.asarray(X.toarray() if hasattr(X, "toarray") else X)
    if np.iscomplexobj(X):  # a cast to float would drop the imaginary part with only a warning
        raise ValueError("X contains complex numbers: Complex data not supported (dpbench fits real-valued data)")
    X = X.astype(float, copy=False)
    if X.ndim == 1:
        raise ValueError(
            "X must be 2-D (n_samples, n_features). Reshape your data with X.reshape(-1, 1) if it has a single feature"
        )
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D (n_samples, n_features), got shape {X.shape}")
    if X.shape[0] == 0 and not allow_empty_rows:
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
    if np.iscomplexobj(y):
        raise ValueError("y contains complex numbers: Complex data not supported (dpbench fits real-valued data)")
    if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
        raise ValueError("y contains NaN or infinite values")
    return X, y


def validate_fit_data(est, X, y, **kwargs):
    """fit's input checks: dpbench's messages first, then scikit-learn's bookkeeping (n_features_in_, names).

    Private estimators accept 0 rows (see check_X_y); a model with an intercept accepts 0 features.
    """
    private = getattr(est, "private", False)
    check_X_y(X, y, allow_empty_rows=private)
    min_features = 0 if getattr(est, "fit_intercept", False) else 1
    return validate_data(est, X, y, dtype=float, ensure_min_features=min_features,
                         ensure_min_samples=0 if private else 1, **kwargs)


def record_generator(rng: np.random.Generator) -> np.random.Generator:
    """A Generator for per-record draws (random parts, subsamples), seeded by one draw of `rng`.

    Record i gets the i-th draw of its own stream, and `rng` advances by one draw whatever n is, so adding a
    record at the end leaves every other record's draw and everything `rng` draws later unchanged: the
    coupling the per-release sensitivity test (fit D, then D plus a record, same seed) relies on.
    """
    return np.random.default_rng(int(rng.integers(2**63)))


def random_parts(n: int, probabilities, rng: np.random.Generator) -> list[np.ndarray]:
    """Row indices of each part when every row joins part j with probability probabilities[j], independently.

    This is the partition parallel composition needs when n is not public:
    adding or removing a record changes exactly one part by that record and
    leaves the others as they were (cutting a permutation into sizes that
    depend on n would shift records between parts).
    """
    p = np.asarray(probabilities, dtype=float)
    label = np.searchsorted(np.cumsum(p[:-1]) / p.sum(), record_generator(rng).random(n), side="right")
    label = label.astype(np.min_scalar_type(max(p.size - 1, 0)))  # 16-bit labels: numpy's stable sort is a radix sort
    order = np.argsort(label, kind="stable")
    return np.split(order, np.cumsum(np.bincount(label, minlength=p.size))[:-1])


def row_norms(X: np.ndarray) -> np.ndarray:
    """||x_i|| of each row, without overflow: rows whose plain norm overflows (entries near 1e154 and above,
    all finite input) are recomputed scaled by their largest entry, so a finite record never gives inf or NaN."""
    with np.errstate(over="ignore"):
        norms = np.linalg.norm(X, axis=1)
    big = ~np.isfinite(norms)
    if big.any():
        scale = np.abs(X[big]).max(axis=1)
        with np.errstate(over="ignore"):
            norms[big] = scale * np.linalg.norm(X[big] / scale[:, None], axis=1)  # inf only beyond float range
    return norms


def clip_rows(X: np.ndarray, bound: float) -> np.ndarray:
    """Row-norm clipping x * min(1, C / ||x||) (not normalisation); overflow-safe for any finite row."""
    return X * (bound / np.maximum(row_norms(X), bound))[:, None]


def clip_values(v: np.ndarray, bound: float) -> np.ndarray:
    """Scalar clipping to [-bound, bound] (the 1-D case of row-norm clipping)."""
    return np.clip(v, -bound, bound)


def add_intercept_column(X: np.ndarray) -> np.ndarray:
    """Append a constant column.  The constant is data-independent, so clipping after it is still private."""
    return np.hstack([X, np.ones((X.shape[0], 1))])


def step_size(learning_rate: float, schedule: str, t: int) -> float:
    """Step at round t >= 1: the base `learning_rate` times the schedule of paper 000 Table I."""
    if schedule == "constant":
        return learning_rate
    if schedule == "1/t":
        return learning_rate / t
    if schedule == "1/sqrt(t)":
        return learning_rate / np.sqrt(t)
    raise ValueError(f"lr_schedule must be one of {LR_SCHEDULES}, got {schedule!r}")


# scikit-learn checks a private estimator fails by design, and why (DPEstimator._expected_failed_checks).  (Private
# estimators also carry sklearn's `poor_score` tag: a fit of the ~200-row check data at eps = 1 is noise-dominated.)
EMPTY_DATA = ("a private fit returns a model on 0 rows: n is not public, so the empty dataset is a neighbour of "
              "every one-record dataset and raising there would be a release (test_private_fits_accept_zero_rows)")
PUBLIC_CLASSES = ("sklearn's check labels its rows {1, 2}, {0, 1, 2} or strings; a private classifier's label "
                  "set is its public `classes` parameter ([0, 1] here), never read from the rows "
                  "(test_private_classifiers_take_their_label_set_from_classes)")
LABEL_CHECKS = ("check_estimators_dtypes", "check_classifier_data_not_an_array", "check_classifiers_classes",
                "check_fit2d_1feature")
ONE_LABEL = ("sklearn expects a classifier fitted on one class to predict only that class; a private classifier "
             "fitted on one class is a noisy model over its public label set like any other (predicting only "
             "the class seen would release that the rows held one class), so whether the check passes is a draw "
             "of the noise: an estimator that passes it at the test's seed drops it (strict xfail)")


# What a fitted attribute of a private estimator may be (`fitted_attributes`): every one is private.
RELEASE = "release"  # a noisy release recorded in the ledger, or post-processing of such releases
PUBLIC = "public"  # a function of the parameters and the public schema (d, feature names, the label set) only
PRIVACY_PARAMS = ("epsilon", "delta", "random_state", "classes")  # with each class's `budget_shares`

_DIAGNOSTICS = [False]


@contextlib.contextmanager
def nonprivate_diagnostics():
    """The debug switch (off by default): fits inside the block also keep statistics of the private data computed
    *without* noise (TukeyEM's PTR distance k, a private selection's exact votes) in `nonprivate_diagnostics_`.
    An estimator with that attribute is not private: for studies of the algorithms (paper 003 Fig. 2), never
    for results.  Outside the block no fitted attribute holds anything but releases and public values."""
    _DIAGNOSTICS.append(True)
    try:
        yield
    finally:
        _DIAGNOSTICS.pop()


def keep_diagnostics(est, **values) -> None:
    """Store `values` in est.nonprivate_diagnostics_ when `nonprivate_diagnostics` is on; else nothing."""
    if _DIAGNOSTICS[-1]:
        est.nonprivate_diagnostics_ = {**getattr(est, "nonprivate_diagnostics_", {}), **values}


def declared_attributes(cls) -> dict[str, str]:
    """Every fitted attribute `cls` may set -> RELEASE or PUBLIC: the `fitted_attributes` of its classes."""
    out: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        out.update(vars(klass).get("fitted_attributes", {}))
    return out


def privacy_params(cls) -> list[str]:
    """The parameters of `cls` that fix a fit's privacy: its budget, seed, public label set and budget shares.
    A private selection sets the first four itself (neither its `space` nor its `base_params` may), and its
    `space` may not draw a budget share either."""
    names = set(cls().get_params())
    return [p for p in (*PRIVACY_PARAMS, *getattr(cls, "budget_shares", ())) if p in names]


class DPEstimator(BaseEstimator):
    """Parameter checks, the Generator and the ledger of every dpbench estimator.

    `private` says whether fits spend a budget (epsilon, delta) and fill
    `privacy_ledger_`; non-private baselines leave it empty.  A private estimator declares each attribute its
    fit sets (`fitted_attributes`, merged over its base classes: `declared_attributes`) as RELEASE or PUBLIC;
    a test walks the attributes after fits on neighbouring datasets and fails on any other.
    """

    private = True
    # its ledger is pure mu-GDP (one budget mu split among Gaussian releases), so k fits at mu / sqrt(k) each
    # compose to mu; algorithms charged in (eps, delta) (their own accountants) set False
    composes_in_gdp = True
    budget_shares: tuple[str, ...] = ()  # parameters that split the budget among the releases
    # whether sklearn's one-class check passes at the registry test's seed: a draw of the noise (ONE_LABEL), so
    # a classifier that passes it says so here (strict xfail)
    one_label_check_passes = False
    fitted_attributes = {"privacy_ledger_": RELEASE, "n_features_in_": PUBLIC, "feature_names_in_": PUBLIC}

    def _check_params(self) -> None:
        """Cross-parameter rules (single-parameter ones are in _parameter_constraints)."""

    def _expected_failed_checks(self) -> dict[str, str]:
        """scikit-learn checks this estimator fails by design: check name -> why.  The test suite passes them to
        `parametrize_with_checks(expected_failed_checks=...)`, so a new algorithm declares its own here (a
        subclass adds to super()'s), not in a test list."""
        if not self.private:
            return {}
        failures = {"check_estimators_empty_data_messages": EMPTY_DATA}
        if is_classifier(self):
            failures.update(dict.fromkeys(LABEL_CHECKS, PUBLIC_CLASSES))
            if not self.one_label_check_passes:
                failures["check_classifiers_one_label"] = ONE_LABEL
        return failures

    def _start_fit(self) -> tuple[np.random.Generator, float | None]:
        self._validate_params()
        self._check_params()
        self.privacy_ledger_ = PrivacyLedger()
        mu = mu_from_epsilon_delta(self.epsilon, self.delta) if self.private else None
        return np.random.default_rng(self.random_state), mu

    def batch_key(self):
        """Runs whose estimators have equal keys can be fitted together by `fit_batch`; None: fit alone."""
        return None

    @classmethod
    def fit_batch(cls, estimators: list, X, y, shared=None) -> list:
        """Fit every estimator (of this class, equal `batch_key`s) on the same (X, y); returns them.

        The default fits them one by one; an algorithm with a batched path
        (several runs' products as one matrix-matrix product, `shared` work
        computed once) overrides it and gives, run for run, the same result
        as `fit` with the same seed.
        """
        return [est.fit(X, y) for est in estimators]



def private_tags(est, tags):
    """sklearn tags of a dpbench estimator, called by the classes that set the task's tags (after the mixins):
    a private fit is deterministic given random_state (sklearn's checks run in full), but a fit of the
    ~200-row check data at eps = 1 is noise-dominated (`poor_score`: the score checks expect less)."""
    if est.private and tags.regressor_tags is not None:
        tags.regressor_tags.poor_score = True
    if est.private and tags.classifier_tags is not None:
        tags.classifier_tags.poor_score = True
    return tags


class LinearFeatureMap:
    """The model is linear in the *feature map* phi(x): x with a constant column appended when
    `fit_intercept`, then, for estimators with `clips_features`, row-clipped at `x_bound`.  The map is
    data-independent, so it is applied identically at fit and predict time (as the BoostedAdaSSP authors do).
    """

    clips_features = False
    fitted_attributes = {"theta_": RELEASE, "coef_": RELEASE, "intercept_": RELEASE}

    def _features(self, X: np.ndarray) -> np.ndarray:
        if getattr(self, "fit_intercept", False):
            X = add_intercept_column(X)
        return clip_rows(X, self.x_bound) if self.clips_features else X

    def feature_key(self) -> tuple:
        """(fit_intercept, clip bound or None): what `SharedData.features` needs to build phi(X)."""
        return bool(getattr(self, "fit_intercept", False)), (self.x_bound if self.clips_features else None)

    @classmethod
    def _begin_batch(cls, estimators: list, X, y, y_numeric: bool = True):
        """fit's preamble for a batch: each run's checks, Generator, ledger and mu; the data validated once."""
        starts = [est._start_fit() for est in estimators]
        first = estimators[0]
        X, y = validate_fit_data(first, X, y, y_numeric=y_numeric)
        for est in estimators[1:]:
            est.n_features_in_ = first.n_features_in_
            if hasattr(first, "feature_names_in_"):
                est.feature_names_in_ = first.feature_names_in_
        return starts, X, y


class DPLinearRegressor(LinearFeatureMap, RegressorMixin, DPEstimator):
    """Base of the linear regressors: `coef_`/`intercept_` are the weights on phi(x).

    Subclasses implement `_fit_theta(Phi, y, mu, rng, ledger) -> theta` on
    validated float arrays; `mu` is the GDP budget equivalent to (epsilon,
    delta), or None for non-private estimators.
    """

    def fit(self, X, y):
        rng, mu = self._start_fit()
        X, y = validate_fit_data(self, X, y, y_numeric=True)
        self._set_theta(self._fit_theta(self._features(X), y, mu, rng, self.privacy_ledger_))
        return self

    def __sklearn_tags__(self):
        return private_tags(self, super().__sklearn_tags__())

    def _set_theta(self, theta) -> None:
        theta = self.theta_ = np.asarray(theta, dtype=float)
        if getattr(self, "fit_intercept", False):
            self.coef_, self.intercept_ = theta[:-1], float(theta[-1])
        else:
            self.coef_, self.intercept_ = theta, 0.0

    def predict(self, X):
        check_is_fitted(self, "theta_")
        X = validate_data(self, check_X_y(X), dtype=float, reset=False, ensure_min_features=0)
        return self._features(X) @ self.theta_


class ZeroModel:
    """The data-independent fallback model: prediction 0 (classifiers: score 0, the negative class).  A private
    selection's failed candidate; DP-EBM's regressor when its label range was not found."""

    fit_status_ = "candidate_failed"

    def __init__(self, classes=None):
        self.classes_ = None if classes is None else np.asarray(classes)

    def decision_function(self, X):
        return np.zeros(len(X))

    def predict(self, X):
        return np.zeros(len(X)) if self.classes_ is None else np.full(len(X), self.classes_[0])


def released_zero_model(est) -> bool | None:
    """Whether a fitted estimator released the all-zero linear model (the fallback of TukeyEM, DP-ROBGD,
    DP-AMBSSGD, a selection's failed candidate), read from its coefficients; None for a model without them."""
    model = getattr(est, "model_", est)
    if isinstance(model, ZeroModel):
        return True
    theta = getattr(model, "theta_", None)
    return None if theta is None else not bool(np.any(theta))


def binary_labels(y) -> tuple[np.ndarray, np.ndarray]:
    """(classes_, y01): the two sorted classes found in y and y coded 0/1 (1 = classes_[1]).

    Non-private classifiers only: a private one reads its label set from the public `classes` parameter
    (`public_binary_labels`), since whether the rows hold one class or two is private.
    """
    y_type = type_of_target(y, input_name="y", raise_unknown=True)
    if y_type != "binary":
        raise ValueError(f"Only binary classification is supported. The type of the target is {y_type}.")
    classes, y01 = np.unique(y, return_inverse=True)
    if len(classes) != 2:
        raise ValueError(f"y has only 1 class ({classes[0]!r}); binary classification needs two")
    return classes, y01.astype(float)


def public_binary_labels(y, classes) -> tuple[np.ndarray, np.ndarray]:
    """(classes_, y01) for a private classifier: the label set is the public `classes` = [negative, positive]
    (the dataset schema's; default [0, 1]), never read from the rows, so a fit on rows of one class, or of none,
    is a fit like any other.  A label outside the set is outside the data domain: ValueError naming it."""
    classes = np.asarray(classes)
    if classes.ndim != 1 or len(classes) != 2 or classes[0] == classes[1]:
        raise ValueError(f"classes must be two distinct labels [negative, positive], got {classes.tolist()!r}")
    y = np.asarray(y)
    y_type = type_of_target(y, input_name="y", raise_unknown=True)
    if y_type == "continuous":
        raise ValueError("Unknown label type: continuous. A classifier needs labels from its public label set "
                         f"classes={classes.tolist()}")
    if y_type != "binary":
        raise ValueError(f"Only binary classification is supported. The type of the target is {y_type}.")
    positive, negative = y == classes[1], y == classes[0]
    if not np.all(positive | negative):
        outside = np.unique(y[~(positive | negative)])[:5].tolist()
        raise ValueError(f"y holds label(s) {outside} outside the public label set classes={classes.tolist()}; "
                         "pass classes=[negative, positive]")
    return classes, positive.astype(float)


class DPClassifier(ClassifierMixin, DPEstimator):
    """Base of dpbench's binary classifiers: validation, binary labels, seeding, the ledger.

    fit sets classes_ (sorted; classes_[1] is the positive class) and calls
    `_fit_model(X, y01, mu, rng, ledger)` with y01 in {0, 1}.  predict
    thresholds `decision_function` at 0.
    """

    fitted_attributes = {"classes_": PUBLIC}  # a private classifier's is its `classes` parameter

    def fit(self, X, y):
        rng, mu = self._start_fit()
        X, y = validate_fit_data(self, X, y)
        self.classes_, y01 = self._labels(y)
        self._fit_model(X, y01, mu, rng, self.privacy_ledger_)
        return self

    def _labels(self, y) -> tuple[np.ndarray, np.ndarray]:
        """(classes_, y01): a private classifier's label set is its public `classes` parameter."""
        return public_binary_labels(y, self.classes) if self.private else binary_labels(y)

    def _validated_X(self, X):
        check_is_fitted(self, "classes_")
        return validate_data(self, check_X_y(X), dtype=float, reset=False, ensure_min_features=0)

    def predict(self, X):
        score = self.decision_function(X)  # checks fitted first
        return self.classes_[(score > 0).astype(int)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return private_tags(self, tags)


class DPLinearClassifier(LinearFeatureMap, DPClassifier):
    """Linear score s(x) = theta^T phi(x).  Subclasses implement `_fit_theta(Phi, y01, mu, rng, ledger)`.

    coef_ has sklearn's binary shape (1, n_features), intercept_ shape (1,).
    """

    def _fit_model(self, X, y01, mu, rng, ledger):
        self._set_theta(self._fit_theta(self._features(X), y01, mu, rng, ledger))

    def _set_theta(self, theta) -> None:
        theta = self.theta_ = np.asarray(theta, dtype=float)
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
