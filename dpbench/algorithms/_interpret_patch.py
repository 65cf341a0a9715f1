"""interpret's DP internals that dpbench's DP-EBM replaces during its own fits, in one module.

Everything that reads or patches interpret's private code is here (changes 1, 2, 3 and 5 of dp_ebm.py's
docstring, and the fingerprints of interpret 0.7.8's sources they were checked against), so an interpret
upgrade touches this file only.  One replacement is for speed alone: `dp_boost` runs interpret's DP boosting
loop (`_boost.boost` in the configuration DP-EBM uses) without a Python step and a ctypes call per leaf, its
native calls' pointers made once per fit (1.12-1.25x less CPU per DP-EBM fit on adult, cod-rna and telco), and
fits the same model bit for bit (tested against interpret's loop).  dp_ebm.py imports this module when a DP-EBM
is fitted: importing dpbench.algorithms does not import interpret.
"""

from __future__ import annotations

import ctypes as ct
import hashlib
import importlib
import inspect
import math
import threading
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
from interpret import develop
from interpret.privacy import DPExplainableBoostingClassifier, DPExplainableBoostingRegressor
from interpret.utils._native import Booster, Native

from dpbench.privacy import mu_from_epsilon_delta
from dpbench.privacy.mechanisms import noise_weakening, report_release

SEED_WARNING = "Privacy violation: using a fixed random_state"  # interpret's, silenced (dp_ebm.py's docstring)
BINNING_RELEASE = "DP-EBM binning: noisy histogram of one clipped feature"  # reported per feature

# ---------------------------------------------------------------------------------------------------------
# interpret internals the privacy argument reads, and their source fingerprints in interpret 0.7.8
# ---------------------------------------------------------------------------------------------------------
VERIFIED_INTERPRET = "0.7.8"
_VERIFIED_SOURCES = {
    ("interpret.utils._privacy", "private_numeric_binning"): "ad5a96d7661c06dd",
    ("interpret.utils._preprocessor", "EBMPreprocessor.fit"): "73fb73673d450be8",
    ("interpret.glassbox._ebm._boost", "boost"): "4d1e6327c17b76e6",
    ("interpret.glassbox._ebm._ebm", "EBMModel.fit"): "aa55bbd976b161d6",
    ("interpret.glassbox._ebm._utils", "process_terms"): "e38a11b2bd07086e",
    ("interpret.glassbox._ebm._utils", "process_bag_terms"): "1d7e6078a04497e4",
    ("interpret.glassbox._ebm._utils", "make_bag"): "7d94b9786d5e4c60",
    ("interpret.utils._native", "Booster"): "4c36db22a6f128ad",
    ("interpret.utils._native", "Native.generate_seed"): "2fc1c67fb30fada2",  # called as it calls (`_NativeSteps`)
}
# what dpbench swaps in during its fits: (module, attribute)
_PRE = "interpret.utils._preprocessor"
_SWAPPED = (
    (_PRE, "private_numeric_binning"),
    (_PRE, "private_categorical_binning"),
    (_PRE, "calc_gdp_noise_multi"),
    ("interpret.glassbox._ebm._ebm", "calc_gdp_noise_multi"),
    ("interpret.glassbox._ebm._boost", "Booster"),
    ("interpret.glassbox._ebm._ebm", "boost"),  # speed only: the same computation (`dp_boost`)
)


class InterpretChangedError(RuntimeError):
    """interpret's DP internals are not those dpbench's privacy argument was checked against."""


def _resolve(module: str, dotted: str):
    obj = importlib.import_module(module)
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj


_FINGERPRINTS: dict[int, tuple[object, str]] = {}  # id -> (object, fingerprint): each source is read once


def _fingerprint(obj) -> str:
    cached = _FINGERPRINTS.get(id(obj))
    if cached is None or cached[0] is not obj:
        source = inspect.getsource(obj).replace("\r\n", "\n")
        cached = _FINGERPRINTS[id(obj)] = (obj, hashlib.sha256(source.encode()).hexdigest()[:16])
    return cached[1]


