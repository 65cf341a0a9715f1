"""Per-release sensitivity: every release of every private algorithm moves by at most its recorded sensitivity.

The ledger says what each release is charged; this checks the charge is earned.  Each algorithm is fitted
on D and on D plus one crafted record with the same seed; the second fit replays the first fit's noisy
outputs (`mechanisms.recorded_releases`), so every release of the second fit is computed from the same past
and their difference is the one-record change the release's proof bounds (adaptive composition):

- Gaussian: the L2 change of the statistic <= its sensitivity (Laplace: the L1 change; stability histograms:
  the L1 change of the exact bin counts);
- exponential mechanism: max_i - min_i of the change in log-weights <= the epsilon charged (the privacy
  loss of P(i) ~ exp(w_i) is bounded by exactly that spread); for `exponential_rows` (disjoint parts) at most
  one row changes;
- releases of disjoint parts (`mechanisms.release_part`, ledger tags 'part/what') change in one part at most
  (parallel composition);
- TukeyEM's restricted exponential mechanism ('restricted_exponential') is private by its PTR check's safety
  guarantee, not by a bound on the change of its log-weights (they hold region volumes): not checked here;
  test_tukey checks its exponent and the audit's `ptr_passes` design exercises it;
- the fits make the same releases in the same order (a branch on anything but a release or a parameter
  would show here as a different sequence).

Per-record randomness comes from `base.record_generator`, so the records of D keep their parts and draws.
Sweeps fit through `fit_batch`, so every algorithm with a batched path is checked through it too, on batches
mixing clip bounds and rounds.  DP-EBM's releases made inside interpret's own code (its boosting) are not
reported; its private bounds and binning histograms (dpbench's) are.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from dpbench import algorithms
from dpbench.algorithms.base import DPEstimator
from dpbench.audit import DESIGNS, audit_settings
from dpbench.audit.designs import N_ROWS, Design
from dpbench.privacy.mechanisms import recorded_releases

PRIVATE = [n for n in algorithms.available() if algorithms.get_spec(n).private]
BATCHED = [n for n in PRIVATE if type(algorithms.make(n)).fit_batch.__func__ is not DPEstimator.fit_batch.__func__]
# releases each algorithm must have had checked (a mechanism that stops reporting would leave its branch idle)
MUST_CHECK = {"robgd": {"histogram"}, "ambssgd": {"gaussian"}, "dp_ebm": {"gaussian"},
              "dp_ebm_clf": {"gaussian"}}
DESIGN_NAMES = ["clip_pull", "label_outlier", "rare_category", "rare_label", "one_class", "overflow", "empty",
                "tiny_n"]
# the runs of one batch: clip bounds below, between and above the norms of `outlier_design`, rounds 2-4
BATCH = ({"x_bound": 0.3, "y_bound": 2.0, "grad_bound": 0.3, "n_rounds": 2},
         {"x_bound": 2.0, "y_bound": 0.5, "grad_bound": 2.0, "n_rounds": 4},
         {"x_bound": 8.0, "y_bound": 1.0, "grad_bound": 8.0, "n_rounds": 3},
         {"x_bound": 30.0, "y_bound": 1.5, "grad_bound": 30.0, "n_rounds": 4})
TOLERANCE = 1e-9


def batch_params(name: str) -> list[dict]:
    """BATCH's settings the algorithm has (its batch key is the same for all of them)."""
    own = algorithms.make(name).get_params()
    return [{k: v for k, v in run.items() if k in own} for run in BATCH]


def outlier_design(task: str, n: int = 20_000) -> Design:
    """D: rows of norms in [0.05, 1] and one far row at norm 20; the added record at norm 4 with an outlying
    label.  `boosting.RoundSums` sorts the rows by norm into row blocks: the record lies between the other rows
    of the last block, where a run clipping at 2 clips only it and the far row (a bug leaving the block's top
    row, or the record, unclipped moves a sum far beyond its sensitivity)."""
    rng = np.random.default_rng(0)
    u = rng.normal(size=(n, 3))
    X = u / np.linalg.norm(u, axis=1)[:, None] * np.exp(rng.uniform(np.log(0.05), 0.0, n))[:, None]
    X[0] *= 20 / np.linalg.norm(X[0])
    y = X @ np.array([0.5, -0.3, 0.2]) + rng.normal(0, 0.05, n)
    y[0] = -50.0
    x_added = np.full(3, 4 / np.sqrt(3))
    if task == "classification":
        return Design(X, (y > 0).astype(float), x_added, 0.0)
    return Design(X, y, x_added, 1e3)


def bin_edge(spec) -> Design | None:
    """Regression: rows at e1 whose squared residual at w = 0 lies just above a bin edge of the stability
    histograms (64 (1 + 2e-6); bins [2^j, 2^(j+1))), the added record a label outlier: trimmed or not, it moves
    its group's statistic across the edge, so one record visibly changes one histogram (a histogram reading
    another part's rows shows as two parts changed)."""
    if spec.task == "classification":
        return None
    n = audit_settings(spec.name).rows or N_ROWS
    return Design(np.tile(np.eye(3)[0], (n, 1)), np.full(n, -8 * np.sqrt(1 + 2e-6)), np.eye(3)[0], 100.0)


