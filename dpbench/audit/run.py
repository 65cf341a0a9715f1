"""Empirical privacy audit: fit an algorithm many times on D and on D' = D + one crafted record, bound epsilon.

A ledger can only say what an algorithm *claims* to spend; the audit measures what it releases.  For each
private algorithm and canary design (`dpbench.audit.designs`) `run_audit`

1. fits N times on D and N times on D' (each fit with its own seed, from a `SeedSequence` keyed by
   algorithm, design, epsilon and side), in chunks through joblib;
2. takes statistics of each fit: the model's output at the canary's x (`decision_function` for
   classifiers, `predict` for regressors) -- a fit that raises or returns a non-finite output is an outcome
   too (an exception is observable), kept as NaN -- and, on designs with `attributes`, a number for each
   public fitted attribute (`attribute_digests`: an attribute that is not a release differs on D and D');
   a design with entry "fit_batch" fits through `fit_batch`, beside a companion run;
3. chooses a test (statistic, threshold) on half of the fits and lower-bounds epsilon (and mu) on the other half
   (`dpbench.audit.bounds`).

A lower bound above the budget asked for is a 'violation' (a 5% false alarm rate per row at most).  A bound
below it proves nothing: the audit has power only for the designs it tries, and N fits can certify at most
about log(N/2) (e.g. ~4.9 with 1000 fits a side).  `power_check` shows, for each algorithm, that a weakened
copy of it is caught.
"""

from __future__ import annotations

import contextlib
import time
import warnings
import zlib
from collections import Counter
from collections.abc import Callable

import joblib
import numpy as np
import pandas as pd
from sklearn.base import clone

from dpbench.audit.bounds import audit_outputs
from dpbench.audit.designs import DESIGNS
from dpbench.audit.settings import audit_settings

DEFAULT_DELTA = 1e-6


def _seeds(seed: int, key: str, n: int) -> list[int]:
    ss = np.random.SeedSequence(seed, spawn_key=(zlib.crc32(key.encode()),))
    return [int(s) for s in ss.generate_state(n, dtype=np.uint64)]


def _digest(value) -> float | None:
    """One number for a fitted attribute (None: an object the audit does not read, e.g. an inner model): its
    value, the sum of its finite entries plus 1e-3 per non-finite one, a ledger's length, a string's CRC."""
    if hasattr(value, "entries"):  # a privacy ledger: how many releases it holds
        return float(len(value.entries))
    if isinstance(value, str):
        return float(zlib.crc32(value.encode()))
    try:
        a = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        return None
    finite = np.isfinite(a)
    return float(a[finite].sum() + 1e-3 * (~finite).sum())


def attribute_digests(est) -> dict[str, float]:
    """Each public fitted attribute of `est` (names ending in '_'; a dict's entries one by one) as a number, and
    the set of their names as one more: a leak through an attribute shows as a difference between D and D'."""
    out, names = {}, sorted(a for a in vars(est) if a.endswith("_") and not a.startswith("_"))
    for name in names:
        value = vars(est)[name]
        for key, v in (value.items() if isinstance(value, dict) else [("", value)]):
            number = _digest(v)
            if number is not None:
                out[f"{name}{key}"] = number
    out["attribute names"] = float(zlib.crc32(",".join(names).encode()))
    return out


def _companion(est):
    """A second run for a batch: another seed, doubled clip bounds and rounds where the algorithm has them."""
    params = est.get_params()
    change = {k: params[k] * 2 for k in ("x_bound", "y_bound", "grad_bound", "n_rounds") if k in params}
    return clone(est).set_params(**change, random_state=int(est.random_state) + 1)


def fit_chunk(template, X, y, canary, method: str, seeds, entry: str = "fit", attributes: bool = False,
              noise_factor: float = 1.0) -> dict:
    """Fit clone(template) with each seed (entry "fit_batch": through fit_batch, beside a companion run); the
    output at the canary (NaN when the fit raised or the output is not finite), the attributes' digests (when
    `attributes`), failures, GDP-ness.  noise_factor != 1: the fits inside `weakened_noise(noise_factor)`, in
    whichever process runs the chunk."""
    from dpbench.privacy.mechanisms import weakened_noise

    out, digests = np.full(len(seeds), np.nan), []
    errors, gdp, t0 = Counter(), True, time.perf_counter()
    with warnings.catch_warnings(), weakened_noise(noise_factor) if noise_factor != 1.0 else contextlib.nullcontext():
        warnings.simplefilter("ignore")  # e.g. TukeyEM warns on every fit with too few rows per model
        for i, seed in enumerate(seeds):
            est = clone(template).set_params(random_state=seed)
            digests.append({})
            try:
                with np.errstate(all="ignore"):
                    if entry == "fit_batch":
                        type(est).fit_batch([est, _companion(est)], X, y)
                    else:
                        est.fit(X, y)
                    out[i] = float(np.ravel(getattr(est, method)(canary[None]))[0])
            except Exception as exc:  # noqa: BLE001 - a fit that raises is an outcome, counted and reported
                errors[f"{type(exc).__name__}: {exc}"[:160]] += 1
                continue
            if attributes:
                digests[-1] = attribute_digests(est)
            ledger = getattr(est, "privacy_ledger_", None)
            gdp &= bool(ledger is not None and len(ledger) and not ledger.dp_entries)
            if not np.isfinite(out[i]):
                errors["output is not finite"] += 1
                out[i] = np.nan
    return {"out": out, "digests": digests, "errors": errors, "gdp": gdp, "seconds": time.perf_counter() - t0}


