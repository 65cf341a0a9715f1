"""The generic checks every registered algorithm must pass, one function per check, each returning table rows.

`python -m dpbench check MODULE[:NAME]` runs them on a user's algorithms, `assert_checks` in a user's own test
file, and dpbench's tests (tests/algorithms/) run the same code on every built-in algorithm, so a new algorithm
is held to what the built-in ones are:

1. `check_sklearn`: scikit-learn's estimator checks, less those the class declares it fails by design
   (`_expected_failed_checks`; one that passes anyway is a stale declaration and fails, as a strict xfail);
2. `check_ledger`: every noise draw is a ledger entry (a Generator that notes each draw, `RecordingGenerator`)
   and the ledger composes to the budget (`summary.spent_budget`);
3. `check_degenerate`: n = 0, one record, one class, all-zero X, values of 1e300 ... (`degenerate_cases`) give
   a finite model, through every entry point (DESIGN.md, "Failures are releases");
4. `check_sensitivity`: every release moves by at most its recorded sensitivity between D and D plus a record
   (`release_sensitivity`);
5. `check_audit`: the fast empirical audit on every design that applies, each row saying the most its fits can
   certify, and whether a copy with its noise x 0.1 is caught (the audit's power on this algorithm).

A check's finding is a `CheckFailed` (an AssertionError, so the tests that call these helpers fail with it).
"""

from __future__ import annotations

import functools
import sys
import warnings
from collections import Counter
from collections.abc import Iterable

import numpy as np
import pandas as pd

from dpbench import algorithms
from dpbench.audit import DESIGNS, audit_settings
from dpbench.audit.designs import N_ROWS, Design, has_batched_path
from dpbench.privacy.mechanisms import recorded_releases

OK, FAIL, SKIPPED = "ok", "FAIL", "skipped"
COLUMNS = ["check", "algorithm", "result", "detail"]
EPSILON, DELTA = 1.0, 1e-6  # the budget of the checks' fits
AUDIT_RUNS = 500  # fits a side: the fast audit's (`python -m dpbench audit` without --full)


class CheckFailed(AssertionError):
    """What a check found wrong, in one line."""


def require(condition, message: str) -> None:
    """CheckFailed(message) unless `condition`."""
    if not condition:
        raise CheckFailed(message)


def _one_line(exc: BaseException, limit: int = 160) -> str:
    text = f"{type(exc).__name__}: {' '.join(str(exc).split())}"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _row(check: str, name: str, result: str, detail: str) -> dict:
    return {"check": check, "algorithm": name, "result": result, "detail": detail}


def _check(label: str):
    """A check's body returns (result, detail); its row is FAIL with the finding when it raises CheckFailed, and
    with the exception when the algorithm (or anything it calls) raises.  Warnings are not the table's."""

    def wrap(body):
        @functools.wraps(body)
        def run(name: str, **kwargs) -> dict:
            try:
                with warnings.catch_warnings(), np.errstate(all="ignore"):
                    warnings.simplefilter("ignore")
                    result, detail = body(name, **kwargs)
            except CheckFailed as exc:
                result, detail = FAIL, " ".join(str(exc).split())
            except Exception as exc:  # noqa: BLE001 - whatever the algorithm raises is the finding
                result, detail = FAIL, f"raised {_one_line(exc)}"
            return _row(label, name, result, detail)

        return run

    return wrap


def _private(name: str) -> bool:
    return algorithms.get_spec(name).private


def _params(name: str) -> dict:
    """The algorithm's cheap settings (its `params` audit setting): the privacy argument holds for every setting."""
    return dict(audit_settings(name).params)


def entries(name: str, candidate: bool = False) -> list[str]:
    """The ways a sweep fits `name`: `fit`; `fit_batch` when it has a batched path; with `candidate`, also as a
    private selection's candidate (unless it is a selection itself)."""
    cls = algorithms.get_spec(name).estimator
    out = ["fit"] + (["fit_batch"] if has_batched_path(cls) else [])
    if candidate and "validation_fraction" not in cls().get_params():
        out.append("candidate")
    return out


# ----------------------------------------------------------------------------- 1. scikit-learn's checks


def sklearn_estimator(name: str):
    """The instance scikit-learn's checks run on: a private algorithm at its cheap audit settings and seed 0 (a
    check such as the one-class one is a draw of the noise: fixed here), a non-private one at its defaults."""
    return algorithms.make(name, **_params(name), random_state=0) if _private(name) else algorithms.make(name)


