"""DP-EBM (Nori et al. 2021): interpret's differentially private explainable boosting, with public bounds only.

interpret does its own privacy accounting (GDP; a fraction `bin_budget_frac`
of epsilon and delta/2 for private binning, the rest for boosting, composed
basically to exactly (epsilon, delta)), so the ledger holds one (epsilon,
delta) entry.  What dpbench adds is that nothing is read from the data:

- every feature is clipped to [-x_bound, x_bound] and interpret is told
  `privacy_bounds` = (-x_bound, x_bound) for each (Table I's data clipping
  bound; a per-value bound here, not BoostedAdaSSP's row-norm bound);
- the regression target is clipped to [-y_bound, y_bound], passed as
  `privacy_target_min/max`;
- `feature_types` are passed explicitly (None means all 'continuous'; the
  runner passes the dataset's schema types), so interpret's data-dependent
  type detection never runs;
- interpret is seeded with an int drawn from the Generator of random_state.
  interpret warns that a fixed seed makes its noise deterministic; that is
  the reproducibility contract of every dpbench estimator (a run is
  replayable from its row), so that one warning is silenced.

interpret runs single-threaded (n_jobs=1): the runner parallelises over runs.
If interpret fails (e.g. its budget allocation has no solution at tiny
epsilon, paper 001 App. A.3), fit raises RuntimeError and the runner records
a failed run.
"""

from __future__ import annotations

import warnings

import numpy as np
from interpret.privacy import DPExplainableBoostingClassifier, DPExplainableBoostingRegressor
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from dpbench.algorithms.base import check_positive, check_positive_int, check_X_y, clip_values
from dpbench.algorithms.classification import DPClassifier
from dpbench.algorithms.registry import CLIP_BOUND, ITERATIONS, LEAVES, AlgorithmSpec, register
from dpbench.privacy import PrivacyLedger, check_epsilon_delta

FEATURE_TYPES = ("continuous", "nominal")
_SEED_WARNING = "Privacy violation: using a fixed random_state"


class _DPEBMMixin:
    """What the regressor and the classifier share: parameter checks, bounds, seeding, the interpret call."""

    def _check_ebm_params(self) -> None:
        check_epsilon_delta(self.epsilon, self.delta)
        check_positive("x_bound", self.x_bound)
        check_positive_int("max_rounds", self.max_rounds)
        check_positive_int("max_leaves", self.max_leaves)
        check_positive("learning_rate", self.learning_rate)
        if check_positive_int("max_bins", self.max_bins) < 3:
            raise ValueError(f"max_bins must be an integer >= 3, got {self.max_bins!r}")
        if check_positive("bin_budget_frac", self.bin_budget_frac) >= 1:
            raise ValueError(f"bin_budget_frac must lie strictly between 0 and 1, got {self.bin_budget_frac!r}")

    def _feature_types(self, d: int) -> list[str]:
        if self.feature_types is None:
            return ["continuous"] * d
        types = list(self.feature_types)
        if len(types) != d:
            raise ValueError(f"feature_types has {len(types)} entries but X has {d} features")
        bad = sorted({t for t in types if t not in FEATURE_TYPES}, key=str)
        if bad:
            raise ValueError(f"feature_types entries must be one of {FEATURE_TYPES}, got {bad}")
        return types

    def _fit_interpret(self, cls, X, y, rng, ledger: PrivacyLedger, **target_bounds):
        d = X.shape[1]
        model = cls(
            feature_types=self._feature_types(d),
            privacy_bounds=np.tile([-self.x_bound, self.x_bound], (d, 1)).astype(float),
            max_rounds=self.max_rounds,
            max_leaves=self.max_leaves,
            learning_rate=self.learning_rate,
            max_bins=self.max_bins,
            bin_budget_frac=self.bin_budget_frac,
            epsilon=self.epsilon,
            delta=self.delta,
            n_jobs=1,
            random_state=int(rng.integers(2**31 - 1)),
            **target_bounds,
        )
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=_SEED_WARNING)
            try:
                model.fit(clip_values(X, self.x_bound), y)
            except Exception as exc:  # noqa: BLE001 - any interpret failure is a failed run, said clearly
                raise RuntimeError(
                    f"DP-EBM (interpret) failed to fit at epsilon={self.epsilon}, delta={self.delta}: "
                    f"{type(exc).__name__}: {str(exc).rstrip('.')}. At small epsilon interpret's privacy budget "
                    "allocation can have no solution (paper 001, App. A.3)."
                ) from exc
        domain = 2 * target_bounds["privacy_target_max"] if target_bounds else 1.0
        ledger.record_dp("DP-EBM binning and boosting (interpret's GDP accounting)", "interpret_dp_ebm",
                         self.epsilon, self.delta, sensitivity=domain * self.learning_rate,
                         noise_scale=float(model.noise_scale_boosting_))
        return model

    def _predict_X(self, X):
        check_is_fitted(self, "model_")
        return clip_values(validate_data(self, check_X_y(X), dtype=float, reset=False), self.x_bound)