# ---------------------------------------------------------------------------------------------------------
# change 2: the merge threshold from the noisy histogram
# ---------------------------------------------------------------------------------------------------------
def merge_noisy_histogram(noisy_weights: np.ndarray, edges: np.ndarray, max_bins: int):
    """interpret's greedy merge (utils/_privacy.py:113-139) with threshold = noisy total / max_bins.

    A function of the noisy (clipped) histogram and the public edges only.  Returns (cuts, bin_weights) as
    interpret does: bin_weights a list starting with the missing bin's 0.
    """
    target_weight = float(np.sum(noisy_weights)) / max_bins
    bin_weights, bin_cuts = [0], [edges[0]]
    curr_weight = 0
    for index, right_edge in enumerate(edges[1:]):
        curr_weight += noisy_weights[index]
        if curr_weight >= target_weight:
            bin_cuts.append(right_edge)
            bin_weights.append(curr_weight)
            curr_weight = 0
    if len(bin_weights) == 1:
        bin_weights.append(target_weight)
        bin_cuts = np.empty(0, dtype=np.float64)
    else:
        bin_cuts = np.array(bin_cuts, dtype=np.float64)[1:-1]
        bin_weights[-1] += curr_weight
    return bin_cuts, bin_weights


def public_threshold_numeric_binning(X_col, sample_weight, noise_scale, max_bins, min_feature_val,
                                     max_feature_val, rng=None):
    """interpret's private_numeric_binning (same signature, same noise draws) with a private merge threshold.

    The histogram is dpbench's release (L2 sensitivity 1), reported to `mechanisms.recorded_releases` so the
    per-release and noise tests see it like any other."""
    if sample_weight is not None:
        raise RuntimeError("dpbench's DP-EBM binning takes no sample weights")
    native = Native.get_native_singleton()
    counts, edges = np.histogram(X_col, bins=max_bins * 2, range=(min_feature_val, max_feature_val))
    noisy = counts + native.generate_gaussian_random(rng=rng, stddev=noise_scale, count=counts.shape[0])
    noisy = report_release("gaussian", BINNING_RELEASE, counts, 1.0, noise_weakening() / noise_scale, noisy)
    return merge_noisy_histogram(np.clip(noisy, 0, None), edges, max_bins)


def gdp_noise_multi(total_queries, target_epsilon, delta) -> float:
    """interpret's calc_gdp_noise_multi (std of each of `total_queries` GDP-composed unit-sensitivity queries
    spending (target_epsilon, delta)) with dpbench's (epsilon, delta) -> mu."""
    return math.sqrt(total_queries) / mu_from_epsilon_delta(target_epsilon, delta)


def _no_categorical_binning(*args, **kwargs):
    raise RuntimeError("interpret's private categorical binning (categories taken from the data) was reached "
                       "in a dpbench DP-EBM fit; dpbench passes every feature as continuous")