def designs(spec) -> list[tuple[str, Design]]:
    return [(n, d) for n, d in [(n, DESIGNS[n](spec)) for n in DESIGN_NAMES] + [("bin_edge", bin_edge(spec))]
            if d is not None]


def releases(name, params, X, y, seed, replay=None):
    est = algorithms.make(name, **params, random_state=seed)
    with recorded_releases(replay) as out:
        est.fit(X, y)
    return out


def batch_releases(name, runs, X, y, seed, replay=None):
    """The releases of one `fit_batch` of the runs (seeds seed, seed + 1, ...), in the order it makes them."""
    ests = [algorithms.make(name, **params, random_state=seed + r) for r, params in enumerate(runs)]
    with recorded_releases(replay) as out:
        type(ests[0]).fit_batch(ests, X, y)
    return out


def excess(a, b) -> float:
    """How far the change from release a (on D) to b (on D') exceeds what a's charge allows (<= 0: fine)."""
    scale = max(1.0, abs(a.sensitivity or 1.0))
    if a.mechanism == "gaussian":
        return float(np.linalg.norm(np.ravel(b.value) - np.ravel(a.value)) - a.sensitivity) / scale
    if a.mechanism == "laplace":
        return float(np.abs(np.ravel(b.value) - np.ravel(a.value)).sum() - a.sensitivity) / scale
    if a.mechanism == "histogram":
        keys = set(a.value) | set(b.value)
        l1 = sum(abs(b.value.get(k, 0) - a.value.get(k, 0)) for k in keys)
        return float(l1 - a.sensitivity) / scale
    if a.mechanism in ("exponential", "exponential_rows"):
        wa, wb = np.atleast_2d(a.value), np.atleast_2d(b.value)
        assert wa.shape == wb.shape, f"{a.name}: candidate sets differ ({wa.shape} vs {wb.shape})"
        assert np.array_equal(np.isfinite(wa), np.isfinite(wb)), f"{a.name}: the support of the weights changed"
        with np.errstate(invalid="ignore"):  # -inf - -inf where a candidate has weight 0 on both
            change = np.where(np.isfinite(wa), wb - wa, 0.0)
        changed_rows = int(np.any(change != 0, axis=1).sum())
        assert changed_rows <= 1, f"{a.name}: {changed_rows} disjoint parts changed by one record"
        spread = float(max(np.ptp(row[np.isfinite(wa[i])]) if np.isfinite(wa[i]).any() else 0.0
                           for i, row in enumerate(change)))
        return spread - a.epsilon
    if a.mechanism == "restricted_exponential":
        return -np.inf  # see the module docstring
    raise AssertionError(f"{a.name}: unknown mechanism {a.mechanism!r}")


def changed(a, b) -> bool:
    if a.mechanism == "histogram":
        return a.value != b.value
    return not np.array_equal(np.asarray(a.value), np.asarray(b.value))


def check_pair(where, on_d, on_d1, checked: Counter) -> None:
    """Every release of on_d1 (D', replaying on_d) against its twin of on_d (D); counts them by mechanism."""
    assert [r.name for r in on_d1] == [r.name for r in on_d], f"{where}: the releases differ"
    for a, b in zip(on_d, on_d1, strict=True):
        assert excess(a, b) <= TOLERANCE, f"{where}: {a.name} ({a.mechanism}) moved beyond its charge"
        checked[a.mechanism] += 1
    parts = {a.part for a, b in zip(on_d, on_d1, strict=True) if a.part and changed(a, b)}
    assert len(parts) <= 1, f"{where}: one record changed releases of the disjoint parts {sorted(parts)}"


@pytest.mark.parametrize("name", PRIVATE)
def test_every_release_moves_by_at_most_its_sensitivity(name):
    spec = algorithms.get_spec(name)
    checked = Counter()
    for design_name, design in designs(spec):
        params = {**audit_settings(name).params, **design.params}
        X1, y1 = design.neighbour()
        for seed in range(3):
            on_d = releases(name, params, design.X, design.y, seed)
            on_d1 = releases(name, params, X1, y1, seed, replay=on_d)
            check_pair(f"{name} / {design_name} / seed {seed}", on_d, on_d1, checked)
    assert checked and MUST_CHECK.get(name, set()) <= set(checked), f"{name}: checked only {dict(checked)}"


@pytest.mark.parametrize("name", BATCHED)
def test_every_release_of_fit_batch_moves_by_at_most_its_sensitivity(name):
    """As above through `fit_batch` (what sweeps call): one batch of runs with different clip bounds and rounds,
    on the audit's designs and on `outlier_design`."""
    spec = algorithms.get_spec(name)
    checked = Counter()
    for design_name, design in [*designs(spec), ("outlier", outlier_design(spec.task))]:
        runs = [{**audit_settings(name).params, **design.params, **params} for params in batch_params(name)]
        X1, y1 = design.neighbour()
        for seed in range(3):
            on_d = batch_releases(name, runs, design.X, design.y, 10 * seed)
            on_d1 = batch_releases(name, runs, X1, y1, 10 * seed, replay=on_d)
            check_pair(f"{name} fit_batch / {design_name} / seed {seed}", on_d, on_d1, checked)
    assert checked["gaussian"] > 0
