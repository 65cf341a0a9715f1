"""`make bench`: speed and memory of the hot paths as ratios measured in one run (never asserted in tests).

1. BoostedAdaSSP (T = 100) for R = 30 runs: the batched fit (`fit_batch`: shared X^T X, X Theta and X^T G
   as matrix-matrix products in row blocks), in float64 and with products="float32", against the per-run
   estimator loop, on the largest mirror task (SGEMM, 241,600 x 15 after one-hot; synthetic data of that shape
   when the mirror is absent) and on synthetic data shaped like Table II's largest tasks (581,835 x 31,
   515,345 x 90).  One BLAS thread, as a runner worker has; CPU seconds (the machine may be shared), wall
   seconds beside them.  The per-run loop is timed on `--loop-runs` runs and scaled to R (its runs are alike).
   What bounds the batched fit: its GFLOP/s, and the CPU seconds of its block products alone (plain matmuls of
   the same shapes, no elementwise work).
1b. Tuned study: one default study (50 trials x 3 seeds, eps 1) of BoostedAdaSSP on SGEMM's fit part
   (154,624 x 15; synthetic of that shape without the mirror), run once; then its 150 trial fits timed each
   alone (the estimator's fit), one trial at a time (a batch per trial: its 3 seeds), in the study's batches
   (its asks: `study.ask_size`) and all in one fit_batch, in float64 and float32; every run's coefficients are
   checked equal to its fit alone.  The rounds alone bound a batch's gain over trial by trial (it runs as long
   as its longest trial): sum of n_rounds / sum over batches of their longest.  One BLAS thread, CPU seconds.
   The batched fits' elementwise kernels are numba's when it is installed (`DPBENCH_KERNELS=numpy make bench`
   times numpy's).
1c. The same for AdaSSP and DP-GD (`sspgd_study`): one default study each, then its trial fits trial by trial
   (a batch of its seeds), in the study's batches and in one batch (the trials' bounds, rounds and schedules
   differ); coefficients compared with the trial-by-trial fits.  CPU seconds.
2. fig1_fixed (eps 0.1, 1, 10; 10 seeds) end to end from the command line to parquet and figure, against a
   naive loop over the same fits (load, make, fit, predict, score) in one process; `--backends loky,threading`
   times the sweep on each joblib backend.  `--only-e2e` runs only this.  Below each sweep, its wall time split
   into phases (start-up, composition, fits, results, figure, summary, exit: PHASES) from the marks the command
   line writes with DPBENCH_TIMINGS=<file> (dpbench.cli.timing), and when its first part and workers were ready.
3. Peak resident memory of each, each measured in a fresh process.
4. Seconds until a sweep reports a Dask scheduler that does not answer (runner.connect_timeout = 2): should be
   about 2 (tests/runner/test_sweep_scale.py checks the message and that the timeout reaches the client).
6. partners: DP-XGBoost seconds per tree on adult (32,561 x 123 one-hot; synthetic indicators of that shape
   without the mirror), the package's fit (histograms over the entries off each feature's zero bin) against
   the dense histograms of before (`DenseHistogramsReference` in tests/algorithms/test_dp_xgboost.py), eps 10
   (nearly every record in every tree), 20 rounds, two fits each alternating in one process, leaf values checked
   equal.  One BLAS thread.  `--only-xgb` runs only this.
7. estimates: dry-run estimate vs measured.  For small grids (ESTIMATE_GRIDS: the smoke grids, quickstart,
   fig1_fixed, sub-grids of fig1 at default tuning, fig5 and robust_label), `sweep --dry-run`'s time estimate
   twice (their spread: the larger over the smaller, minus 1), then the sweep's measured wall time (each a fresh
   command, the sweep right after its dry runs, in an empty results directory), the first estimate's ratio to
   it, whether the sweep calibrates (runner.calibration.worth_calibrating) and the load average beside them: the
   estimate should be within 2x of the measured time when the load stays put.  `--only-estimates` runs this
   section alone; `--estimates-large` adds LARGE_ESTIMATE_GRID, large enough that the sweep calibrates
   (10-25 min on the 2-core build machine).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import resource
import subprocess
import sys
import tempfile
import time

SHAPES = [("SGEMM (openml_361104)", 241_600, 15), ("synthetic 581,835 x 31", 581_835, 31),
          ("synthetic 515,345 x 90", 515_345, 90)]
FIG1 = ["experiment=fig1_fixed", "epsilons=[0.1,1,10]", "seeds=[0,1,2,3,4,5,6,7,8,9]"]
TWO_TASKS = "datasets=[openml_361076,openml_361094]"  # wine_quality, visualizing_soil: small
ESTIMATE_GRIDS = [["experiment=smoke/fig1"], ["experiment=smoke/robust_label"], ["experiment=smoke/fig4"],
                  ["experiment=quickstart"], ["experiment=fig1_fixed"], ["experiment=fig1", "epsilons=[1]", TWO_TASKS],
                  ["experiment=fig5", "epsilons=[1]", TWO_TASKS],
                  ["experiment=robust_label", "epsilons=[1]", "dataset_grid.n_train=[10000,100000]"]]
LARGE_ESTIMATE_GRID = ["experiment=fig5", "epsilons=[1,10]"]


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _data(name: str, n: int, d: int):
    import numpy as np

    if name.startswith("SGEMM"):
        from dpbench.data import MissingDataError, load_dataset, resolve_data_dir

        try:
            data = load_dataset({"name": "openml_361104"}, split_seed=42, data_dir=resolve_data_dir())
            return data.X_train, data.y_train
        except MissingDataError:
            pass
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, d))
    return X, X @ rng.normal(size=d) / np.sqrt(d) + rng.normal(size=n)


def boosting(name: str, n: int, d: int, runs: int, mode: str, loop_runs: int) -> dict:
    """One measurement, in this (fresh) process: CPU and wall seconds for `runs` fits, the peak memory; for the
    batched modes also the CPU seconds of the products alone (T rounds of `block_products`, after the peak)."""
    from threadpoolctl import threadpool_limits

    from dpbench import algorithms
    from dpbench.algorithms.boosting import BoostedAdaSSPRegressor

    X, y = _data(name, n, d)
    ests = [algorithms.make("boosted_adassp", epsilon=1.0, random_state=i) for i in range(runs)]
    out = {"shape": list(X.shape)}
    with threadpool_limits(1, "blas"):
        start, cpu = time.perf_counter(), time.process_time()
        if mode in ("batched", "batched32"):
            products = {"products": "float32"} if mode == "batched32" else {}
            BoostedAdaSSPRegressor.fit_batch(ests, X, y, **products)
            out.update(seconds=time.perf_counter() - start, cpu=time.process_time() - cpu, peak_mb=_peak_mb())
            out["products_cpu"] = ests[0].n_rounds * block_products(X, runs, products.get("products", "float64"))
        else:
            for est in ests[:loop_runs]:
                est.fit(X, y)
            out["seconds"] = (time.perf_counter() - start) * runs / loop_runs
            out["cpu"] = (time.process_time() - cpu) * runs / loop_runs
    return {"peak_mb": _peak_mb(), **out}  # the batched fit's peak: before `block_products`' copies of X


def block_products(X, runs: int, products: str) -> float:
    """CPU seconds of one round's products alone (X_b Theta, then G X_b, block by block as the batched fit
    reads X), best of 5: what BLAS allows the batched fit on this shape, all elementwise work left out."""
    import numpy as np

    from dpbench.algorithms.base import clip_rows
    from dpbench.algorithms.shared_data import row_blocks

    Xc = clip_rows(X, 1.0).astype(products)
    theta = np.random.default_rng(0).normal(size=(X.shape[1], runs)).astype(products)
    blocks = row_blocks(X.shape[0], runs, X.shape[1])
    buffer = np.empty((blocks[0].stop - blocks[0].start) * runs, products)
    best = math.inf
    for _ in range(5):
        cpu = time.process_time()
        for rows in blocks:
            s = buffer[:(rows.stop - rows.start) * runs].reshape(runs, -1)
            np.matmul(Xc[rows], theta, out=s.T)
            s @ Xc[rows]
        best = min(best, time.process_time() - cpu)
    return best


def study_asks(trials: int, batch_trials: int) -> list[int]:
    """The trials of each of a study's asks (one batched fit each), as `run_study` makes them."""
    from dpbench.tuning.study import ask_size

    asks = []
    while sum(asks) < trials:
        asks.append(ask_size(sum(asks), trials, batch_trials))
    return asks