# ---------------------------------------------------------------------------------------------------------
# change 3: the regression model kept inside the target range
# ---------------------------------------------------------------------------------------------------------
class _BoundedBooster(Booster):
    """interpret's Booster; inside a dpbench regression fit it projects each update (set_term_update) so that
    score_range[0] <= intercept + sum_j term_j[b_j] <= score_range[1] for every combination of bins b."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        fit = getattr(_LOCAL, "fit", None)
        self._score_range = None if fit is None else fit.score_range
        self._pending = None

    def __enter__(self):
        booster = super().__enter__()
        if self._score_range is not None:
            if self.init_scores is not None or np.size(self.intercept) != 1:
                raise RuntimeError("dpbench's bounded DP-EBM booster expects one score and no init_scores")
            if any(len(f) != 1 for f in self.term_features):
                raise RuntimeError("dpbench's bounded DP-EBM booster expects main effects only")
            self._offset = float(np.ravel(self.intercept)[0])
            self._terms = [self._get_current_term_scores(j) for j in range(len(self.term_features))]
            self._low = np.array([t.min() for t in self._terms])
            self._high = np.array([t.max() for t in self._terms])
            lo, hi = self._score_range
            if not lo <= self._offset + self._low.sum() <= self._offset + self._high.sum() <= hi:
                raise RuntimeError("DP-EBM's initial model lies outside the target range")
        return booster

    def set_term_update(self, term_idx, update_scores):
        if self._score_range is None:
            return super().set_term_update(term_idx, update_scores)
        if term_idx < 0:
            raise RuntimeError("dpbench's bounded DP-EBM booster got an intercept update")
        lo, hi = self._score_range
        others_low = self._low.sum() - self._low[term_idx]
        others_high = self._high.sum() - self._high[term_idx]
        old = self._terms[term_idx]
        new = np.clip(old + update_scores, lo - self._offset - others_low, hi - self._offset - others_high)
        projected = new - old
        super().set_term_update(term_idx, projected)
        self._pending = (term_idx, old + projected)  # what the native model holds after apply_term_update
        return None

    def apply_term_update(self):
        metric = super().apply_term_update()
        if self._score_range is not None and self._pending is not None:
            j, term = self._pending
            self._terms[j], self._low[j], self._high[j] = term, term.min(), term.max()
            self._pending = None
        return metric


# ---------------------------------------------------------------------------------------------------------
# speed: interpret's DP boosting loop with the per-leaf noise step vectorised (issue 39)
# ---------------------------------------------------------------------------------------------------------
def leaf_sums(weights: list[float], edges: list[int]) -> np.ndarray:
    """Each leaf's sum of `weights[edges[i]:edges[i + 1]]`, left to right: what interpret's native SafeSum
    computes (checked bit for bit against it in the tests), without a ctypes call per leaf."""
    sums = np.empty(len(edges) - 1)
    for i in range(len(edges) - 1):
        total = 0.0
        for value in weights[edges[i]:edges[i + 1]]:
            total += value
        sums[i] = total
    return sums


def _is_dp_configuration(dataset, shm_name, callback, intercept_rounds, init_scores, term_features, greedy_ratio,
                         smoothing_rounds, early_stopping_rounds, monotone_constraints, missing, noise_scale,
                         **_) -> bool:
    """The arguments interpret's EBMModel.fit passes boost for a DP model in a dpbench fit (`_ebm.py:996-1020`,
    n_jobs = 1, main effects only): the only case dp_boost handles."""
    return (isinstance(dataset, np.ndarray) and shm_name is None and callback is None and intercept_rounds == 0
            and init_scores is None and all(len(t) == 1 for t in term_features) and greedy_ratio == 0
            and smoothing_rounds == 0 and early_stopping_rounds == 0 and monotone_constraints is None
            and missing == "low" and bool(noise_scale)
            and not Native.get_native_singleton().extract_nominals(dataset).any()
            and not develop.get_option("randomize_feature_order"))


class _NativeSteps:
    """The native calls of one boosting step, as interpret's Booster and Native methods make them (same functions,
    same arguments, so the same draws from `rng` and the same numbers), with their pointers and buffers made once
    per fit instead of per call: interpret's wrappers build a ctypes pointer per array per call (~60 us of a
    ~170 us step on adult's 123 features).  The noise is drawn through Native.generate_gaussian_random, every
    draw's one call (`observed_noise` sees them); the update is set and applied through the booster (a
    regression fit's projection: `_BoundedBooster`)."""

    # GenerateTermUpdate's options between flags and max_leaves, in its order (interpret's Booster passes these)
    OPTIONS = ("min_samples_leaf", "min_hessian", "reg_alpha", "reg_lambda", "max_delta_step", "min_cat_samples",
               "cat_smooth", "max_cat_threshold", "cat_include")

    def __init__(self, booster, rng, max_leaves: int, options: dict):
        self.native, self.booster = Native.get_native_singleton()._unsafe, booster
        self.options = tuple(options[name] for name in self.OPTIONS)
        self.handle, self.rng = booster._booster_handle, rng
        self.rng_ptr = Native._make_pointer(rng, np.ubyte, is_null_allowed=True)
        self.max_leaves = np.full(1, max_leaves, dtype=np.int64)  # main effects: one feature per term
        self.max_leaves_ptr = Native._make_pointer(self.max_leaves, np.int64)
        self.gain, self.count, self.seed = ct.c_double(0.0), ct.c_int64(0), ct.c_int32(0)
        self.buffers: dict[int, tuple] = {}

    def _check(self, code: int, name: str) -> None:
        if code:  # pragma: no cover - interpret raises the same
            raise Native._get_native_exception(code, name)

    def term_buffers(self, term: int) -> tuple:
        """(splits, update) buffers of the term's bins and their pointers."""
        if term not in self.buffers:
            bins = self.booster._term_shapes[term][0]
            arrays = (np.empty(bins - 1, np.int64), np.empty(bins, np.float64))
            self.buffers[term] = arrays + tuple(a.ctypes.data for a in arrays)
        return self.buffers[term]

    def update(self, term, flags, learning_rate, noise_scale):
        """Booster.generate_term_update, Native.generate_seed, get_term_update_splits, get_term_update and
        Native.generate_gaussian_random of one step: (the splits, the update, the leaves' noise draws)."""
        splits, update, splits_ptr, update_ptr = self.term_buffers(term)
        self._check(self.native.GenerateTermUpdate(
            self.rng_ptr, self.handle, term, flags, learning_rate, *self.options, self.max_leaves_ptr, None,
            ct.byref(self.gain)), "GenerateTermUpdate")
        self.booster._term_idx = term
        self._check(self.native.GenerateSeed(self.rng_ptr, ct.byref(self.seed)), "GenerateSeed")
        self.count.value = len(splits)
        self._check(self.native.GetTermUpdateSplits(self.handle, 0, ct.byref(self.count), splits_ptr),
                    "GetTermUpdateSplits")
        update.fill(-np.inf)
        self._check(self.native.GetTermUpdate(self.handle, update_ptr), "GetTermUpdate")
        noise = Native.get_native_singleton().generate_gaussian_random(self.rng, noise_scale, self.count.value + 1)
        return splits[:self.count.value], update, noise