def expected_failed_checks(est) -> dict:
    """The checks an estimator declares it fails by design (base.DPEstimator._expected_failed_checks), with why."""
    return getattr(est, "_expected_failed_checks", dict)()


@_check("sklearn")
def check_sklearn(name: str):
    """scikit-learn's estimator checks on `name`, but those its class declares it fails by design
    (`_expected_failed_checks`); CheckFailed if one fails, or if a declared failure passes (a stale declaration)."""
    from sklearn.utils.estimator_checks import check_estimator

    est = sklearn_estimator(name)
    declared = expected_failed_checks(est)
    results = check_estimator(est, expected_failed_checks=declared, on_fail=None, on_skip=None)
    failed = [f"{r['check_name']}: {_one_line(r['exception'])}" for r in results if r["status"] == "failed"]
    stale = [f"{r['check_name']} passes though declared failing ({r['expected_to_fail_reason'][:100]}...)"
             for r in results if r["status"] == "passed" and r["expected_to_fail"]]
    require(not failed, f"{len(failed)} of {len(results)} checks fail, e.g. {failed[0] if failed else ''}")
    require(not stale, f"{len(stale)} of {len(results)} checks pass though _expected_failed_checks declares them "
            f"failing: what the declaration says of the estimator no longer holds, e.g. {stale[0] if stale else ''}")
    status = Counter(r["status"] for r in results)
    return OK, (f"{status['passed']} of {len(results)} checks pass, {status['xfail']} declared failing "
                f"(_expected_failed_checks), {status['skipped']} skipped")


# ----------------------------------------------------------------------------- 2. the ledger

# the Generator method each ledger mechanism draws its noise with
FAMILY = {"gaussian": "normal", "gaussian_classical": "normal", "gaussian_analytic": "normal",
          "laplace": "laplace", "stability_histogram": "laplace", "exponential": "gumbel"}
EXTERNAL = {"interpret_binning", "interpret_boosting", "interpret_dp_ebm"}  # noise drawn inside interpret's C++


class RecordingGenerator(np.random.Generator):
    """A numpy Generator that notes (family, scale) of each privacy-noise draw: what a fit drew, to compare with
    what its ledger says it drew."""

    def __init__(self, seed):
        super().__init__(np.random.PCG64(seed))
        self.draws = []

    def normal(self, loc=0.0, scale=1.0, size=None):
        # mechanisms.gaussian_rounds draws the noise of many rounds (one release per row) in one call
        releases = size[0] if sys._getframe(1).f_code.co_name == "round_noise" else 1
        self.draws += [("normal", float(scale))] * releases
        return super().normal(loc, scale, size)

    def laplace(self, loc=0.0, scale=1.0, size=None):
        self.draws.append(("laplace", float(scale)))
        return super().laplace(loc, scale, size)

    def gumbel(self, loc=0.0, scale=1.0, size=None):
        self.draws.append(("gumbel", float(scale)))
        return super().gumbel(loc, scale, size)

    def random(self, size=None, dtype=np.float64, out=None):
        caller = sys._getframe(1)  # mechanisms.gumbel_noise draws Gumbel noise from uniforms
        if caller.f_code.co_name == "gumbel_noise":
            self.draws.append(("gumbel", float(caller.f_locals["scale"])))
        return super().random(size, dtype, out)

    def standard_normal(self, *args, **kwargs):
        raise CheckFailed("privacy noise must be drawn with an explicit scale by dpbench.privacy")


def rounded(scale):
    return float(f"{scale:.12g}")


def drawn(gen: RecordingGenerator) -> Counter:
    """(family, scale) -> number of draws a RecordingGenerator saw."""
    return Counter((family, rounded(scale)) for family, scale in gen.draws)


def ledger_draws(ledger) -> Counter:
    """(family, scale) -> number of draws the ledger's entries stand for (interpret's entries excluded): each
    entry stands for `count` draws of its family at its noise scale."""
    expected = Counter()
    for e in ledger.entries:
        if e.mechanism in EXTERNAL:
            continue
        require(e.mechanism in FAMILY, f"ledger mechanism {e.mechanism!r} has no known noise family")
        expected[(FAMILY[e.mechanism], rounded(e.noise_scale))] += e.count
    return expected


