"""Empirical privacy audit: fit an algorithm many times on D and on D' = D + one crafted record, bound epsilon.

A ledger can only say what an algorithm *claims* to spend; this module
measures what it releases.  For each private algorithm and canary design it

1. fits N times on D and N times on D' (each fit with its own seed, from a
   `SeedSequence` keyed by algorithm, design, epsilon and side);
2. takes a scalar statistic of each fit: the model's output at the canary's
   x (`decision_function` for classifiers, `predict` for regressors); a fit
   that raises is an outcome too (an exception is observable), kept as NaN;
3. on the first half of the fits of each side chooses the test "statistic
   >= t" or "<= t" (threshold, direction, which side the failures fall on,
   and the statistic itself or its distance from D's median) that
   maximises the lower bound below;
4. on the second half computes that test's false-positive rate on D and
   true-positive rate on D' with one-sided Clopper-Pearson bounds (FPR upper,
   TPR lower, each at alpha/2: Bonferroni, jointly 95%) and the lower bound
   (eps, delta)-DP implies, for add/remove neighbours:

       TPR <= e^eps FPR + delta   and   1 - FPR <= e^eps (1 - TPR) + delta
       eps_lb = max(log((TPR_lo - delta) / FPR_hi), log((1 - FPR_hi - delta) / (1 - TPR_lo)))  (floored at 0)

   and, for algorithms whose ledger is pure GDP, mu-GDP's
   TPR <= Phi(Phi^-1(FPR) + mu): mu_lb = Phi^-1(TPR_lo) - Phi^-1(FPR_hi).
   Choosing the test on one half and bounding on the other keeps the bound
   valid: the evaluation half is independent of the choice.

A lower bound above the budget asked for is a 'violation' (a 5% false alarm
rate per row at most).  A bound below it proves nothing: the audit has power
only for the designs it tries, and N fits can certify at most about log(N/2)
(e.g. ~4.9 with 1000 fits a side).

Designs (`DESIGNS`) are small and deterministic so that thousands of fits are
cheap.  Regression data have `N_FEATURES` = 3 columns and rows in the unit
ball (the algorithms' default clip bound 1); `branch_n` uses
`AlgorithmSpec.audit_branch_n` rows of the same data, so an owner picks that n
for d = 3 (no intercept unless the algorithm's params add one).  Whether a fit raises or returns NaN is a
release too (DESIGN.md, "Failures are releases"): `empty` (n = 0 vs 1), `one_class` (the rare label removed
entirely), `overflow` (a record at 1e200) and `selection_split` (the private selections' random parts empty
or one-class) look for it; `ptr_passes` reaches TukeyEM's exponential mechanism behind its check and
`tukey_models` audits its model-level mechanism on a swap pair straddling the check's threshold;
`orthogonal` and `quantile_tie` isolate one release (a clipped gradient; a noisy histogram's first quantile)
for the power checks.  `power` is each algorithm's own design (`AlgorithmSpec.audit_power`) on which a
copy with every noise scale x 0.1 is caught (`power_check`, a test for every private algorithm), so the
audit is shown able to see a broken release of each.
"""

from __future__ import annotations

import time
import warnings
import zlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import joblib
import numpy as np
import pandas as pd
from scipy import stats
from sklearn.base import clone

N_FEATURES = 3
N_ROWS = 1000
ALPHA = 0.05
DEFAULT_DELTA = 1e-6
MAX_THRESHOLDS = 400  # candidate thresholds per test on the selection half (quantiles of the pooled values)


# --------------------------------------------------------------------------- bounds


def clopper_pearson_lower(k, n, alpha):
    """One-sided (1 - alpha) Clopper-Pearson lower bound on a binomial proportion (0 when k = 0)."""
    k, n = np.asarray(k, float), np.asarray(n, float)
    with np.errstate(invalid="ignore"):
        lo = stats.beta.ppf(alpha, k, n - k + 1)
    return np.where(k <= 0, 0.0, lo)


def clopper_pearson_upper(k, n, alpha):
    """One-sided (1 - alpha) Clopper-Pearson upper bound on a binomial proportion (1 when k = n)."""
    k, n = np.asarray(k, float), np.asarray(n, float)
    with np.errstate(invalid="ignore"):
        hi = stats.beta.ppf(1 - alpha, k + 1, n - k)
    return np.where(k >= n, 1.0, hi)