def default_study(name: str):
    """One default study (50 trials x 3 seeds, eps 1) of algorithm `name` on SGEMM (synthetic of its shape
    without the mirror), one BLAS thread: (run, its fit part, the finished trials' params, wall s, CPU s)."""
    import pathlib

    import optuna
    from threadpoolctl import threadpool_limits

    from dpbench.data import MissingDataError, load_dataset, resolve_data_dir
    from dpbench.runner.grid import expand
    from dpbench.tuning.study import _finished, journal, run_study, study_key, validation_split

    exp = {"name": f"bench_{name}", "algorithms": [{"name": name, "modes": ["tuned"]}], "epsilons": [1.0],
           "datasets": [{"name": "openml_361104"}], "deltas": [1e-6], "seeds": [0], "tuning_mode": "tuned",
           "split": "fixed"}
    try:
        run = expand(exp)[0]
        data = load_dataset(run.dataset, split_seed=run.data_seed, data_dir=resolve_data_dir(), split=run.split)
    except MissingDataError:
        exp["datasets"] = [{"name": "synthetic", "outlier": "none", "n_train": 193_280, "n_test": 48_320, "d": 15}]
        run = expand(exp)[0]
        data = load_dataset(run.dataset, split_seed=run.data_seed)
    key = study_key(run)
    with tempfile.TemporaryDirectory() as tmp, threadpool_limits(1, "blas"):
        start, cpu = time.perf_counter(), time.process_time()
        run_study(run, data, pathlib.Path(tmp))
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
        storage = optuna.storages.JournalStorage(
            optuna.storages.journal.JournalFileBackend(str(journal(pathlib.Path(tmp), run))))
        study = optuna.load_study(study_name=optuna.get_all_study_names(storage)[0], storage=storage)
        param_sets = [t.params for t in _finished(study)]
    fit = validation_split(data, run.tuning["validation_fraction"], int(key, 16) % 2**32)  # the study's fit part
    return run, fit, param_sets, seconds, cpu


