"""Private hyperparameter selection (beyond the papers): tuning that pays for itself.

`tuning_mode: private_selection` runs an algorithm through this estimator.  It spends the run's whole
(eps, delta) on choosing *and* fitting, so its rows are what honest tuning costs:

1. Every record goes to the validation part with probability `validation_fraction`, independently (so
   one record changes one part, whatever n is), else to the fit part.
2. K = `n_candidates` settings are drawn at random from `space` (a sweep passes the algorithm's tuning space,
   paper 000 Table I's ranges, `dpbench.tuning.spaces`) with the run's generator: data-independent, so no
   adaptive search on private scores.
3. Each candidate is fitted on the fit part.  GDP algorithms (`composes_in_gdp`): each at mu / sqrt(K),
   composing to the run's mu; others at (eps / K, delta / K), basic composition.
4. Selection on the validation part by the exponential mechanism at the run's full epsilon: each
   validation record gives one vote, split equally among the candidates with the smallest error on it
   (squared error for regressors, 0-1 error for classifiers: `private_selection_clf`), and
   P(k) ~ exp(eps votes_k).  Adding a record raises every vote count by its share (in [0, 1], summing to
   1) and removing one lowers every count: the counts are monotone in the data with sensitivity 1 (whatever
   the label scale), so the exponential mechanism needs no factor 1/2 (McSherry & Talwar 2007; the log
   probability of k moves by its own change minus that of the normaliser, both in [0, eps] or both in
   [-eps, 0]): (eps, 0)-DP in the validation part.  (Before: exp(eps votes_k / 2), half the budget unused.)
5. The chosen candidate, as fitted on the fit part, is the model.

Failures are releases (DESIGN.md): a fit or validation part can be empty or one-class whenever the data are
small, so a candidate that raises, or whose predictions on the public probe 0, e_1, ..., e_d are not finite,
is replaced by the fallback (the zero model: prediction 0, score 0) before the
vote; the selection goes on.  The fit accepts n = 0; the classifier's label set is its public `classes`,
passed on to every candidate.

Privacy: the two parts are disjoint and assigned per record at random, so by parallel composition the
whole is max((eps, delta) of the K fits, (eps, 0) of the selection) = (eps, delta).  The ledger keeps
every candidate's ledger and the selection (`SelectionLedger`).  This is report-noisy-max over a random
finite grid with the data split between training and selection; Liu and Talwar (2019) select from private
candidates without splitting, at a constant factor of the budget, which dpbench does not implement.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np
from sklearn.base import ClassifierMixin, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from dpbench.algorithms.base import (
    CLASSES,
    COUNT,
    FRACTION,
    PRIVACY,
    PRIVACY_PARAMS,
    PUBLIC,
    RELEASE,
    DPEstimator,
    ZeroModel,
    keep_diagnostics,
    privacy_params,
    private_tags,
    public_binary_labels,
    record_generator,
    validate_fit_data,
)
from dpbench.algorithms.registry import algorithm, get_spec, make
from dpbench.algorithms.spaces import check_space, draw
from dpbench.privacy import PrivacyLedger, epsilon_from_mu_delta, exponential_mechanism
from dpbench.privacy.composition import PARALLEL, tag
from dpbench.privacy.mechanisms import release_part


@dataclass
class SelectionLedger(PrivacyLedger):
    """The selection's ledger: its own exponential-mechanism entry (part 'validation') and the candidates'
    ledgers (part 'fit'); `entries` lists all of them (candidates' names prefixed fit/c<k>/) so the noise
    tests see every draw.  Spent: the max over the two parts of (K candidates composed, selection)."""

    candidates: list = field(default_factory=list)
    gdp: bool = True

    def fit_part(self, delta: float) -> tuple[float, float]:
        if not self.candidates:
            return 0.0, 0.0
        if self.gdp:
            mu = math.sqrt(sum(c.total_mu() ** 2 for c in self.candidates))
            return epsilon_from_mu_delta(mu, delta), delta
        spent = [c.epsilon_delta(delta / len(self.candidates)) for c in self.candidates]
        return sum(e for e, _ in spent), sum(d for _, d in spent)

    def _unit_epsilon_delta(self, delta: float) -> tuple[float, float]:
        fit_eps, fit_delta = self.fit_part(delta)
        own = [e for e in self.entries if e.name.startswith("validation/")]
        sel_eps, sel_delta = sum(e.epsilon * e.count for e in own), sum(e.delta * e.count for e in own)
        return max(fit_eps, sel_eps), max(fit_delta, sel_delta)

    def total_mu(self) -> float:
        raise ValueError("a private selection is charged in (epsilon, delta); use epsilon_delta()")


def _fitted_or_fallback(est, X_fit, y_fit, fallback):
    """`est` fitted on the fit part, or `fallback` if the fit raises or the model is not finite at the public
    probe 0, e_1, ..., e_d (whether a candidate fails depends on the fit part: never an exception).  Nothing of
    the validation part enters this decision: one validation record must move the votes only (a prediction that
    overflows on a validation row is that row's worst error, `votes`)."""
    probe = np.vstack([np.zeros((1, X_fit.shape[1])), np.eye(X_fit.shape[1])])
    try:
        with np.errstate(all="ignore"):
            est.fit(X_fit, y_fit)
            scores = est.decision_function(probe) if hasattr(est, "decision_function") else est.predict(probe)
        if np.all(np.isfinite(np.asarray(scores, dtype=float))):
            return est
    except Exception:  # noqa: BLE001 - any failure is replaced, by design (module docstring)
        pass
    return fallback


def votes(errors: np.ndarray) -> np.ndarray:
    """errors (n_val x K) -> each candidate's votes: a record's one vote split among its smallest errors (a NaN
    error, from a prediction that overflowed, counts as the worst)."""
    errors = np.where(np.isnan(errors), np.inf, errors)
    best = errors == errors.min(axis=1, keepdims=True)
    return (best / best.sum(axis=1, keepdims=True)).sum(axis=0)


class _PrivateSelection(DPEstimator):
    """The selection (module docstring) over `algorithm`'s candidates; subclasses give the per-record error."""

    task = "regression"  # of the algorithms selected among
    # candidates_: drawn from `space` by the run's Generator before the data is read; failed_candidates_:
    # post-processing of the candidates' releases (a private candidate's fit raising or not is one of them)
    fitted_attributes = {"candidates_": PUBLIC, "chosen_": RELEASE, "chosen_params_": RELEASE, "model_": RELEASE,
                         "fit_status_": RELEASE, "failed_candidates_": RELEASE}
    composes_in_gdp = False  # the selection is charged in (epsilon, delta) (SelectionLedger)
    _parameter_constraints = {**PRIVACY, "algorithm": [str], "base_params": [dict, None],
                              "n_candidates": COUNT, "validation_fraction": FRACTION, "space": [dict, None]}

    def __init__(self, epsilon=1.0, delta=1e-6, algorithm="adassp", base_params=None, n_candidates=8,
                 validation_fraction=0.2, space=None, random_state=None):
        self.epsilon = epsilon
        self.delta = delta
        self.algorithm = algorithm
        self.base_params = base_params
        self.n_candidates = n_candidates
        self.validation_fraction = validation_fraction
        # {name: range} the candidates are drawn from (algorithms.spaces); None or {}: every candidate is the
        # base setting, differing in its noise only.  A sweep passes the tuning space minus what the run pins.
        self.space = space
        self.random_state = random_state

    def _check_params(self) -> None:
        spec = get_spec(self.algorithm)
        if not spec.private or spec.task != self.task:
            raise ValueError(f"{type(self).__name__} needs a private {self.task} algorithm; got {self.algorithm!r}")
        check_space(self.space)
        # the selection sets the candidates' budget, seed and label set; a budget share is the run's one public
        # setting (base_params, as a sweep passes it), never drawn per candidate
        fixed = privacy_params(spec.estimator)
        own = [p for p in fixed if p in PRIVACY_PARAMS]
        for where, params, forbidden in (("space", self.space, fixed), ("base_params", self.base_params, own)):
            bad = [p for p in forbidden if p in (params or {})]
            if bad:
                raise ValueError(f"{where} sets {bad[0]!r}, a parameter that fixes the candidates' privacy (the "
                                 f"selection sets {', '.join(own)} itself; budget shares are not searched); "
                                 f"remove it from {where}")

    @staticmethod
    def _errors(model, X, y) -> np.ndarray:
        raise NotImplementedError

    def _classes(self):
        """The public label set (classifiers), None for regressors."""
        return None

    def _candidate_params(self) -> dict:
        return {}

    def _select(self, X, y, rng, mu):
        spec, k = get_spec(self.algorithm), self.n_candidates
        gdp = spec.estimator.composes_in_gdp
        ledger = self.privacy_ledger_ = SelectionLedger(accountant=PARALLEL, gdp=gdp)
        if gdp:
            budget = {"epsilon": epsilon_from_mu_delta(mu / math.sqrt(k), self.delta), "delta": self.delta}
        else:
            budget = {"epsilon": self.epsilon / k, "delta": self.delta / k}
        space = check_space(self.space)
        self.candidates_ = [{n: draw(r, rng) for n, r in space.items()} for _ in range(k)]  # data-free
        val = record_generator(rng).random(len(y)) < self.validation_fraction
        fit = ~val
        models = []
        for i, params in enumerate(self.candidates_):
            est = make(self.algorithm, **{**(self.base_params or {}), **params, **self._candidate_params(),
                                          **budget}, random_state=rng)  # _check_params: no overlap
            with release_part("fit"):  # disjoint from the validation part (the per-release test checks it)
                models.append(_fitted_or_fallback(est, X[fit], y[fit], ZeroModel(self._classes())))
            if hasattr(est, "privacy_ledger_"):  # a candidate that failed still spent what it released
                ledger.candidates.append(est.privacy_ledger_)
                ledger.entries.extend(replace(e, name=tag(f"fit/c{i}", e.name))
                                      for e in est.privacy_ledger_.entries)
        self.failed_candidates_ = [i for i, m in enumerate(models) if isinstance(m, ZeroModel)]
        with np.errstate(over="ignore", invalid="ignore"):
            errors = np.column_stack([self._errors(m, X[val], y[val]) for m in models]) if val.any() \
                else np.zeros((0, k))
        counts = votes(errors) if len(errors) else np.zeros(k)  # exact: their sum is the validation part's size
        keep_diagnostics(self, votes=counts)
        self.chosen_ = exponential_mechanism(self.epsilon * counts, self.epsilon, 0.0, rng, ledger,
                                             tag("validation", "selection"))
        self.model_ = models[self.chosen_]
        self.chosen_params_ = self.candidates_[self.chosen_]
        self.fit_status_ = getattr(self.model_, "fit_status_", "ok")
        return self

    def predict(self, X):
        check_is_fitted(self, "model_")
        return self.model_.predict(X)


@algorithm("private_selection",
           description="private hyperparameter selection (beyond the papers): K random candidates on a fit part, "
                       "exponential-mechanism vote on a validation part")
class PrivateSelectionRegressor(RegressorMixin, _PrivateSelection):
    """Select among `n_candidates` random settings of `algorithm` privately (module docstring); the base
    params fix the rest.  A validation record votes for the candidates with the smallest squared error on
    it.  Default base: AdaSSP (the audit and the ledger tests fit it as is)."""

    @staticmethod
    def _errors(model, X, y):
        return (model.predict(X) - y) ** 2

    def fit(self, X, y):
        rng, mu = self._start_fit()
        X, y = validate_fit_data(self, X, y, y_numeric=True)
        return self._select(X, y, rng, mu)

    def __sklearn_tags__(self):
        return private_tags(self, super().__sklearn_tags__())


@algorithm("private_selection_clf",
           description="private hyperparameter selection for classifiers (beyond the papers): K random "
                       "candidates on a fit part, exponential-mechanism vote on a validation part")
class PrivateSelectionClassifier(ClassifierMixin, _PrivateSelection):
    """The selection for binary classifiers: a validation record votes for the candidates that classify it
    correctly (0-1 error; split among all if none does), so the vote is by accuracy, not by F1 (F1 is not a
    sum over records and has no sensitivity-1 vote).  Default base: BoostedAdaSSP's classifier."""

    task = "classification"
    fitted_attributes = {"classes_": PUBLIC}  # its `classes` parameter
    _parameter_constraints = {**_PrivateSelection._parameter_constraints, **CLASSES}

    def __init__(self, epsilon=1.0, delta=1e-6, algorithm="boosted_adassp_clf", base_params=None, n_candidates=8,
                 validation_fraction=0.2, space=None, classes=(0, 1), random_state=None):
        super().__init__(epsilon, delta, algorithm, base_params, n_candidates, validation_fraction, space,
                         random_state)
        self.classes = classes

    @staticmethod
    def _errors(model, X, y):
        return (model.predict(X) != y).astype(float)

    def _classes(self):
        return self.classes_

    def _candidate_params(self) -> dict:
        return {"classes": self.classes}

    def fit(self, X, y):
        rng, mu = self._start_fit()
        X, y = validate_fit_data(self, X, y)
        self.classes_, _ = public_binary_labels(y, self.classes)  # the labels themselves go to the candidates
        return self._select(X, y, rng, mu)

    def decision_function(self, X):
        check_is_fitted(self, "model_")
        return self.model_.decision_function(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return private_tags(self, tags)


__all__ = ["PrivateSelectionClassifier", "PrivateSelectionRegressor", "SelectionLedger", "ZeroModel", "votes"]