def ledger_data(task: str, seed: int = 0, n: int = 30_000, d: int = 3):
    """Ordinary data, large enough for every algorithm to reach its last release."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) / np.sqrt(d)
    score = X @ np.array([0.5, -0.3, 0.2][:d]) + 0.1 * rng.normal(size=n)
    return X, (score > 0).astype(int) if task == "classification" else score


@_check("ledger")
def check_ledger(name: str, epsilon: float = EPSILON, delta: float = DELTA, seeds: int = 3):
    """Fits through every entry point (`entries`) with a `RecordingGenerator`, `seeds` seeds: CheckFailed unless
    every noise draw is an entry of the fit's ledger and the ledger composes to (epsilon, delta).  SKIPPED for a
    non-private algorithm."""
    from dpbench.summary import spent_budget

    if not _private(name):
        return SKIPPED, "not private: no ledger"
    X, y = ledger_data(algorithms.get_spec(name).task)
    statuses, releases = Counter(), []
    for entry in entries(name):
        runs = [{}] if entry == "fit" else batch_params(name)
        for seed in range(seeds):
            gens = [RecordingGenerator(len(runs) * seed + r) for r in range(len(runs))]
            ests = [algorithms.make(name, **{**_params(name), **run}, epsilon=epsilon, delta=delta, random_state=g)
                    for run, g in zip(runs, gens, strict=True)]
            if entry == "fit":
                ests[0].fit(X, y)
            else:
                type(ests[0]).fit_batch(ests, X, y)
            for est, gen in zip(ests, gens, strict=True):
                where, expected = f"{entry}, seed {seed}", ledger_draws(est.privacy_ledger_)
                require(len(est.privacy_ledger_), f"{where}: the ledger holds no release")
                require(drawn(gen) == expected, f"{where}: noise drawn {dict(drawn(gen))} != the ledger's "
                        f"{dict(expected)}")
                spent = spent_budget(est, epsilon, delta)
                require(spent["ok"], f"{where}: spent (eps {spent['spent_epsilon']:.6g}, delta "
                        f"{spent['spent_delta']:.3g}) of ({epsilon:g}, {delta:g}) (status {spent['status']})")
                statuses[spent["status"]] += 1
                releases.append(sum(e.count for e in est.privacy_ledger_.entries))
    require(statuses["ok"], f"no fit ran to the end ({dict(statuses)}): its later releases went unchecked")
    each = f"{min(releases)}" if min(releases) == max(releases) else f"{min(releases)} to {max(releases)}"
    return OK, (f"{len(releases)} fits ({', '.join(entries(name))}), {each} release(s) each: every noise draw "
                f"in the ledger, composing to eps {epsilon:g}, delta {delta:g}")


# ----------------------------------------------------------------------------- 3. degenerate inputs

D = 3
PROBE = np.vstack([np.zeros((1, D)), np.eye(D)])  # public points where a model's output must be finite


def ordinary_rows(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """n well-scaled rows (norms ~0.5) and their noiseless linear labels."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, D)) / (2 * np.sqrt(D))
    return X, X @ np.array([0.5, -0.3, 0.2])


def _with(X, y, x, label):
    return np.vstack([X, x[None]]), np.append(y, label)