def tuned_study() -> dict:
    """One default BoostedAdaSSP study, then its trial fits at three batch sizes (seconds, max difference)."""

    import numpy as np
    from threadpoolctl import threadpool_limits

    from dpbench.algorithms import kernels
    from dpbench.algorithms.boosting import BoostedAdaSSPRegressor
    from dpbench.algorithms.shared_data import SharedData
    from dpbench.tuning.study import trial_estimators

    run, fit, param_sets, study_seconds, study_cpu = default_study("boosted_adassp")
    cfg = run.tuning
    seeds, trials = cfg["seeds"], len(param_sets)
    asks = study_asks(trials, cfg["batch_trials"])
    out = {"study_seconds": study_seconds, "study_cpu": study_cpu, "trials": trials, "seeds": seeds,
           "kernels": kernels.backend(),
           "shape": list(fit.X_train.shape), "batch_trials": cfg["batch_trials"], "asks": asks}
    rounds = [p["n_rounds"] for p in param_sets]
    batches = {"per_trial": [1] * trials, "study_batches": asks, "one_batch": [trials]}
    for mode, sizes in batches.items():  # rounds alone bound a batch's gain: it runs as long as its longest trial
        ends = np.cumsum(sizes)
        out[f"{mode}_bound"] = sum(rounds) / sum(max(rounds[e - n:e]) for n, e in zip(sizes, ends, strict=True))
    thetas = {}
    for mode, products in (("per_fit", "float64"), *((m, p) for p in ("float64", "float32") for m in batches)):
        ests = trial_estimators(run, fit, param_sets, seeds)
        shared, name = SharedData(fit.X_train, fit.y_train), mode if products == "float64" else f"{mode}32"
        with threadpool_limits(1, "blas"):
            start, cpu = time.perf_counter(), time.process_time()
            if mode == "per_fit":  # the single-run estimator, each fit alone
                for est in ests:
                    est.fit(fit.X_train, fit.y_train)
            else:
                first = 0
                for n in batches[mode]:
                    BoostedAdaSSPRegressor.fit_batch(ests[first * seeds:(first + n) * seeds], fit.X_train,
                                                     fit.y_train, shared, products=products)
                    first += n
            out[name], out[f"{name}_wall"] = time.process_time() - cpu, time.perf_counter() - start
        thetas[name] = [e.theta_ for e in ests]
    for suffix in ("", "32"):
        out[f"max_rel_diff{suffix}"] = max(float(np.max(np.abs(a - b)) / max(np.max(np.abs(a)), 1e-300))
                                           for mode in batches
                                           for a, b in zip(thetas["per_fit"], thetas[mode + suffix], strict=True))
    out["rounds"] = sorted(rounds)
    return out