def _rate_bounds(k0, n0, k1, n1, alpha):
    """(FPR_hi, TPR_lo): the two one-sided bounds, alpha split between them (Bonferroni)."""
    return clopper_pearson_upper(k0, n0, alpha / 2), clopper_pearson_lower(k1, n1, alpha / 2)


def epsilon_lower_bound(k0, n0, k1, n1, delta, alpha=ALPHA):
    """(1 - alpha) lower bound on epsilon from k0/n0 positives on D (FPR) and k1/n1 on D' (TPR); >= 0."""
    fpr_hi, tpr_lo = _rate_bounds(k0, n0, k1, n1, alpha)
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.log(np.maximum(tpr_lo - delta, 0.0) / fpr_hi)
        b = np.log(np.maximum(1.0 - fpr_hi - delta, 0.0) / (1.0 - tpr_lo))
    return np.maximum(np.maximum(np.nan_to_num(a, nan=0.0), np.nan_to_num(b, nan=0.0)), 0.0)


def mu_lower_bound(k0, n0, k1, n1, alpha=ALPHA):
    """(1 - alpha) lower bound on mu for mu-GDP: Phi^-1(TPR_lo) - Phi^-1(FPR_hi); >= 0."""
    fpr_hi, tpr_lo = _rate_bounds(k0, n0, k1, n1, alpha)
    with np.errstate(invalid="ignore"):
        mu = stats.norm.ppf(tpr_lo) - stats.norm.ppf(fpr_hi)  # tpr_lo = 0 or fpr_hi = 1 give -inf
    return np.maximum(np.nan_to_num(mu, nan=0.0, neginf=0.0), 0.0)


# --------------------------------------------------------------------------- choosing the test


@dataclass(frozen=True)
class Test:
    """Reject ("positive") when stat(s) >= threshold (direction +1) or <= threshold (-1); failures -> fail_value."""

    statistic: str  # 'output' or 'distance' (|output - center|)
    center: float
    fail_value: float
    direction: int
    threshold: float

    def positives(self, s: np.ndarray) -> int:
        v = self._values(s)
        return int(np.sum(v >= self.threshold) if self.direction > 0 else np.sum(v <= self.threshold))

    def _values(self, s: np.ndarray) -> np.ndarray:
        v = s if self.statistic == "output" else np.abs(s - self.center)
        return np.where(np.isnan(s), self.fail_value, v)

    def describe(self) -> str:
        stat = "f(canary)" if self.statistic == "output" else f"|f(canary) - {self.center:.3g}|"
        return f"{stat} {'>=' if self.direction > 0 else '<='} {self.threshold:.4g}"


def _counts(a: np.ndarray, b: np.ndarray, thresholds: np.ndarray, direction: int):
    a, b = np.sort(a), np.sort(b)
    if direction > 0:  # count >= t
        return len(a) - np.searchsorted(a, thresholds, "left"), len(b) - np.searchsorted(b, thresholds, "left")
    return np.searchsorted(a, thresholds, "right"), np.searchsorted(b, thresholds, "right")


def choose_test(s0: np.ndarray, s1: np.ndarray, score) -> Test:
    """The test maximising score(k0, n0, k1, n1) on these (selection) outputs of D (s0) and D' (s1).

    Ties (e.g. every bound 0 when the selection half has no power) are broken by the same score at
    alpha = 1, i.e. with median-unbiased rate estimates instead of confidence bounds.
    """
    finite0 = s0[np.isfinite(s0)]
    center = float(np.median(finite0)) if len(finite0) else 0.0
    fails = np.isnan(s0).any() or np.isnan(s1).any()
    best, best_score = None, -np.inf
    for statistic in ("output", "distance"):
        for fail_value in ((np.inf, -np.inf) if fails else (np.inf,)):
            probe = Test(statistic, center, fail_value, 1, 0.0)
            a, b = probe._values(s0), probe._values(s1)
            pooled = np.unique(np.concatenate([a, b]))
            if len(pooled) > MAX_THRESHOLDS:
                pooled = np.unique(np.quantile(pooled, np.linspace(0, 1, MAX_THRESHOLDS), method="nearest"))
            for direction in (1, -1):
                k0, k1 = _counts(a, b, pooled, direction)
                sc = score(k0, len(a), k1, len(b), ALPHA) + 1e-3 * score(k0, len(a), k1, len(b), 1.0)
                i = int(np.argmax(sc))
                if sc[i] > best_score:
                    best_score, best = sc[i], Test(statistic, center, fail_value, direction, float(pooled[i]))
    return best