def degenerate_cases(task: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Degenerate datasets inside the data domain (finite).  Classification labels are 0/1 (0 where a regression
    label is <= 0), so 'one_class' and the one-record sets hold a single class."""
    X, y = ordinary_rows(60)
    e1 = np.eye(D)[0]
    out = {
        "empty": (np.zeros((0, D)), np.zeros(0)),
        "one_record": (e1[None], np.array([1.0])),
        "one_record_at_zero": (np.zeros((1, D)), np.array([1.0])),
        "all_zero": (np.zeros((50, D)), np.arange(50) % 2.0),
        "zero_bins": (np.full((50, D), 0.01), np.arange(50) % 2.0),  # every entry in its feature's bin of 0
        "constant_columns": (np.full((50, D), 0.3), np.arange(50) % 2.0),
        "one_class": (X, np.ones(len(y))),
        "at_the_clip_bound": (X / np.linalg.norm(X, axis=1, keepdims=True), y),
        "record_at_1e300": _with(X, y, 1e300 * e1, 1e300),
        "record_at_1e-300": _with(X, y, 1e-300 * e1, 1e-300),
        "label_1e300": _with(X, y, e1, -1e300),
    }
    if task == "classification":
        out = {k: (Xc, (yc > 0).astype(float)) for k, (Xc, yc) in out.items()}
    return out


def model_output(est, task: str, X=PROBE):
    return est.decision_function(X) if task == "classification" else est.predict(X)


def _batch(name: str) -> list:
    """Three runs of `name` that one fit_batch fits together: other seeds, clip bounds and rounds where it has them."""
    base = _params(name)
    ests = [algorithms.make(name, **base, random_state=s) for s in range(3)]
    params = ests[0].get_params()
    for est, scale in zip(ests[1:], (0.5, 4.0), strict=True):
        change = {k: params[k] * scale for k in ("x_bound", "y_bound", "grad_bound") if k in params}
        if "n_rounds" in params:
            change["n_rounds"] = max(1, int(params["n_rounds"] * scale))
        est.set_params(**change)
    return ests


def _selection(name: str, task: str):
    selector = "private_selection" if task == "regression" else "private_selection_clf"
    return algorithms.make(selector, algorithm=name, base_params=_params(name), n_candidates=2, space={},
                           random_state=0)


def fitted(name: str, entry: str, X, y) -> list:
    """The estimators `entry` ('fit', 'fit_batch' or 'candidate', see `entries`) fits on (X, y)."""
    task = algorithms.get_spec(name).task
    if entry == "fit":
        return [algorithms.make(name, **_params(name), random_state=0).fit(X, y)]
    if entry == "fit_batch":
        ests = _batch(name)
        return type(ests[0]).fit_batch(ests, X, y)
    return [_selection(name, task).fit(X, y)]


def finite_models(name: str, entry: str) -> None:
    """CheckFailed unless every fit through `entry` on every degenerate case returns a finite model (and, as a
    candidate, never falls back): whether a fit raises or returns NaN is a release."""
    task = algorithms.get_spec(name).task
    for case, (X, y) in degenerate_cases(task).items():
        where = f"{name} via {entry} on {case}"
        try:
            with np.errstate(all="ignore"):
                ests = fitted(name, entry, X, y)
        except Exception as exc:  # noqa: BLE001 - the failure is the finding
            raise CheckFailed(f"{where}: the fit raised {_one_line(exc)}") from exc
        for est in ests:
            require(np.all(np.isfinite(np.asarray(model_output(est, task), dtype=float))), f"{where}: non-finite model")
            if entry == "candidate":
                require(est.failed_candidates_ == [], f"{where}: a candidate fell back ({est.failed_candidates_})")


@_check("degenerate inputs")
def check_degenerate(name: str):
    """Every degenerate input (`degenerate_cases`: n = 0, one record, one class, all-zero X, 1e300, ...) through
    every entry point, a private selection's candidate included, gives a finite model (`finite_models`), else
    CheckFailed.  SKIPPED for a non-private algorithm."""
    if not _private(name):
        return SKIPPED, "not private: a non-private fit may reject degenerate data"
    ways = entries(name, candidate=True)
    for entry in ways:
        finite_models(name, entry)
    cases = degenerate_cases(algorithms.get_spec(name).task)
    return OK, f"{len(cases)} inputs (n = 0, one record, one class, all-zero X, 1e300, ...) via {', '.join(ways)}: " \
               "finite models"


# ----------------------------------------------------------------------------- 4. per-release sensitivity
#
# The ledger says what each release is charged; this checks the charge is earned.  The algorithm is fitted on D
# and on D plus one crafted record with the same seed; the second fit replays the first fit's noisy outputs
# (`mechanisms.recorded_releases`), so every release of the second fit is computed from the same past and their
# difference is the one-record change the release's proof bounds (adaptive composition):
#
# - Gaussian: the L2 change of the statistic <= its sensitivity (Laplace: the L1 change; stability histograms:
#   the L1 change of the exact bin counts);
# - exponential mechanism: max_i - min_i of the change in log-weights <= the epsilon charged (the privacy loss of
#   P(i) ~ exp(w_i) is bounded by exactly that spread); for `exponential_rows` (disjoint parts) at most one row
#   changes;
# - releases of disjoint parts (`mechanisms.release_part`, ledger tags 'part/what') change in one part at most
#   (parallel composition);
# - TukeyEM's restricted exponential mechanism ('restricted_exponential') is private by its PTR check's safety
#   guarantee, not by a bound on the change of its log-weights (they hold region volumes): not checked here
#   (tests/algorithms/test_tukey.py checks its exponent and the audit's `ptr_passes` design exercises it);
# - the fits make the same releases in the same order (a branch on anything but a release or a parameter would
#   show here as a different sequence).
#
# Per-record randomness comes from `base.record_generator`, so the records of D keep their parts and draws.
# Sweeps fit through `fit_batch`, so an algorithm with a batched path is checked through it too, on batches
# mixing clip bounds and rounds.  Only releases made through `dpbench.privacy` are seen (DP-EBM's inside
# interpret's own code are not).

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


def sensitivity_designs(spec) -> list[tuple[str, Design]]:
    """The neighbouring pairs the check fits on: the audit's designs of DESIGN_NAMES that apply, and `bin_edge`."""
    return [(n, d) for n, d in [(n, DESIGNS[n](spec)) for n in DESIGN_NAMES] + [("bin_edge", bin_edge(spec))]
            if d is not None]


def releases(name, params, X, y, seed, replay=None):
    """The releases of one fit (seed `seed`), in the order it makes them."""
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
        require(wa.shape == wb.shape, f"{a.name}: candidate sets differ ({wa.shape} vs {wb.shape})")
        require(np.array_equal(np.isfinite(wa), np.isfinite(wb)), f"{a.name}: the support of the weights changed")
        with np.errstate(invalid="ignore"):  # -inf - -inf where a candidate has weight 0 on both
            change = np.where(np.isfinite(wa), wb - wa, 0.0)
        changed_rows = int(np.any(change != 0, axis=1).sum())
        require(changed_rows <= 1, f"{a.name}: {changed_rows} disjoint parts changed by one record")
        spread = float(max(np.ptp(row[np.isfinite(wa[i])]) if np.isfinite(wa[i]).any() else 0.0
                           for i, row in enumerate(change)))
        return spread - a.epsilon
    if a.mechanism == "restricted_exponential":
        return -np.inf  # see the comment above DESIGN_NAMES
    raise CheckFailed(f"{a.name}: unknown mechanism {a.mechanism!r}")


def changed(a, b) -> bool:
    if a.mechanism == "histogram":
        return a.value != b.value
    return not np.array_equal(np.asarray(a.value), np.asarray(b.value))


def check_pair(where, on_d, on_d1, checked: Counter) -> None:
    """Every release of on_d1 (D', replaying on_d) against its twin of on_d (D); counts them by mechanism."""
    require([r.name for r in on_d1] == [r.name for r in on_d], f"{where}: the releases differ")
    for a, b in zip(on_d, on_d1, strict=True):
        require(excess(a, b) <= TOLERANCE, f"{where}: {a.name} ({a.mechanism}) moved beyond its charge "
                f"(by {excess(a, b):.3g} x max(1, sensitivity))")
        checked[a.mechanism] += 1
    parts = {a.part for a, b in zip(on_d, on_d1, strict=True) if a.part and changed(a, b)}
    require(len(parts) <= 1, f"{where}: one record changed releases of the disjoint parts {sorted(parts)}")


def release_sensitivity(name: str, entry: str = "fit", seeds: int = 3) -> Counter:
    """Check every release of `name` fitted through `entry` ('fit', or 'fit_batch': one batch of BATCH's runs,
    also on `outlier_design`) on each design's D and D', `seeds` seeds; CheckFailed at the first release beyond
    its charge.  Returns the releases checked, by mechanism."""
    spec = algorithms.get_spec(name)
    checked = Counter()
    pairs = sensitivity_designs(spec) + ([("outlier", outlier_design(spec.task))] if entry == "fit_batch" else [])
    for design_name, design in pairs:
        params = {**_params(name), **design.params}
        X1, y1 = design.neighbour()
        for seed in range(seeds):
            where = f"{name}{' fit_batch' if entry == 'fit_batch' else ''} / {design_name} / seed {seed}"
            try:
                if entry == "fit":
                    on_d = releases(name, params, design.X, design.y, seed)
                    on_d1 = releases(name, params, X1, y1, seed, replay=on_d)
                else:
                    runs = [{**params, **run} for run in batch_params(name)]
                    on_d = batch_releases(name, runs, design.X, design.y, 10 * seed)
                    on_d1 = batch_releases(name, runs, X1, y1, 10 * seed, replay=on_d)
            except Exception as exc:  # noqa: BLE001 - a fit that raises is a finding of its own
                raise CheckFailed(f"{where}: the fit raised {_one_line(exc)}") from exc
            check_pair(where, on_d, on_d1, checked)
    return checked


@_check("sensitivity")
def check_sensitivity(name: str):
    """Every release of `name`, through every entry point, moves by at most its recorded sensitivity between D and
    D plus one record (`release_sensitivity`), else CheckFailed.  SKIPPED for a non-private algorithm."""
    if not _private(name):
        return SKIPPED, "not private: no releases"
    checked = Counter()
    for entry in entries(name):
        checked += release_sensitivity(name, entry)
    require(checked, "no release was reported: noisy releases must go through dpbench.privacy's mechanisms")
    designs = len(sensitivity_designs(algorithms.get_spec(name)))
    counts = ", ".join(f"{k} {m}" for m, k in sorted(checked.items()))
    return OK, f"{counts} release(s) on {designs} pairs D, D' x 3 seeds ({', '.join(entries(name))}): each " \
               "within its sensitivity"


# ----------------------------------------------------------------------------- 5. the empirical audit


def check_audit(name: str, runs: int = AUDIT_RUNS, n_jobs: int | None = 2, seed: int = 0) -> list[dict]:
    """The fast audit at eps 1, `runs` fits a side on D and on D', on every design that applies to `name`: a row per
    design, FAIL when its lower bound exceeds the budget or a fit raised or gave a non-finite output.  A bound
    below the budget proves only as much as the design can see, so each row also states the design's power: the
    bound it gives a copy with every noise scale x 0.1 (`weakened_audit`) and the most its fits can certify.  The
    last row fails when that copy is caught on no design (the audit cannot see this algorithm's releases)."""
    from dpbench.audit import POWER_FACTOR, run_audit

    if not _private(name):
        return [_row("audit", name, SKIPPED, "not private: nothing to audit")]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            table = run_audit([name], [EPSILON], runs=runs, delta=DELTA, n_jobs=n_jobs, seed=seed)
            weak = weakened_audit(name, list(table["design"]), runs, seed, n_jobs=n_jobs)
    except Exception as exc:  # noqa: BLE001
        return [_row("audit", name, FAIL, f"raised {_one_line(exc)}")]
    rows = [_audit_row(name, r, weak[r["design"]]) for r in table.to_dict("records")]
    caught = [d for d, w in weak.items() if w["verdict"] == "violation"]
    rows.append(_row("audit weakened copy", name, OK if caught else FAIL,
                     f"a copy with noise x {POWER_FACTOR:g} is caught on {len(caught)} of {len(weak)} designs"
                     + ("" if caught else ": declare a `power` audit setting on which it is (dpbench.audit.settings)")))
    return rows


def weakened_audit(name: str, designs: list[str], runs: int = AUDIT_RUNS, seed: int = 0,
                   n_jobs: int | None = 1) -> dict[str, dict]:
    """design -> the audit row of a copy of `name` with every noise scale x POWER_FACTOR (the ledger unchanged):
    what each design catches of a release with too little noise.  The `power` design at its own runs
    (`power_check`, what the tests hold every built-in algorithm to).  One chunk a side of each design, in
    `n_jobs` processes (`run_audit(noise_factor=...)` weakens the noise in each)."""
    from dpbench.audit import POWER_FACTOR, power_check, run_audit

    others = [d for d in designs if d != "power"]
    table = run_audit([name], [EPSILON], others, runs=runs, delta=DELTA, n_jobs=n_jobs, seed=seed, chunk=runs,
                      noise_factor=POWER_FACTOR) if others else pd.DataFrame(columns=["design"])
    out = {r["design"]: r for r in table.to_dict("records")}
    if "power" in designs:
        out["power"] = power_check(name, epsilon=EPSILON, seed=seed, n_jobs=n_jobs)
    return out


def _audit_row(name: str, r: dict, weak: dict) -> dict:
    """A design's row: FAIL on a failed fit or a bound above the budget; else the bounds and the design's power
    (what it gives the weakened copy, out of the most its fits can certify)."""
    from dpbench.audit import POWER_FACTOR

    bounds = lambda row: f"eps_lb {row['eps_lb']:.2f}" + ("" if np.isnan(row["mu"]) else f", mu_lb {row['mu_lb']:.2f}")
    budget = f"eps {r['epsilon']:g}" + ("" if np.isnan(r["mu"]) else f", mu {r['mu']:.3g}")
    if r["failures"]:
        return _row(f"audit {r['design']}", name, FAIL, f"{r['failures']} of {2 * r['runs']} fits raised or gave "
                    f"no finite output: {r['error']}")
    if r["verdict"] == "violation":
        return _row(f"audit {r['design']}", name, FAIL, f"{bounds(r)} above the budget ({budget}); test {r['test']}")
    caught = "caught" if weak["verdict"] == "violation" else "not caught"
    return _row(f"audit {r['design']}", name, OK, f"{bounds(r)} within ({budget}); power: noise x {POWER_FACTOR:g} "
                f"{caught} ({bounds(weak)}; the fits certify eps <= {_most_certifiable(weak):.1f})")


def _most_certifiable(row: dict) -> float:
    """The largest epsilon lower bound an audit row's fits can give (perfect separation of the bounding half)."""
    from dpbench.audit import epsilon_lower_bound

    half = int(row["runs"]) // 2
    return float(epsilon_lower_bound(0, half, half, half, row["delta"]))


# ----------------------------------------------------------------------------- all of them


def algorithms_of(target: str) -> list[str]:
    """MODULE[:NAME] -> the algorithms to check: NAME, else every algorithm MODULE registered (those its import
    added to the registry; for a module imported before, those whose class it defines).  MODULE is imported
    with the working directory first on the path; ValueError in one line for what cannot be checked."""
    from dpbench.extend import import_user_module

    module, _, name = target.partition(":")
    if not module:
        raise ValueError(f"expected MODULE[:NAME], got {target!r}")
    before = set(algorithms.available())
    imported = import_user_module(module)
    if name:
        algorithms.get_spec(name)  # ValueError naming the registered ones
        return [name]
    added = sorted(set(algorithms.available()) - before) or [
        n for n in algorithms.available() if algorithms.get_spec(n).estimator.__module__ == imported.__name__]
    if not added:
        raise ValueError(f"module {module!r} registers no algorithm (see dpbench.extend.register_algorithm)")
    return added


def run_checks(names: Iterable[str], runs: int = AUDIT_RUNS, n_jobs: int | None = 2, progress=None) -> pd.DataFrame:
    """Every check on each algorithm of `names`: a row per check (the audit a row per design), COLUMNS.
    `progress(name, check)` is called before each check (the CLI prints a line)."""
    names = list(names)
    for name in names:
        algorithms.get_spec(name)  # ValueError naming the registered ones, before anything runs
    rows = []
    for name in names:
        for label, check in [("sklearn", check_sklearn), ("ledger", check_ledger),
                             ("degenerate inputs", check_degenerate), ("sensitivity", check_sensitivity)]:
            if progress:
                progress(name, label)
            rows.append(check(name))
        if progress:
            progress(name, "audit")
        rows += check_audit(name, runs=runs, n_jobs=n_jobs)
    return pd.DataFrame(rows, columns=COLUMNS)


def format_table(table: pd.DataFrame) -> str:
    """The table as printed: left-aligned columns, the detail whole."""
    widths = [max([len(c), *(len(str(v)) for v in table[c])]) for c in COLUMNS[:-1]]
    lines = [[*COLUMNS[:-1], COLUMNS[-1]]] + [[str(v) for v in row] for row in table[COLUMNS].itertuples(index=False)]
    return "\n".join("  ".join([*(v.ljust(w) for v, w in zip(line[:-1], widths, strict=True)), line[-1]])
                     for line in lines)


def assert_checks(names: str | Iterable[str], runs: int = AUDIT_RUNS, n_jobs: int | None = 2) -> pd.DataFrame:
    """For a user's own test file (after importing the module that registers them): run every check on the
    algorithm(s) `names`; AssertionError with the failing rows if one fails, else the table."""
    table = run_checks([names] if isinstance(names, str) else names, runs=runs, n_jobs=n_jobs)
    failed = table[table["result"] == FAIL]
    if len(failed):
        raise AssertionError(f"{len(failed)} generic check(s) failed:\n{format_table(failed)}")
    return table