def sspgd_study(name: str) -> dict:
    """One default study (50 trials x 3 seeds, eps 1) of `name` (adassp, ssp or dpgd) on SGEMM's fit part
    (synthetic of that shape without the mirror), run once; then its trial fits timed (CPU seconds, as the study)
    trial by trial (a batch per trial: its seeds), in the study's batches and all in one batch, each run's
    coefficients compared with its trial-by-trial fit (max relative difference: a DP-GD trial whose iteration
    amplifies rounding, e.g. step 1 on SGEMM's unscaled rows, moves about as much when its single fit's rows are
    permuted)."""

    import numpy as np
    from threadpoolctl import threadpool_limits

    from dpbench import algorithms
    from dpbench.algorithms.shared_data import SharedData
    from dpbench.tuning.study import trial_estimators

    run, fit, param_sets, study_wall, study_cpu = default_study(name)
    cfg, seeds, fit_batch = run.tuning, run.tuning["seeds"], algorithms.get_spec(name).estimator.fit_batch
    out, thetas = {"algorithm": name, "study_seconds": study_cpu, "study_wall": study_wall, "trials": len(param_sets),
                   "seeds": seeds, "shape": list(fit.X_train.shape), "batch_trials": cfg["batch_trials"]}, {}
    trials = len(param_sets)
    for mode, sizes in (("per_trial", [1] * trials), ("study_batches", study_asks(trials, cfg["batch_trials"])),
                        ("one_batch", [trials])):
        ests, shared, first = trial_estimators(run, fit, param_sets, seeds), SharedData(fit.X_train, fit.y_train), 0
        with threadpool_limits(1, "blas"):
            start, cpu = time.perf_counter(), time.process_time()
            for n in sizes:
                fit_batch(ests[first * seeds:(first + n) * seeds], fit.X_train, fit.y_train, shared)
                first += n
            out[mode], out[f"{mode}_wall"] = time.process_time() - cpu, time.perf_counter() - start
        thetas[mode] = [e.theta_ for e in ests]
    out["max_rel_diff"] = max(float(np.max(np.abs(a - b)) / max(np.max(np.abs(a)), 1e-300))
                              for mode in ("study_batches", "one_batch")
                              for a, b in zip(thetas["per_trial"], thetas[mode], strict=True))
    out["rounds"] = sorted(p.get("n_rounds", 1) for p in param_sets)
    return out


def naive_fig1(results_dir: str) -> dict:
    """The fig1_fixed fits as a plain loop: no batching, no shared work, no parallelism."""
    from sklearn.metrics import mean_squared_error, r2_score

    from dpbench import algorithms
    from dpbench.config import compose, to_container
    from dpbench.data import MissingDataError, load_dataset, resolve_data_dir
    from dpbench.runner.grid import expand

    cfg = to_container(compose(FIG1))
    exp = {k: cfg[k] for k in ("name", "algorithms", "datasets", "epsilons", "deltas", "seeds", "tuning_mode",
                               "split")}
    start, fits, loaded, data_dir = time.perf_counter(), 0, {}, resolve_data_dir()
    for run in expand(exp):
        key = (run.dataset["name"], run.data_seed)
        if key not in loaded:
            try:
                loaded[key] = load_dataset(run.dataset, split_seed=run.data_seed,
                                           data_dir=data_dir, split=run.split)
            except MissingDataError:
                loaded[key] = None
        data = loaded[key]
        if data is None:
            continue
        est = algorithms.make(run.algorithm, epsilon=run.epsilon, delta=run.delta, random_state=run.random_state,
                              **run.params).fit(data.X_train, data.y_train)
        for X, y in ((data.X_train, data.y_train), (data.X_test, data.y_test)):
            pred = est.predict(X)
            mean_squared_error(y, pred), r2_score(y, pred)
        fits += 1
    return {"seconds": time.perf_counter() - start, "peak_mb": _peak_mb(), "fits": fits}