class DPEBMRegressor(_DPEBMMixin, RegressorMixin, BaseEstimator):
    """DP-EBM regressor (interpret's DPExplainableBoostingRegressor) with data-independent bounds.

    Defaults are interpret's DP defaults, which are the settings of the DP-EBM
    paper (max_bins 32, learning_rate 0.01, 300 rounds, 3 leaves, 10% of
    epsilon for binning), with x_bound = y_bound = 1 as for BoostedAdaSSP.
    The ledger entry's sensitivity / noise_scale are those of one boosting
    update (2 y_bound * learning_rate; interpret's per-update noise std).
    """

    private = True

    def __init__(
        self,
        epsilon=1.0,
        delta=1e-6,
        x_bound=1.0,
        y_bound=1.0,
        max_rounds=300,
        max_leaves=3,
        learning_rate=0.01,
        max_bins=32,
        bin_budget_frac=0.1,
        feature_types=None,
        random_state=None,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.x_bound = x_bound
        self.y_bound = y_bound
        self.max_rounds = max_rounds
        self.max_leaves = max_leaves
        self.learning_rate = learning_rate
        self.max_bins = max_bins
        self.bin_budget_frac = bin_budget_frac
        self.feature_types = feature_types
        self.random_state = random_state

    def fit(self, X, y):
        self._check_ebm_params()
        check_positive("y_bound", self.y_bound)
        check_X_y(X, y)
        X, y = validate_data(self, X, y, dtype=float, y_numeric=True)
        self.privacy_ledger_ = PrivacyLedger()
        rng = np.random.default_rng(self.random_state)
        self.model_ = self._fit_interpret(
            DPExplainableBoostingRegressor, X, clip_values(y, self.y_bound), rng, self.privacy_ledger_,
            privacy_target_min=-float(self.y_bound), privacy_target_max=float(self.y_bound),
        )
        return self

    def predict(self, X):
        X = self._predict_X(X)  # checks fitted first
        return self.model_.predict(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = True
        return tags


class DPEBMClassifier(_DPEBMMixin, DPClassifier):
    """DP-EBM binary classifier (interpret's DPExplainableBoostingClassifier) with data-independent bounds.

    Labels are bounded by construction (interpret's domain size 1).  Defaults
    as DPEBMRegressor except max_leaves = 100, the setting of paper 001's
    main figures.  decision_function is interpret's log-odds.
    """

    def __init__(
        self,
        epsilon=1.0,
        delta=1e-6,
        x_bound=1.0,
        max_rounds=300,
        max_leaves=100,
        learning_rate=0.01,
        max_bins=32,
        bin_budget_frac=0.1,
        feature_types=None,
        random_state=None,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.x_bound = x_bound
        self.max_rounds = max_rounds
        self.max_leaves = max_leaves
        self.learning_rate = learning_rate
        self.max_bins = max_bins
        self.bin_budget_frac = bin_budget_frac
        self.feature_types = feature_types
        self.random_state = random_state

    def _validate_params(self):
        self._check_ebm_params()

    def _fit_model(self, X, y01, mu, rng, ledger):
        self.model_ = self._fit_interpret(DPExplainableBoostingClassifier, X, y01.astype(int), rng, ledger)

    def decision_function(self, X):
        X = self._predict_X(X)  # checks fitted first
        return self.model_.decision_function(X)

    def predict_proba(self, X):
        X = self._predict_X(X)  # checks fitted first
        return self.model_.predict_proba(X)


register(AlgorithmSpec(
    "dp_ebm", DPEBMRegressor, "regression", private=True,
    fixed_params={"x_bound": 1.0, "y_bound": 1.0, "max_rounds": 300, "max_leaves": 3},
    tuning_space={"x_bound": CLIP_BOUND, "y_bound": CLIP_BOUND, "max_rounds": ITERATIONS, "max_leaves": LEAVES},
    description="DP-EBM (interpret): private explainable boosting with random-split trees",
))
register(AlgorithmSpec(
    "dp_ebm_clf", DPEBMClassifier, "classification", private=True,
    fixed_params={"x_bound": 1.0, "max_rounds": 300, "max_leaves": 100},
    tuning_space={"x_bound": CLIP_BOUND, "max_rounds": ITERATIONS, "max_leaves": LEAVES},
    description="DP-EBM classifier (interpret); paper 001's tree-boosting partner",
))