def audit_outputs(s0: np.ndarray, s1: np.ndarray, delta: float, gdp: bool, alpha: float = ALPHA) -> dict:
    """Select on the first half of each side, bound on the second: eps_lb (and mu_lb when gdp)."""
    h0, h1 = len(s0) // 2, len(s1) // 2
    sel0, ev0, sel1, ev1 = s0[:h0], s0[h0:], s1[:h1], s1[h1:]
    test = choose_test(sel0, sel1, lambda k0, n0, k1, n1, a: epsilon_lower_bound(k0, n0, k1, n1, delta, a))
    k0, k1 = test.positives(ev0), test.positives(ev1)
    out = {"eps_lb": float(epsilon_lower_bound(k0, len(ev0), k1, len(ev1), delta, alpha)),
           "fpr": k0 / len(ev0), "tpr": k1 / len(ev1), "test": test.describe(), "mu_lb": np.nan}
    if gdp:
        mtest = choose_test(sel0, sel1, mu_lower_bound)
        out["mu_lb"] = float(mu_lower_bound(mtest.positives(ev0), len(ev0), mtest.positives(ev1), len(ev1), alpha))
    return out


# --------------------------------------------------------------------------- designs


@dataclass(frozen=True)
class Design:
    """D = (X, y); D' = D plus the record (x_added, y_added), or with row `swap_row` replaced by it; the canary
    is x_added.  params: what the design needs; estimator: a factory fitted instead of the algorithm (a stage)."""

    X: np.ndarray
    y: np.ndarray
    x_added: np.ndarray
    y_added: float
    params: dict = field(default_factory=dict)
    swap_row: int | None = None
    estimator: Callable | None = None

    def neighbour(self) -> tuple[np.ndarray, np.ndarray]:
        if self.swap_row is None:
            return np.vstack([self.X, self.x_added[None]]), np.append(self.y, self.y_added)
        X, y = self.X.copy(), self.y.copy()
        X[self.swap_row], y[self.swap_row] = self.x_added, self.y_added
        return X, y


_W = np.array([0.5, -0.3, 0.2])


