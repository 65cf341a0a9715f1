"""The audit's canary designs: small deterministic pairs of neighbouring datasets D and D' (`DESIGNS`).

A design is `f(spec, rows=None) -> Design | None` (None: it does not apply to the algorithm); `rows`
overrides the algorithm's `rows` audit setting (dpbench.audit.settings).  Regression data have `N_FEATURES`
= 3 columns and rows in the unit ball (the algorithms' default clip bound 1); `branch_n` uses the algorithm's
`branch_n` setting rows of the same data, so an owner picks that n for d = 3 (no intercept unless the
algorithm's params add one).  Whether a fit raises or returns NaN is a release too (DESIGN.md, "Failures
are releases"): `empty` (n = 0 vs 1), `one_class` (the rare label removed entirely), `overflow` (a record at
1e200) and `selection_split` (the private selections' random parts empty or one-class) look for it;
`ptr_passes` reaches TukeyEM's exponential mechanism behind its check and `tukey_models` audits its
model-level mechanism on a swap pair straddling the check's threshold; `orthogonal` and `quantile_tie`
isolate one release (a clipped gradient; a noisy histogram's first quantile) for the power checks.  `power`
is each algorithm's own design (its `power` setting) on which a copy with every noise scale x 0.1 is caught
(`run.power_check`, a test for every private algorithm), so the audit is shown able to see a broken release
of each.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from dpbench.audit.settings import audit_settings

N_FEATURES = 3
N_ROWS = 1000


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
    entry: str = "fit"  # or "fit_batch": the run fitted in a batch with a companion run (other bounds, rounds)
    attributes: bool = True  # the audit also tests each fitted attribute (False: the canary's output only)

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


def _rows(spec, rows: int | None) -> int:
    """Rows of D: `rows` if given, else what the algorithm needs for its private estimates to succeed (its
    `rows` audit setting), else N_ROWS."""
    return rows or audit_settings(spec.name).rows or N_ROWS


def clip_pull(spec, rows: int | None = None) -> Design:
    """Records at the clip bound x = e1 with label -10 (class 0); the added one at e1 with +10 (class 1).

    The added record pulls against every other; classifiers also get one class-1 record at -e1 (two classes).
    """
    n = _rows(spec, rows)
    X = np.tile(_e(0), (n, 1))
    if spec.task == "classification":
        return Design(np.vstack([X, -_e(0)]), np.append(np.zeros(n), 1.0), _e(0), 1.0)
    return Design(X, np.full(n, -10.0), _e(0), 10.0)


def label_outlier(spec, rows: int | None = None) -> Design:
    """Ordinary data; the added record at a corner of the unit ball with label 1e3 (classifiers: the wrong class)."""
    X, y = _ordinary(_rows(spec, rows), spec.task, seed=1)
    x = np.ones(N_FEATURES) / np.sqrt(N_FEATURES)
    label = 0.0 if spec.task == "classification" else 1e3  # x @ _W > 0: class 1 would be expected
    return Design(X[:-1], y[:-1], x, label)


def tiny_n(spec, rows: int | None = None) -> Design:
    """D has 1 record, D' 2 (classifiers need both classes: 2 and 3); the added record opposes D's at e1."""
    if spec.task == "classification":
        return Design(np.vstack([_e(0), -_e(0)]), np.array([1.0, 0.0]), _e(0), 0.0)
    return Design(_e(0)[None], np.array([1.0]), _e(0), -1.0)


def branch_n(spec, rows: int | None = None) -> Design | None:
    """`branch_n` ordinary rows (the algorithm's audit setting: where it once branched on n) and one more; None:
    skip."""
    n = audit_settings(spec.name).branch_n
    if n is None:
        return None
    X, y = _ordinary(n, spec.task, seed=2)
    return Design(X[:-1], y[:-1], X[-1], float(y[-1]))


def rare_category(spec, rows: int | None = None) -> Design:
    """A continuous column and a one-hot block of 4 levels; level 4 is in no row of D and only in the added record.

    Algorithms with `feature_types` are told the schema (continuous, nominal x 4), as the runner does.
    """
    levels, rng, n = 4, np.random.default_rng(3), _rows(spec, rows)
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


def rare_label(spec, rows: int | None = None) -> Design | None:
    """Classifiers only: D all class 0 but the one class-1 record fitting needs; the added class-1 record at an
    unusual x (a corner of the unit ball in the class-0 direction)."""
    if spec.task != "classification":
        return None
    X, _ = _ordinary(_rows(spec, rows), spec.task, seed=4)
    y = np.zeros(len(X) - 1)
    y[0] = 1.0
    return Design(X[:-1], y, -np.ones(N_FEATURES) / np.sqrt(N_FEATURES), 1.0)


def empty(spec, rows: int | None = None) -> Design:
    """D has no record, D' one (n is not public, so these are neighbours): a fit must give a model on both."""
    return Design(np.zeros((0, N_FEATURES)), np.zeros(0), _e(0), 1.0)


def one_class(spec, rows: int | None = None) -> Design | None:
    """Classifiers only: D all class 0; the added record is the only class-1 one.  The label set is public, so
    a fit on one class must not fail (a failure on D only would tell the record apart)."""
    if spec.task != "classification":
        return None
    X, _ = _ordinary(_rows(spec, rows), spec.task, seed=5)
    return Design(X[:-1], np.zeros(len(X) - 1), X[-1], 1.0)


def overflow(spec, rows: int | None = None) -> Design:
    """Ordinary data; the added record at x = 1e200 e1 with label 1e200 (classifiers: class 1).  Finite, so
    inside the data domain: statistics that overflow must go to a fixed value, not to NaN or an exception."""
    X, y = _ordinary(_rows(spec, rows), spec.task, seed=6)
    return Design(X[:-1], y[:-1], 1e200 * _e(0), 1.0 if spec.task == "classification" else 1e200)


def selection_split(spec, rows: int | None = None) -> Design | None:
    """Private selections only: tiny D whose random fit / validation parts (half and half) are often empty or
    one-class.  Regression: 1 record vs 2 (an exact count of the validation part, such as the sum of exact
    votes, is 2 on D' only, in a quarter of the fits); classification: 30 class-0 + 1 class-1 vs + one more
    class-1."""
    if "validation_fraction" not in spec.estimator().get_params():
        return None
    if spec.task == "classification":
        X, _ = _ordinary(31, spec.task, seed=7)  # 32 rows: D the first 31, the added record the last
        y = np.zeros(31)
        y[0] = 1.0
        return Design(X[:-1], y, X[-1], 1.0, {"validation_fraction": 0.5})
    return Design(_e(0)[None], np.array([1.0]), _e(0), -1.0, {"validation_fraction": 0.5})


def zero_record(spec, rows: int | None = None) -> Design:
    """D has no record, D' one at x = 0 (label 1, class 1): the record every feature map sends to zero and every
    histogram to its features' zero bins (DP-XGBoost raised on it through bincount's int64 result)."""
    return Design(np.zeros((0, N_FEATURES)), np.zeros(0), np.zeros(N_FEATURES), 1.0)


def zero_bins(spec, rows: int | None = None) -> Design:
    """D = 50 records at x = 0.01 (every entry in its feature's zero bin; labels alternate), D' adds one at e1: a
    fit whose off-zero histograms are empty on D only (DP-XGBoost raised on D and fitted D' when the record was
    kept)."""
    X = np.full((50, N_FEATURES), 0.01)
    return Design(X, np.arange(50) % 2.0, _e(0), 1.0)


def has_batched_path(estimator: type) -> bool:
    """Whether the estimator class has a `fit_batch` of its own (a batched path), not DPEstimator's one-by-one fits."""
    from dpbench.algorithms.base import DPEstimator

    own = getattr(getattr(estimator, "fit_batch", None), "__func__", None)
    return own is not None and own is not DPEstimator.fit_batch.__func__


def batch_empty(spec, rows: int | None = None) -> Design | None:
    """`empty` through `fit_batch` (n = 0 vs 1), for algorithms with a batched path: its own code (BoostedAdaSSP's
    raised on n = 0 while its fit did not)."""
    return replace(empty(spec, rows), entry="fit_batch") if has_batched_path(spec.estimator) else None


def batch_clip_pull(spec, rows: int | None = None) -> Design | None:
    """`clip_pull` through `fit_batch`, in a batch with a run of other bounds and rounds (what sweeps run)."""
    return replace(clip_pull(spec, rows), entry="fit_batch") if has_batched_path(spec.estimator) else None


# a user's selection space: every candidate setting from the smallest to the largest positive float
_EXTREME = {"type": "float", "low": 1e-300, "high": 1e300, "log": True}


def selection_space(spec, rows: int | None = None) -> Design | None:
    """Private selections only: a user-chosen `space` with extreme clip bounds (candidates whose statistics
    underflow or overflow) on 5 records at e1 (label 1, class 1) plus one at e1 with label -1 (class 0): a
    candidate that fails on some fit parts only (a label outside its label set raised before the selection's
    parameters were checked) falls back on one side only."""
    if "validation_fraction" not in spec.estimator().get_params():
        return None
    base = "boosted_adassp_clf" if spec.task == "classification" else "adassp"
    space = {"x_bound": _EXTREME, "y_bound": _EXTREME}
    y = np.ones(5)
    return Design(np.tile(_e(0), (5, 1)), y, _e(0), 0.0 if spec.task == "classification" else -1.0,
                  {"algorithm": base, "base_params": {"n_rounds": 3} if base.startswith("boosted") else {},
                   "space": space, "n_candidates": 3, "validation_fraction": 0.5})


def ptr_passes(spec, rows: int | None = None) -> Design | None:
    """Algorithms with a PTR check over `n_models` models (TukeyEM) only: 40,000 ordinary rows and m = 800 models
    of ~50 rows, on which the check passes at eps >= 1 (Lemma 3.6's distance ~80 against a threshold of 26 at
    eps 1; m = 400 gives -1), so the restricted exponential mechanism behind it is reached; the added record
    is a label outlier at the corner of the unit ball.  (Every other design ends in a failed check.)"""
    if "n_models" not in spec.estimator().get_params():
        return None
    X, y = _ordinary(40_000, spec.task, seed=8)
    return Design(X[:-1], y[:-1], np.ones(N_FEATURES) / np.sqrt(N_FEATURES), 10.0, {"n_models": 800})


TUKEY_STAGE_MODELS = 444  # Lemma 3.6's distance k: 27 on D, 26 on D' (eps 1, delta 1e-6: threshold 26.24)


def tukey_models(spec, rows: int | None = None) -> Design | None:
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
                  estimator=TukeyEMModelStage, attributes=False)