def dp_boost(dataset, intercept, bag, init_scores, term_features, n_inner_bags, term_boost_flags, learning_rate,
             max_leaves, max_rounds, noise_scale, bin_weights, rng, create_booster_flags, objective, acceleration,
             experimental_params, develop_options, **_):
    """interpret's `_boost.boost` for the DP configuration (`_is_dp_configuration`), computing the same model with
    the same draws from `rng` in the same order: greedy_ratio 0 makes every step cyclic (one shuffle of the terms at
    step 0), every update is applied, and there is no early stopping.  Each step: interpret's random-split update,
    the gain key's seed draw (unused but drawn), one Gaussian draw per leaf, update = -(sum + noise) / (the leaf's
    noisy bin weight) as interpret's per-leaf loop computes it (`_boost.py:271-303`, here one array operation),
    applied.  The native calls are made as interpret's wrappers make them (`_NativeSteps`).  Returns what boost
    returns."""
    develop._develop_options = develop_options
    native = Native.get_native_singleton()
    options = {"min_samples_leaf": 0, "min_hessian": 0.0, "reg_alpha": 0.0, "reg_lambda": 0.0, "max_delta_step": 0.0,
               "min_cat_samples": 0, "cat_smooth": 0.0, "max_cat_threshold": develop.get_option("max_cat_threshold"),
               "cat_include": develop.get_option("cat_include")}
    flags = term_boost_flags | Native.TermBoostFlags_MissingLow
    weights = [w.tolist() for w in bin_weights]
    try:
        with _BoundedBooster(dataset, intercept, bag, init_scores, term_features, n_inner_bags, rng,
                             create_booster_flags, objective, acceleration, experimental_params) as booster:
            steps = _NativeSteps(booster, rng, max_leaves, options)
            order = np.arange(len(term_features), dtype=np.int64)
            if develop.get_option("randomize_initial_feature_order"):
                native.shuffle(rng, order)
            for step in range(max_rounds * len(term_features)):
                term = int(order[step % len(term_features)])
                splits, update, noises = steps.update(term, flags, learning_rate, noise_scale)
                edges = [0, *splits.tolist(), len(update)]
                lengths = np.subtract(edges[1:], edges[:-1])
                noisy = (update + np.repeat(noises, lengths)) / np.repeat(
                    leaf_sums(weights[term_features[term][0]], edges), lengths)
                booster.set_term_update(term, -noisy)
                booster.apply_term_update()
            return None, intercept, booster.get_current_model(), max_rounds * len(term_features), rng
    except Exception as e:  # noqa: BLE001 - as interpret's boost: the caller raises it
        return e, None, None, None, None


def _dispatch_boost(*args, **kwargs):
    if not args and getattr(_LOCAL, "fit", None) is not None and _is_dp_configuration(**kwargs):
        return dp_boost(**kwargs)
    return _swap["originals"]["interpret.glassbox._ebm._ebm", "boost"](*args, **kwargs)


# ---------------------------------------------------------------------------------------------------------
# swapping them in for one fit
# ---------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _FitState:
    score_range: tuple[float, float] | None  # regression: (min_target, max_target); classification: None


_LOCAL = threading.local()  # the dpbench fit running in this thread, if any
_SWAP_LOCK = threading.Lock()
_swap = {"active": 0, "originals": {}}


def _dispatch_numeric(*args, **kwargs):
    if getattr(_LOCAL, "fit", None) is not None:
        return public_threshold_numeric_binning(*args, **kwargs)
    return _swap["originals"][_PRE, "private_numeric_binning"](*args, **kwargs)


def _dispatch_categorical(*args, **kwargs):
    if getattr(_LOCAL, "fit", None) is not None:
        return _no_categorical_binning(*args, **kwargs)
    return _swap["originals"][_PRE, "private_categorical_binning"](*args, **kwargs)


def _dispatch_noise(*args, **kwargs):
    if getattr(_LOCAL, "fit", None) is not None:  # (x the audit's power-test weakening, 1 otherwise)
        return gdp_noise_multi(*args, **kwargs) * noise_weakening()
    return _resolve("interpret.utils._privacy", "calc_gdp_noise_multi")(*args, **kwargs)