PHASES = [("start-up", "main", "interpreter and imports until the command line runs"),
          ("composition", "validated", "config composed and validated"),
          ("fits", "swept", "the runner: its set-up, the workers' start-up, the tasks"),
          ("results", "results", "the grid's rows read"), ("figure", "figure", "drawn and saved"),
          ("summary", "summary", "the table printed"), ("exit", None, "the command's end to the process gone")]


def cli_fig1(results_dir: str, n_jobs: int, backend: str = "loky") -> dict:
    """`python -m dpbench sweep` in a fresh process, as a user runs it: wall time, the peak memory of the largest
    of its process and its reaped workers (wait4), and the split of its wall time into PHASES from the marks the
    command line writes with DPBENCH_TIMINGS (dpbench.cli.timing) and this process's launch and exit times."""
    args = ["sweep", *FIG1, f"results_dir={results_dir}", f"runner.n_jobs={n_jobs}", f"runner.backend={backend}",
            "runner.progress=false"]
    marks_file = os.path.join(results_dir + "-timings.json")
    env = {**os.environ, "DPBENCH_TIMINGS": marks_file}
    with tempfile.TemporaryFile() as out:
        start = time.time()
        proc = subprocess.Popen([sys.executable, "-m", "dpbench", *args], stdout=out, stderr=subprocess.STDOUT,
                                env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        end = time.time()
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode:
            out.seek(0)
            raise RuntimeError(f"the sweep failed ({proc.returncode}):\n{out.read().decode()[-3000:]}")
    with open(marks_file) as fh:
        marks = dict(json.load(fh)["marks"])
    split, last = {}, start
    for phase, mark, _ in PHASES:
        at = marks.get(mark, last) if mark else end
        split[phase], last = at - last, at
    parts = [os.path.getmtime(p) for p in _parts(results_dir)]
    first = min(parts) - start if parts else math.nan
    ready = marks["workers_ready"] - start if "workers_ready" in marks else math.nan
    return {"seconds": end - start, "peak_mb": usage.ru_maxrss / 1024, "split": split, "first_part": first,
            "workers_ready": ready}


def _parts(results_dir: str) -> list[str]:
    import glob

    return glob.glob(os.path.join(results_dir, "*", "parts", "*.parquet"))


def print_split(cli: dict) -> None:
    """The sweep's wall time by phase (PHASES), and when its first results and its workers were ready."""
    phases = ", ".join(f"{phase} {cli['split'][phase]:.2f}" for phase, _, _ in PHASES)
    ready = "" if math.isnan(cli["workers_ready"]) else f"; workers ready {cli['workers_ready']:.2f} s after launch"
    print(f"  split (s): {phases}; first part written {cli['first_part']:.2f} s after launch{ready}")


def unreachable_scheduler(connect_timeout: float = 2.0) -> float:
    """Seconds until run_sweep gives up on a scheduler address nobody listens on."""
    import socket

    from dpbench.runner.sweep import run_sweep

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    exp = {"name": "unreachable", "algorithms": [{"name": "ols"}], "epsilons": [1.0], "deltas": [1e-6], "seeds": [0],
           "datasets": [{"name": "synthetic", "n_train": 100, "n_test": 10, "d": 2}], "tuning_mode": "fixed",
           "split": "fixed"}
    runner = {"backend": "dask", "address": f"tcp://127.0.0.1:{port}", "connect_timeout": connect_timeout,
              "progress": False}
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        try:
            run_sweep(exp, runner, tmp)
        except ValueError:
            pass
        return time.perf_counter() - start


def _estimate_seconds(dry_run: str, part: str = "time estimate: ") -> float:
    """Seconds of a dry run's estimate (or of one of its parts), from its line; nan without one."""
    found = re.search(re.escape(part) + r"~?([\d.]+) (s|min|h)", dry_run)
    return float(found.group(1)) * {"s": 1, "min": 60, "h": 3600}[found.group(2)] if found else math.nan


def estimates(n_jobs: int, large: bool = False) -> None:
    """Section 7: each grid's dry-run estimate twice, then its sweep's measured wall time (fresh commands, an empty
    results directory), the ratio, whether the sweep calibrates, and the 1-minute load average before and after."""
    print(f"\n7. estimates: dry-run estimate vs measured (n_jobs={n_jobs}; the sweep right after its two dry runs)")
    print(f"{'grid':<70}{'estimates s':>13}{'spread':>8}{'measured s':>11}{'ratio':>7}{'calibrates':>11}"
          f"{'load before/after':>19}")
    for grid in ESTIMATE_GRIDS + ([LARGE_ESTIMATE_GRID] if large else []):
        with tempfile.TemporaryDirectory() as tmp:
            command = [sys.executable, "-m", "dpbench", "sweep", *grid, f"results_dir={tmp}", f"runner.n_jobs={n_jobs}"]
            load = os.getloadavg()[0]
            dry = [subprocess.run([*command, "--dry-run"], check=True, capture_output=True, text=True).stdout
                   for _ in range(2)]
            start = time.perf_counter()
            subprocess.run(command, check=True, capture_output=True, text=True)
            measured = time.perf_counter() - start
        first, second = (_estimate_seconds(d) for d in dry)
        calibrates = _estimate_seconds(dry[0], "calibration ") > 0  # a part the estimate prints when the sweep has it
        spread = max(first, second) / min(first, second) - 1
        print(f"{' '.join(grid):<70}{f'{first:.0f} / {second:.0f}':>13}{spread:>8.0%}{measured:>11.0f}"
              f"{first / measured:>7.2f}{'yes' if calibrates else 'no':>11}"
              f"{load:>10.1f} / {os.getloadavg()[0]:.1f}", flush=True)


def xgboost_trees(n_rounds: int = 20) -> dict:
    """Seconds per tree of DP-XGBoost's fit and of the dense histograms of before (two fits each), on adult."""
    import pathlib

    import numpy as np
    from threadpoolctl import threadpool_limits

    from dpbench.algorithms.dp_xgboost import DPXGBoostClassifier
    from dpbench.data import MissingDataError, load_dataset, resolve_data_dir

    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
    from tests.algorithms.test_dp_xgboost import DenseHistogramsReference

    try:
        data = load_dataset({"name": "adult"}, split_seed=42, data_dir=resolve_data_dir())
        X, y, types, name = data.X_train, data.y_train, list(data.feature_types), "adult"
    except MissingDataError:  # indicators, ~14 of 123 set per row, as adult's one-hot encoding
        rng = np.random.default_rng(0)
        X = (rng.random((32_561, 123)) < rng.uniform(0.01, 0.22, size=123)).astype(float)
        y = (X[:, :10].sum(axis=1) + rng.normal(size=X.shape[0]) > 1.5).astype(int)
        types, name = ["nominal"] * X.shape[1], "synthetic"
    params = {"epsilon": 10.0, "n_rounds": n_rounds, "feature_types": types, "random_state": 0}
    out = {"data": name, "shape": list(X.shape), "n_rounds": n_rounds, "vectorised": [], "dense": []}
    with threadpool_limits(1, "blas"):
        for cls in (DPXGBoostClassifier, DenseHistogramsReference):  # warm-up (and the per-round budget's solve)
            cls(**{**params, "n_rounds": 1}).fit(X, y)
        DPXGBoostClassifier(**params).fit(X[:100], y[:100])
        for _ in range(2):
            for key, cls in (("vectorised", DPXGBoostClassifier), ("dense", DenseHistogramsReference)):
                start = time.perf_counter()
                est = cls(**params).fit(X, y)
                out[key].append((time.perf_counter() - start) / n_rounds)
                out[f"{key}_leaves"] = np.concatenate(est.trees_.leaves)
    out["equal"] = bool(np.array_equal(out.pop("vectorised_leaves"), out.pop("dense_leaves")))
    return out


def print_xgboost_trees() -> None:
    r = _in_fresh_process("xgboost_trees")
    print(f"\n6. partners: DP-XGBoost seconds per tree on {r['data']} {r['shape'][0]}x{r['shape'][1]}, eps 10, "
          f"{r['n_rounds']} rounds, 1 BLAS thread: histograms off the zero bin vs the dense histograms of before")
    for i, (v, d) in enumerate(zip(r["vectorised"], r["dense"], strict=True)):
        print(f"  fit {i + 1}: {v:.3f} s vs {d:.3f} s per tree, {d / v:.1f}x")
    print(f"  same leaf values: {r['equal']}", flush=True)


def _in_fresh_process(fn: str, *args) -> dict:
    code = f"import json, sys; sys.path.insert(0, {os.path.dirname(__file__)!r}); import bench; " \
           f"print(json.dumps(bench.{fn}(*{args!r})))"
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def print_study(st: dict) -> None:
    """Section 1b's lines from `tuned_study`'s measurements."""
    rounds, runs = st["rounds"], st["trials"] * st["seeds"]
    print(f"\n1b. tuned study: one default study ({st['trials']} trials x {st['seeds']} seeds) of BoostedAdaSSP "
          f"on SGEMM's fit part {st['shape'][0]}x{st['shape'][1]}, eps 1, 1 BLAS thread; CPU seconds; elementwise "
          f"kernels: {st['kernels']} (DPBENCH_KERNELS=numpy or numba to choose; 1c too)")
    print(f"the study (TPE, asks of {st['asks']} trials, fits and validation scores): {st['study_cpu']:.1f} s "
          f"({st['study_seconds']:.1f} s wall); trials' n_rounds: median {rounds[len(rounds) // 2]}, "
          f"max {rounds[-1]}, sum {sum(rounds)}")
    print(f"its {runs} fits: float64 s, speed-up over trial by trial and over each fit alone, us per run-round; "
          "float32 s and speed-up over float64 trial by trial; the speed-up over trial by trial that the "
          "rounds alone allow (a batch runs as long as its longest trial)")
    for mode, label in (("per_fit", "each fit alone (estimator.fit)"), ("per_trial", "trial by trial (a batch "
                        "of its seeds)"), ("study_batches", "the study's batches"),
                        ("one_batch", "all in one batch")):
        f32 = "" if mode == "per_fit" else (f"{st[mode + '32']:>9.1f} s{st['per_trial'] / st[mode + '32']:>6.1f}x"
                                            f"{st[mode + '_bound']:>9.1f}x")
        print(f"  {label:<38}{st[mode]:>7.1f} s{st['per_trial'] / st[mode]:>6.1f}x{st['per_fit'] / st[mode]:>6.1f}x"
              f"{1e6 * st[mode] / (st['seeds'] * sum(rounds)):>7.0f} us{f32}")
    print(f"  coefficients: max relative difference from each fit alone {st['max_rel_diff']:.1e} (float64), "
          f"{st['max_rel_diff32']:.1e} (float32)", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--loop-runs", type=int, default=3, help="per-run loop: fits timed, scaled to --runs")
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--skip-boosting", action="store_true")
    parser.add_argument("--skip-study", action="store_true")
    parser.add_argument("--only-study", action="store_true", help="only line 1b (the tuned study)")
    parser.add_argument("--only-estimates", action="store_true", help="only section 7 (dry-run estimates)")
    parser.add_argument("--estimates-large", action="store_true", help="section 7: and a grid that calibrates")
    parser.add_argument("--only-xgb", action="store_true", help="only section 6 (DP-XGBoost per tree)")
    parser.add_argument("--only-sspgd", action="store_true", help="only line 1c (AdaSSP and DP-GD studies)")
    parser.add_argument("--backends", default="loky", help="line 2: the sweep on each of these runner.backends")
    parser.add_argument("--skip-naive", action="store_true", help="line 2: the sweep(s) only, not the naive loop")
    parser.add_argument("--only-boosting", action="store_true", help="only section 1 (batched vs per-run)")
    parser.add_argument("--only-e2e", action="store_true", help="only section 2 (fig1_fixed end to end)")
    args = parser.parse_args()
    if args.only_e2e:
        args.skip_boosting = args.skip_study = True
    if args.only_estimates:
        estimates(args.n_jobs, args.estimates_large)
        return
    if args.only_xgb:
        print_xgboost_trees()
        return
    if args.only_sspgd:
        args.skip_boosting = args.skip_study = args.only_study = True

    if not (args.skip_boosting or args.only_study):
        print(f"1. BoostedAdaSSP, T = 100, R = {args.runs} runs, 1 BLAS thread; CPU seconds (the machine is shared; "
              "wall seconds in brackets)")
        print(f"{'data':<26}{'per-run s':>16}{'batched s':>16}{'speed-up':>9}{'float32 s':>16}{'speed-up':>9}"
              f"{'GFLOP/s 64/32':>15}{'products 64/32':>16}{'peak MB b/f32/loop':>20}")
        for name, n, d in SHAPES:
            p = _in_fresh_process("boosting", name, n, d, args.runs, "loop", args.loop_runs)
            b = _in_fresh_process("boosting", name, n, d, args.runs, "batched", args.loop_runs)
            f = _in_fresh_process("boosting", name, n, d, args.runs, "batched32", args.loop_runs)
            flop = 4 * b["shape"][0] * b["shape"][1] * args.runs * 100  # X Theta and X^T G, T = 100 rounds
            label = f"{name} {b['shape'][0]}x{b['shape'][1]}" if name.startswith("SGEMM") else name
            cpu = [f"{r['cpu']:.1f} ({r['seconds']:.1f})" for r in (p, b, f)]
            gflops = f"{flop / b['cpu'] / 1e9:.0f} / {flop / f['cpu'] / 1e9:.0f}"
            products = f"{b['products_cpu']:.1f} / {f['products_cpu']:.1f} s"
            peak = f"{b['peak_mb']:.0f} / {f['peak_mb']:.0f} / {p['peak_mb']:.0f}"
            print(f"{label:<26}{cpu[0]:>16}{cpu[1]:>16}{p['cpu'] / b['cpu']:>8.1f}x{cpu[2]:>16}"
                  f"{p['cpu'] / f['cpu']:>8.1f}x{gflops:>15}{products:>16}{peak:>20}", flush=True)
        print("GFLOP/s: 4 n d R T / CPU seconds of the batched fit; products: CPU seconds of its T rounds of block "
              "products alone (what BLAS allows on this shape)")

    if args.only_boosting:
        return
    if not args.skip_study:
        print_study(_in_fresh_process("tuned_study"))
    if args.only_sspgd or not args.skip_study:
        print("\n1c. tuned studies of AdaSSP and DP-GD (50 trials x 3 seeds, eps 1) on SGEMM's fit part, 1 BLAS thread:"
              " their trial fits trial by trial (a batch of its seeds), in the study's batches, in one batch")
        for name in ("adassp", "dpgd"):
            st = _in_fresh_process("sspgd_study", name)
            print(f"  {name:<7} study {st['study_seconds']:.1f} s; fits: trial by trial {st['per_trial']:.1f} s, "
                  f"study's batches ({st['batch_trials']} trials) {st['study_batches']:.1f} s "
                  f"({st['per_trial'] / st['study_batches']:.1f}x), one batch {st['one_batch']:.1f} s "
                  f"({st['per_trial'] / st['one_batch']:.1f}x); max relative difference {st['max_rel_diff']:.1e}"
                  + (f"; trials' rounds: median {st['rounds'][len(st['rounds']) // 2]}, sum {sum(st['rounds'])}"
                     if name == "dpgd" else ""), flush=True)
    if args.only_study:
        return

    print("\n2. fig1_fixed (eps 0.1, 1, 10; 10 seeds), the mirror's tasks")
    with tempfile.TemporaryDirectory() as tmp:
        naive = None if args.skip_naive else _in_fresh_process("naive_fig1", tmp)
        if naive:
            print(f"naive per-run loop, 1 process: {naive['seconds']:.1f} s, {naive['fits']} fits, "
                  f"peak {naive['peak_mb']:.0f} MB", flush=True)
        for i, backend in enumerate(args.backends.split(",")):  # a backend named twice: timed twice
            cli = cli_fig1(os.path.join(tmp, f"cli{i}"), args.n_jobs, backend)
            print(f"python -m dpbench sweep (n_jobs={args.n_jobs}, {backend}, parquet + figure + report): "
                  f"{cli['seconds']:.1f} s, peak {cli['peak_mb']:.0f} MB (the largest of its process and its "
                  "workers)" + (f"; ratio sweep / naive: {cli['seconds'] / naive['seconds']:.2f}x" if naive else ""),
                  flush=True)
            print_split(cli)
    if args.only_e2e:
        return

    print(f"\n4. unreachable Dask scheduler, connect_timeout=2: reported after {unreachable_scheduler(2.0):.1f} s")
    print_xgboost_trees()
    estimates(args.n_jobs, args.estimates_large)


if __name__ == "__main__":
    main()