def statistics(outs: list[np.ndarray], digests: list[list[dict]]) -> tuple[list[str], list[np.ndarray]]:
    """Per side, a (fits x statistics) matrix: the canary's output, then every attribute digest seen on either
    side (NaN where a fit lacks it: a failure value for the test, as a raised fit)."""
    keys = sorted({k for side in digests for d in side for k in d})
    mats = [np.column_stack([out] + [np.array([d.get(k, np.nan) for d in side]) for k in keys])
            for out, side in zip(outs, digests, strict=True)]
    return ["f(canary)"] + keys, mats


def _jobs(name, spec, design_name, design, epsilon, delta, runs, seed, chunk, params, noise_factor=1.0):
    """The chunked fit tasks of one (algorithm, design, epsilon): (side, delayed call) pairs."""
    from dpbench import algorithms

    settings = {**audit_settings(name).params, **params.get(name, {}), **design.params, "epsilon": epsilon,
                "delta": delta}
    template = design.estimator(**settings) if design.estimator else algorithms.make(name, **settings)
    method = "decision_function" if spec.task == "classification" else "predict"
    for side, (X, y) in enumerate([(design.X, design.y), design.neighbour()]):
        seeds = _seeds(seed, f"{name}/{design_name}/{epsilon!r}/{side}", runs)
        for a in range(0, runs, chunk):
            yield side, joblib.delayed(fit_chunk)(template, X, y, design.x_added, method, seeds[a: a + chunk],
                                                  design.entry, design.attributes, noise_factor)


def check_runs(runs: int) -> int:
    """`runs` (fits a side), or ValueError: half select the test, half bound epsilon, so at least 10."""
    if runs < 10:
        raise ValueError(f"runs must be >= 10 fits per side (half select the test, half bound epsilon), got {runs}")
    return runs


def check_request(algorithms_: list[str] | None, epsilons, designs, runs: int | Callable[[str, str], int],
                  delta: float) -> tuple[list, list]:
    """Validate the audit's input; ValueError naming the problem.  Returns (algorithms, designs).  `runs` a
    function (algorithm, design) -> runs: each value is checked as the audit asks for it."""
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
    if not callable(runs):
        check_runs(runs)
    designs = list(DESIGNS) if not designs else list(designs)
    unknown = [d for d in designs if d not in DESIGNS]
    if unknown:
        raise ValueError(f"unknown design(s) {unknown}; known: {', '.join(DESIGNS)}")
    return names, designs


def run_audit(algorithms: list[str] | None = None, epsilons=(1.0,), designs=None,
              runs: int | Callable[[str, str], int] = 500,
              delta: float = DEFAULT_DELTA, n_jobs: int | None = 2, seed: int = 0, chunk: int = 100,
              params: dict | None = None, progress=None, noise_factor: float = 1.0) -> pd.DataFrame:
    """The audit table: one row per (algorithm, design, epsilon).  See the module docstring.

    algorithms None: every private algorithm; designs None: all of DESIGNS; runs: fits per side, or a function
    (algorithm, design) -> fits per side (each row's `runs` says its own);
    params: extra hyperparameters per algorithm name (over its `params` audit setting, under the design's).
    Fits run through joblib in chunks of `chunk` seeds under the active `joblib.parallel_config`
    (so the runner's backend, e.g. dask, applies); n_jobs None takes n_jobs from that config too.
    `progress(done, total, seconds)` is called as chunks finish (the CLI prints a line).  noise_factor: every
    noise scale of the fits x noise_factor, the ledger unchanged (`mechanisms.weakened_noise`, entered in the
    workers too): a deliberately weakened copy, for showing the audit's power (`power_check`).
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
            n_runs = check_runs(runs(name, dname)) if callable(runs) else runs
            for eps in epsilons:
                for side, task in _jobs(name, spec, dname, design, float(eps), delta, n_runs, seed, chunk, params,
                                        noise_factor):
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
        g = groups.setdefault((name, dname, eps), {"out": ([], []), "digests": ([], []), "errors": Counter(),
                                                   "gdp": True, "s": 0.0})
        g["out"][side].append(res["out"])
        g["digests"][side].extend(res["digests"])
        g["errors"] += res["errors"]
        g["gdp"] &= res["gdp"]
        g["s"] += res["seconds"]
    rows = []
    for (name, dname, eps), g in groups.items():
        outs = [np.concatenate(g["out"][0]), np.concatenate(g["out"][1])]
        failures = int(np.isnan(outs[0]).sum() + np.isnan(outs[1]).sum())
        gdp = g["gdp"] and failures < len(outs[0]) + len(outs[1])
        names, (s0, s1) = statistics(outs, list(g["digests"]))
        res = audit_outputs(s0, s1, delta, gdp, names=names)
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


def power_check(name: str, epsilon: float = 1.0, factor: float = POWER_FACTOR, seed: int = 0,
                n_jobs: int | None = 1) -> dict:
    """Audit a deliberately weakened copy of algorithm `name` (noise scales x `factor`, ledger unchanged) on its
    `power` design; the audit must flag it (verdict 'violation').  The audit's row.

    One chunk a side (n_jobs 2: the two sides at once), so keep the design cheap.
    """
    runs = audit_settings(name).power.get("runs", POWER_RUNS)
    table = run_audit([name], epsilons=(epsilon,), designs=["power"], runs=runs, n_jobs=n_jobs, seed=seed, chunk=runs,
                      noise_factor=factor)
    return table.iloc[0].to_dict()