_REPLACEMENTS = {
    "private_numeric_binning": _dispatch_numeric,
    "private_categorical_binning": _dispatch_categorical,
    "calc_gdp_noise_multi": _dispatch_noise,
    "Booster": _BoundedBooster,  # behaves as interpret's Booster outside a dpbench regression fit
    "boost": _dispatch_boost,  # interpret's boost, its DP configuration without a Python step per leaf
}


def check_interpret_internals() -> None:
    """Raise InterpretChangedError unless the interpret code the privacy argument reads is 0.7.8's."""
    problems = []
    for module, name in _SWAPPED:
        try:
            current = getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError):
            problems.append(f"{module}.{name} no longer exists")
            continue
        if _swap["active"] and current is not _REPLACEMENTS[name]:
            problems.append(f"{module}.{name} was replaced during a dpbench fit")
    if not _swap["active"] and not problems:
        if _resolve("interpret.utils._preprocessor", "private_numeric_binning") is not _resolve(
                "interpret.utils._privacy", "private_numeric_binning"):
            problems.append("interpret.utils._preprocessor.private_numeric_binning is not _privacy's")
        for module in ("interpret.utils._preprocessor", "interpret.glassbox._ebm._ebm"):
            if _resolve(module, "calc_gdp_noise_multi") is not _resolve("interpret.utils._privacy",
                                                                        "calc_gdp_noise_multi"):
                problems.append(f"{module}.calc_gdp_noise_multi is not _privacy's")
        if _resolve("interpret.glassbox._ebm._ebm", "boost") is not _resolve("interpret.glassbox._ebm._boost", "boost"):
            problems.append("interpret.glassbox._ebm._ebm.boost is not _boost's")
        if _resolve("interpret.glassbox._ebm._boost", "Booster") is not Booster:
            problems.append("interpret.glassbox._ebm._boost.Booster is not interpret.utils._native.Booster")
    for (module, name), expected in _VERIFIED_SOURCES.items():
        try:
            found = _fingerprint(_resolve(module, name))
        except (ImportError, AttributeError, OSError, TypeError):
            problems.append(f"{module}.{name} cannot be read")
            continue
        if found != expected:
            problems.append(f"{module}.{name} differs from interpret {VERIFIED_INTERPRET}'s")
    if problems:
        import interpret

        raise InterpretChangedError(
            f"dpbench's DP-EBM privacy fixes were verified against interpret {VERIFIED_INTERPRET}'s internals, "
            f"but with interpret {getattr(interpret, '__version__', '?')} installed: " + "; ".join(problems)
            + ". Re-check the argument in dpbench/algorithms/dp_ebm.py (and the fingerprints in "
            "dpbench/algorithms/_interpret_patch.py) before fitting."
        )


@contextmanager
def observed_noise():
    """A list of every Gaussian draw, (stddev, values), that interpret makes in this thread's dpbench fits within
    the block (binning and boosting draw all their noise with `Native.generate_gaussian_random`, in native code,
    not from a numpy Generator): what the noise-ledger test compares with the ledger.  Values unchanged."""
    draws, original, thread = [], Native.generate_gaussian_random, threading.get_ident()

    def observed(native, rng, stddev, count):
        noise = original(native, rng, stddev, count)
        if getattr(_LOCAL, "fit", None) is not None and threading.get_ident() == thread:
            draws.append((float(stddev), noise.copy()))
        return noise

    Native.generate_gaussian_random = observed
    try:
        yield draws
    finally:
        Native.generate_gaussian_random = original


@contextmanager
def private_interpret(score_range: tuple[float, float] | None):
    """dpbench's replacements active for interpret fits in this thread, for the duration of the block."""
    with _SWAP_LOCK:
        check_interpret_internals()
        if _swap["active"] == 0:
            for module, name in _SWAPPED:
                mod = importlib.import_module(module)
                _swap["originals"][module, name] = getattr(mod, name)
                setattr(mod, name, _REPLACEMENTS[name])
        _swap["active"] += 1
    previous = getattr(_LOCAL, "fit", None)
    _LOCAL.fit = _FitState(score_range)
    try:
        yield
    finally:
        _LOCAL.fit = previous
        with _SWAP_LOCK:
            _swap["active"] -= 1
            if _swap["active"] == 0:
                for module, name in _SWAPPED:
                    setattr(importlib.import_module(module), name, _swap["originals"].pop((module, name)))


__all__ = ["DPExplainableBoostingClassifier", "DPExplainableBoostingRegressor", "InterpretChangedError",
           "check_interpret_internals", "gdp_noise_multi", "merge_noisy_histogram", "observed_noise",
           "private_interpret", "public_threshold_numeric_binning"]