def _ordinary(n: int, task: str, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """n + 1 well-scaled rows (norms ~0.5, inside the unit ball; |y| < 1; both classes for classification)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n + 1, N_FEATURES)) / (2 * np.sqrt(N_FEATURES))
    X = X * np.minimum(1.0, 1.0 / np.linalg.norm(X, axis=1))[:, None]
    y = X @ _W + rng.normal(0, 0.05, size=n + 1)
    if task == "classification":
        y = (y > 0).astype(float)
        y[:2] = [0.0, 1.0]
    return X, y


def _e(i: int) -> np.ndarray:
    return np.eye(N_FEATURES)[i]


def _rows(spec) -> int:
    """Rows of D: N_ROWS, or what the algorithm needs for its private estimates to succeed (spec.audit_rows)."""
    return spec.audit_rows or N_ROWS


def clip_pull(spec) -> Design:
    """Records at the clip bound x = e1 with label -10 (class 0); the added one at e1 with +10 (class 1).

    The added record pulls against every other; classifiers also get one class-1 record at -e1 (two classes).
    """
    n = _rows(spec)
    X = np.tile(_e(0), (n, 1))
    if spec.task == "classification":
        return Design(np.vstack([X, -_e(0)]), np.append(np.zeros(n), 1.0), _e(0), 1.0)
    return Design(X, np.full(n, -10.0), _e(0), 10.0)


def label_outlier(spec) -> Design:
    """Ordinary data; the added record at a corner of the unit ball with label 1e3 (classifiers: the wrong class)."""
    X, y = _ordinary(_rows(spec), spec.task, seed=1)
    x = np.ones(N_FEATURES) / np.sqrt(N_FEATURES)
    label = 0.0 if spec.task == "classification" else 1e3  # x @ _W > 0: class 1 would be expected
    return Design(X[:-1], y[:-1], x, label)


def tiny_n(spec) -> Design:
    """D has 1 record, D' 2 (classifiers need both classes: 2 and 3); the added record opposes D's at e1."""
    if spec.task == "classification":
        return Design(np.vstack([_e(0), -_e(0)]), np.array([1.0, 0.0]), _e(0), 0.0)
    return Design(_e(0)[None], np.array([1.0]), _e(0), -1.0)


def branch_n(spec) -> Design | None:
    """spec.audit_branch_n ordinary rows (where the algorithm once branched on n) and one more; None: skip."""
    n = spec.audit_branch_n
    if n is None:
        return None
    X, y = _ordinary(n, spec.task, seed=2)
    return Design(X[:-1], y[:-1], X[-1], float(y[-1]))


def rare_category(spec) -> Design:
    """A continuous column and a one-hot block of 4 levels; level 4 is in no row of D and only in the added record.

    Algorithms with `feature_types` are told the schema (continuous, nominal x 4), as the runner does.
    """
    levels, rng, n = 4, np.random.default_rng(3), _rows(spec)
    x1 = rng.uniform(-0.5, 0.5, n)
    lev = np.arange(n) % (levels - 1)
    X = np.column_stack([x1, np.eye(levels)[lev]])
    y = 0.5 * x1 + np.array([0.2, -0.2, 0.1])[lev] + rng.normal(0, 0.05, n)
    if spec.task == "classification":
        y = (y > 0).astype(float)
        y[:2] = [0.0, 1.0]
    x = np.concatenate([[0.0], np.eye(levels)[levels - 1]])
    params = {}
    if "feature_types" in spec.estimator().get_params():
        params["feature_types"] = ["continuous"] + ["nominal"] * levels
    return Design(X, y, x, 1.0, params)


def rare_label(spec) -> Design | None:
    """Classifiers only: D all class 0 but the one class-1 record fitting needs; the added class-1 record at an
    unusual x (a corner of the unit ball in the class-0 direction)."""
    if spec.task != "classification":
        return None
    X, _ = _ordinary(_rows(spec), spec.task, seed=4)
    y = np.zeros(len(X) - 1)
    y[0] = 1.0
    return Design(X[:-1], y, -np.ones(N_FEATURES) / np.sqrt(N_FEATURES), 1.0)


def empty(spec) -> Design:
    """D has no record, D' one (n is not public, so these are neighbours): a fit must give a model on both."""
    return Design(np.zeros((0, N_FEATURES)), np.zeros(0), _e(0), 1.0)


def one_class(spec) -> Design | None:
    """Classifiers only: D all class 0; the added record is the only class-1 one.  The label set is public, so
    a fit on one class must not fail (a failure on D only would tell the record apart)."""
    if spec.task != "classification":
        return None
    X, _ = _ordinary(_rows(spec), spec.task, seed=5)
    return Design(X[:-1], np.zeros(len(X) - 1), X[-1], 1.0)


def overflow(spec) -> Design:
    """Ordinary data; the added record at x = 1e200 e1 with label 1e200 (classifiers: class 1).  Finite, so
    inside the data domain: statistics that overflow must go to a fixed value, not to NaN or an exception."""
    X, y = _ordinary(_rows(spec), spec.task, seed=6)
    return Design(X[:-1], y[:-1], 1e200 * _e(0), 1.0 if spec.task == "classification" else 1e200)


def selection_split(spec) -> Design | None:
    """Private selections only: tiny D whose random fit / validation parts are often empty or one-class.
    Regression: 1 record vs 2; classification: 30 class-0 + 1 class-1 vs + one more class-1."""
    if "validation_fraction" not in spec.estimator().get_params():
        return None
    if spec.task == "classification":
        X, _ = _ordinary(31, spec.task, seed=7)  # 32 rows: D the first 31, the added record the last
        y = np.zeros(31)
        y[0] = 1.0
        return Design(X[:-1], y, X[-1], 1.0)
    return Design(_e(0)[None], np.array([1.0]), _e(0), -1.0)


def ptr_passes(spec) -> Design | None:
    """Algorithms with a PTR check over `n_models` models (TukeyEM) only: 40,000 ordinary rows and m = 800 models
    of ~50 rows, on which the check passes at eps >= 1 (Lemma 3.6's distance ~80 against a threshold of 26 at
    eps 1; m = 400 gives -1), so the restricted exponential mechanism behind it is reached; the added record
    is a label outlier at the corner of the unit ball.  (Every other design ends in a failed check.)"""
    if "n_models" not in spec.estimator().get_params():
        return None
    X, y = _ordinary(40_000, spec.task, seed=8)
    return Design(X[:-1], y[:-1], np.ones(N_FEATURES) / np.sqrt(N_FEATURES), 10.0, {"n_models": 800})


TUKEY_STAGE_MODELS = 444  # Lemma 3.6's distance k: 27 on D, 26 on D' (eps 1, delta 1e-6: threshold 26.24)


def tukey_models(spec) -> Design | None:
    """TukeyEM's model-level mechanism (`TukeyEMModelStage`; its Privacy (a) reduces the record-level guarantee
    to it): D = 444 one-dimensional models evenly spaced in [1, 2] with the middle one moved to 2, D' = the
    evenly spaced models (the middle one swapped back).  The distance k is 27 on D and 26 on D' whatever the
    jitter, straddling the check's threshold 26.24 at eps 1, delta 1e-6, so the check passes w.p. 0.66 vs 0.44
    (Laplace 2/eps) -- or 0.99 vs 0.15 with the noise x 0.1.  A failed check outputs 0, a passed one ~1.5 at
    the canary.  (On records, the random partition's spread hides which model one record moves.)"""
    if spec.name != "tukey":
        return None
    from dpbench.algorithms.tukey import TukeyEMModelStage

    m = TUKEY_STAGE_MODELS
    models = np.linspace(1.0, 2.0, m)[:, None]
    D = models.copy()
    D[m // 2] = 2.0
    return Design(D, np.zeros(m), models[m // 2], 0.0, {"n_models": m}, swap_row=m // 2,
                  estimator=TukeyEMModelStage)


def orthogonal(spec) -> Design:
    """D = `_rows` copies of e2 (label 1; classifiers alternate the classes); the added record at e1 with label 100
    (class 1).  D's records have no component along the canary's e1, so the canary's output is the added record's
    (clipped) contribution plus noise, with no variance from which random part, batch or histogram group each
    of D's records joins (DP-ROBGD, DP-AMBSSGD); D's identical records put every group statistic in one bin."""
    n = _rows(spec)
    y = np.arange(n) % 2.0 if spec.task == "classification" else np.ones(n)
    return Design(np.tile(_e(1), (n, 1)), y, _e(0), 1.0 if spec.task == "classification" else 100.0)


def quantile_tie(spec) -> Design:
    """One feature: D = `_rows` // 16 records at x = -0.95 (label 1, class 1) and the rest at x = -0.89 (label -1,
    class 0); the added record at x = -0.95.  The two clusters lie in the first two bins of DP-EBM's histogram
    (max_bins 16, x_bound 1) and of DP-XGBoost's sketch (n_bins 30, x_bound 1), so the first 1/16 quantile of the
    noisy histogram (DP-XGBoost's first cut candidate with n_candidates 16, DP-EBM's first greedy merge) falls
    between them or not: near a tie on D (`_rows` mod 16 and the clipped noise of the empty bins set how
    near), tipped by the added record on D'.  The canary's leaf is then its own cluster (value ~ +1) or both
    (~ -1): a cut released from too little noise shows at the canary."""
    n = _rows(spec)
    k = n // 16
    x = np.r_[np.full(k, -0.95), np.full(n - k, -0.89)][:, None]
    y = np.r_[np.ones(k), (0.0 if spec.task == "classification" else -1.0) * np.ones(n - k)]
    return Design(x, y, np.array([-0.95]), 1.0)


def power(spec) -> Design:
    """The algorithm's own power design (`AlgorithmSpec.audit_power`): a design and hyperparameters on which a
    copy with every noise scale x 0.1 is caught (`power_check`), so the audit could see a broken release."""
    setting = {"design": "clip_pull", "params": {}, **spec.audit_power}
    base = DESIGNS[setting["design"]](replace(spec, audit_rows=setting.get("rows", spec.audit_rows)))
    return replace(base, params={**base.params, **setting["params"]})


DESIGNS = {f.__name__: f for f in (clip_pull, label_outlier, tiny_n, branch_n, rare_category, rare_label, empty,
                                   one_class, overflow, selection_split, ptr_passes, tukey_models, orthogonal,
                                   quantile_tie, power)}
CHEAP_DESIGNS = ("clip_pull", "tiny_n", "rare_category", "rare_label", "empty", "one_class", "overflow",
                 "selection_split", "ptr_passes", "tukey_models", "power")


# --------------------------------------------------------------------------- fitting


def _seeds(seed: int, key: str, n: int) -> list[int]:
    ss = np.random.SeedSequence(seed, spawn_key=(zlib.crc32(key.encode()),))
    return [int(s) for s in ss.generate_state(n, dtype=np.uint64)]


def fit_chunk(template, X, y, canary, method: str, seeds) -> dict:
    """Fit clone(template) with each seed; the output at the canary (NaN when the fit raised), failures, GDP-ness."""
    out = np.full(len(seeds), np.nan)
    errors, gdp, t0 = Counter(), True, time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. TukeyEM warns on every fit with too few rows per model
        for i, seed in enumerate(seeds):
            est = clone(template).set_params(random_state=seed)
            try:
                est.fit(X, y)
                out[i] = float(np.ravel(getattr(est, method)(canary[None]))[0])
            except Exception as exc:  # noqa: BLE001 - a fit that raises is an outcome, counted and reported
                errors[f"{type(exc).__name__}: {exc}"[:160]] += 1
                continue
            ledger = getattr(est, "privacy_ledger_", None)
            gdp &= bool(ledger is not None and len(ledger) and not ledger.dp_entries)
            if np.isnan(out[i]):
                errors["output is NaN"] += 1
    return {"out": out, "errors": errors, "gdp": gdp, "seconds": time.perf_counter() - t0}


def _jobs(name, spec, design_name, design, epsilon, delta, runs, seed, chunk, params):
    """The chunked fit tasks of one (algorithm, design, epsilon): (side, delayed call) pairs."""
    from dpbench import algorithms

    settings = {**spec.audit_params, **params.get(name, {}), **design.params, "epsilon": epsilon, "delta": delta}
    template = design.estimator(**settings) if design.estimator else algorithms.make(name, **settings)
    method = "decision_function" if spec.task == "classification" else "predict"
    for side, (X, y) in enumerate([(design.X, design.y), design.neighbour()]):
        seeds = _seeds(seed, f"{name}/{design_name}/{epsilon!r}/{side}", runs)
        for a in range(0, runs, chunk):
            yield side, joblib.delayed(fit_chunk)(template, X, y, design.x_added, method, seeds[a: a + chunk])


def check_request(algorithms_: list[str] | None, epsilons, designs, runs: int, delta: float) -> tuple[list, list]:
    """Validate the audit's input; ValueError naming the problem.  Returns (algorithms, designs)."""
    from dpbench import algorithms

    private = [n for n in algorithms.available() if algorithms.get_spec(n).private
               and algorithms.get_spec(n).task in ("regression", "classification")]
    names = private if not algorithms_ else list(algorithms_)
    for n in names:
        if not algorithms.get_spec(n).private:  # get_spec raises for unknown names
            raise ValueError(f"algorithm {n!r} is not private; nothing to audit (private: {', '.join(private)})")
    bad = [e for e in epsilons if not (np.isfinite(e) and e > 0)]
    if not len(epsilons) or bad:
        raise ValueError(f"epsilons must be finite numbers > 0, got {list(epsilons)}")
    if not (0 < delta < 1):
        raise ValueError(f"delta must lie in (0, 1), got {delta}")
    if runs < 10:
        raise ValueError(f"runs must be >= 10 fits per side (half select the test, half bound epsilon), got {runs}")
    designs = list(DESIGNS) if not designs else list(designs)
    unknown = [d for d in designs if d not in DESIGNS]
    if unknown:
        raise ValueError(f"unknown design(s) {unknown}; known: {', '.join(DESIGNS)}")
    return names, designs


def run_audit(algorithms: list[str] | None = None, epsilons=(1.0,), designs=None, runs: int = 500,
              delta: float = DEFAULT_DELTA, n_jobs: int | None = 2, seed: int = 0, chunk: int = 100,
              params: dict | None = None, progress=None) -> pd.DataFrame:
    """The audit table: one row per (algorithm, design, epsilon).  See the module docstring.

    algorithms None: every private algorithm; designs None: all of DESIGNS; runs: fits per side;
    params: extra hyperparameters per algorithm name (over spec.audit_params, under the design's).
    Fits run through joblib in chunks of `chunk` seeds under the active `joblib.parallel_config`
    (so the runner's backend, e.g. dask, applies); n_jobs None takes n_jobs from that config too.
    `progress(done, total, seconds)` is called as chunks finish (the CLI prints a line).
    """
    from dpbench import algorithms as algs
    from dpbench.privacy import mu_from_epsilon_delta

    names, designs = check_request(algorithms, epsilons, designs, runs, delta)
    params = params or {}
    keys, tasks = [], []
    for name in names:
        spec = algs.get_spec(name)
        for dname in designs:
            design = DESIGNS[dname](spec)
            if design is None:
                continue
            for eps in epsilons:
                for side, task in _jobs(name, spec, dname, design, float(eps), delta, runs, seed, chunk, params):
                    keys.append((name, dname, float(eps), side))
                    tasks.append(task)
    results, start = [], time.perf_counter()
    if tasks:
        for res in joblib.Parallel(n_jobs=n_jobs, return_as="generator")(tasks):  # in order, as they finish
            results.append(res)
            if progress is not None:
                progress(len(results), len(tasks), time.perf_counter() - start)

    groups: dict = {}
    for (name, dname, eps, side), res in zip(keys, results, strict=True):
        g = groups.setdefault((name, dname, eps), {"out": ([], []), "errors": Counter(), "gdp": True, "s": 0.0})
        g["out"][side].append(res["out"])
        g["errors"] += res["errors"]
        g["gdp"] &= res["gdp"]
        g["s"] += res["seconds"]
    rows = []
    for (name, dname, eps), g in groups.items():
        s0, s1 = np.concatenate(g["out"][0]), np.concatenate(g["out"][1])
        failures = int(np.isnan(s0).sum() + np.isnan(s1).sum())
        gdp = g["gdp"] and failures < len(s0) + len(s1)
        res = audit_outputs(s0, s1, delta, gdp)
        mu = mu_from_epsilon_delta(eps, delta) if gdp else np.nan
        violation = res["eps_lb"] > eps or (gdp and res["mu_lb"] > mu)
        verdict = "violation" if violation else ("no_fits" if failures == len(s0) + len(s1) else "ok")
        rows.append({"algorithm": name, "design": dname, "epsilon": eps, "delta": delta, "eps_lb": res["eps_lb"],
                     "mu": mu, "mu_lb": res["mu_lb"], "runs": len(s0), "failures": failures, "verdict": verdict,
                     "fpr": res["fpr"], "tpr": res["tpr"], "test": res["test"],
                     "error": g["errors"].most_common(1)[0][0] if g["errors"] else "",
                     "seconds": round(g["s"], 2)})
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- power


POWER_FACTOR = 0.1  # the weakened copy: every noise scale x 0.1
POWER_RUNS = 300


def power_check(name: str, epsilon: float = 1.0, factor: float = POWER_FACTOR, seed: int = 0) -> dict:
    """Audit a deliberately weakened copy of algorithm `name` (noise scales x `factor`, ledger unchanged) on its
    `power` design; the audit must flag it (verdict 'violation').  The audit's row.

    Runs in this process (the weakening does not reach joblib workers), so keep the design cheap.
    """
    from dpbench import algorithms
    from dpbench.privacy.mechanisms import weakened_noise

    runs = algorithms.get_spec(name).audit_power.get("runs", POWER_RUNS)
    with weakened_noise(factor):
        table = run_audit([name], epsilons=(epsilon,), designs=["power"], runs=runs, n_jobs=1, seed=seed, chunk=runs)
    return table.iloc[0].to_dict()