def orthogonal(spec, rows: int | None = None) -> Design:
    """D = `_rows` copies of e2 (label 1; classifiers alternate the classes); the added record at e1 with label 100
    (class 1).  D's records have no component along the canary's e1, so the canary's output is the added record's
    (clipped) contribution plus noise, with no variance from which random part, batch or histogram group each
    of D's records joins (DP-ROBGD, DP-AMBSSGD); D's identical records put every group statistic in one bin."""
    n = _rows(spec, rows)
    y = np.arange(n) % 2.0 if spec.task == "classification" else np.ones(n)
    return Design(np.tile(_e(1), (n, 1)), y, _e(0), 1.0 if spec.task == "classification" else 100.0,
                  attributes=False)


def quantile_tie(spec, rows: int | None = None) -> Design:
    """One feature: D = `_rows` // 16 records at x = -0.95 (label 1, class 1) and the rest at x = -0.89 (label -1,
    class 0); the added record at x = -0.95.  The two clusters lie in the first two bins of DP-EBM's histogram
    (max_bins 16, feature_bound 1) and of DP-XGBoost's sketch (max_bins 30, feature_bound 1), so the first 1/16
    quantile of the noisy histogram (DP-XGBoost's first cut candidate with n_split_candidates 16, DP-EBM's first
    greedy merge) falls
    between them or not: near a tie on D (`_rows` mod 16 and the clipped noise of the empty bins set how
    near), tipped by the added record on D'.  The canary's leaf is then its own cluster (value ~ +1) or both
    (~ -1): a cut released from too little noise shows at the canary."""
    n = _rows(spec, rows)
    k = n // 16
    x = np.r_[np.full(k, -0.95), np.full(n - k, -0.89)][:, None]
    y = np.r_[np.ones(k), (0.0 if spec.task == "classification" else -1.0) * np.ones(n - k)]
    return Design(x, y, np.array([-0.95]), 1.0, attributes=False)


def power(spec, rows: int | None = None) -> Design:
    """The algorithm's own power design (its `power` audit setting): a design and hyperparameters on which a
    copy with every noise scale x 0.1 is caught (`power_check`), so the audit could see a broken release."""
    setting = {"design": "clip_pull", "params": {}, **audit_settings(spec.name).power}
    base = DESIGNS[setting["design"]](spec, setting.get("rows", rows))
    return replace(base, params={**base.params, **setting["params"]}, attributes=False)


DESIGNS = {f.__name__: f for f in (clip_pull, label_outlier, tiny_n, branch_n, rare_category, rare_label, empty,
                                   one_class, overflow, zero_record, zero_bins, batch_empty, batch_clip_pull,
                                   selection_split, selection_space, ptr_passes, tukey_models, orthogonal,
                                   quantile_tie, power)}
CHEAP_DESIGNS = ("clip_pull", "tiny_n", "rare_category", "rare_label", "empty", "one_class", "overflow",
                 "zero_record", "zero_bins", "batch_empty", "batch_clip_pull", "selection_split", "selection_space",
                 "ptr_passes", "tukey_models", "power")
