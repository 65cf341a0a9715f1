"""Paper 004 (DP-ROBGD) Sec. 5 and App. K.1: excess error vs n, kappa and sigma; label corruption (Sec. 5.2).

Data (Sec. 5.1): the data registry's generator `paper004_synthetic` (dpbench/data/sets/paper004.py): d = 10,
w* uniform on the unit sphere, x ~ N(0, Sigma) with Sigma = diag(kappa, 1, ..., 1) projected to the unit sphere,
z ~ U[-sigma, sigma], y = <x, w*> + z; a fraction `alpha` of the labels set to 1000 in the corruption figure;
fitted on all n rows (no test part).  Privacy (eps, delta) = (1, min(1e-6, n^-2)); App. K.1's eps = 0.1 is the
analysis `paper004_fig1_eps0.1`.  Metric: the paper's ||w - w*||_S^2 with S = E[x x^T] of the covariates the
algorithms see (the projected ones; Monte Carlo with 2e6 draws, fixed seed), not the Sigma before projection.

Algorithms and their settings ("the hyperparameters recommended in their papers", Sec. 5), all public
functions of the design, never of the drawn data:
- DP-ROBGD (`robgd`, Sec. 5 changes): Gamma = the true Tr(S) = 1 (Sec. 5), so no S1; 20% of the rows for
  gamma_t (Sec. 5); norm clip Theta = 1, the norm of every covariate (Alg. 1's Theta only has to leave the
  clean x_i unclipped); step eta = 1/(1.1 lambda_max(S)) (Thm 3); C2 = the smallest value Assumption 2
  allows (`robust_gd.C2_SMALLEST`: theta_t = 6 sqrt(gamma_t)); T = ceil(0.55 kappa_S log n) rounds, the
  number after which Thm 3's contraction e^{-2T/(1.1 kappa_S)} has shrunk the start error below 1/n
  (kappa_S = lambda_max/lambda_min of S; n the design's size, a public parameter of the experiment).
  DP-ROBGD* = the same with `best_iterate`.  "DP-ROBGD (dpbench defaults)" in the n figure: the same with
  dpbench's defaults of issue 17 (T = 30, eta = 1/(1.1 Tr), Theta from Lemma J.3, C2 = 1), the before of issue
  17 (T pinned: the default is 10 since issue 36).
- DP-AMBSSGD (`ambssgd`): Varshney et al.'s step 1/(2 lambda_max(S)) and T = ceil(3 kappa_S log n) (Sec. 5's
  SGD rule); clip threshold: the theory's, from the known w*, S and sigma at the released iterate w_t
  (post-processing; `TheoryThreshold`), divided by AMBSSGD_REDUCTION as Sec. 5 "reduce[s] the clipping
  threshold recommended by the theory by a constant factor"; no trimming (paper 004's robustness device is not
  the baseline's).  Under corruption its sigma is the spread of the labels it sees (`label_spread`): the clean
  sigma would hand it the clean distribution, which a threshold read from the data cannot know.
- DP-SSP (`ssp`): x_bound = 1 (unit sphere), y_bound = 1 + sigma (|<x, w*>| <= 1, |z| <= sigma: the clean
  label range, public).  The paper does not state DP-SSP's label bound; its corruption result (DP-SSP not
  robust to labels of 1000) needs a bound at least the corrupted labels, i.e. max |y| of the data:
  "DP-SSP (y_bound = max|y|, non-private)" in the corruption figure, labelled non-private.
- OLS (non-private).  The paper's non-private tail-averaged SGD is not run.

`smoke=True` runs n = 2e4-5e4 with 2 trials in seconds, into `<name>_smoke/` (never judged).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from dpbench import algorithms
from dpbench.algorithms.robust_gd import C2_SMALLEST, K_GAUSSIAN
from dpbench.analyses import analysis, parallel_map
from dpbench.claims import Verdict, claim, failed, majority, paired_cells
from dpbench.data import Dataset, load_dataset
from dpbench.data.sets.paper004 import CORRUPT_LABEL
from dpbench.plots.paper004 import excess_error

DEFAULTS = "DP-ROBGD (dpbench defaults)"
LABELS = ["DP-ROBGD", DEFAULTS, "DP-ROBGD*", "DP-AMBSSGD", "DP-SSP", "OLS (non-private)",
          "DP-SSP (y_bound = max|y|, non-private)"]  # in colour order: one colour per algorithm in every figure
# The grids run (5 trials each).  The paper's kappa and sigma sweeps use n = 1e7; this machine (2 shared cores)
# runs them at n = 1e6 (a DP-ROBGD fit at 1e7 takes ~30 s, x 5 algorithms x 5 trials per cell).
FULL = {"n": [10_000, 30_000, 100_000, 300_000, 1_000_000], "n_fixed": 1_000_000, "kappa": [1.0, 3.0, 10.0],
        "sigma": [0.01, 0.1, 1.0, 3.0], "alpha": [0.0, 0.01, 0.03, 0.1], "trials": 5}
SMOKE = {"n": [20_000, 50_000], "n_fixed": 50_000, "kappa": [1.0, 3.0], "sigma": [0.1, 1.0], "alpha": [0.0, 0.05],
         "trials": 2}


# Sec. 5's "constant factor" (not stated): the best of 1, 3, 10, ..., 1000 on the cell n = 1e5, kappa = sigma = 1,
# eps = 1 (mean excess error over seeds 0-2: 4.9e3, 0.28, 0.014, 1.6e-3, 5.4e-4, 3.0e-4, 5.1e-3; at factor 1 the
# threshold follows the noisy iterate up and diverges); tuned on the paper's data, the partner's best case.
AMBSSGD_REDUCTION = 300.0
FAILURE_PROB = 0.1


@dataclass(frozen=True)
class TheoryThreshold:
    """DP-AMBSSGD's clip threshold from the theory: no clean gradient ||x_i|| |w_t^T x_i - y_i| clipped.

    For (K, 1/2)-sub-Weibull covariates and residuals, with probability 1 - zeta every one of n rows has
    ||x_i|| <= K sqrt(2 Tr S log(n / zeta)) (paper 004 Lemma J.3's Theta) and |w_t^T x_i - y_i| <=
    K sqrt(2 log(n / zeta)) (||w_t - w*||_S + sigma), so theta_t = 2 K^2 log(n / zeta) sqrt(Tr S)
    (||w_t - w*||_S + sigma), divided by `reduction`.  Varshney et al. estimate ||w_t - w*||_S + sigma with
    DP-STAT (not in dpbench's sources); here w*, S and sigma are the design's, public, and w_t is released, so
    the threshold is post-processing.
    """

    w_star: np.ndarray
    second_moment: np.ndarray
    sigma: float
    n: int
    reduction: float = AMBSSGD_REDUCTION

    def __call__(self, w: np.ndarray, t: int) -> float:
        e = w - self.w_star
        distance = math.sqrt(max(float(e @ self.second_moment @ e), 0.0)) + self.sigma
        scale = 2 * K_GAUSSIAN**2 * math.log(self.n / FAILURE_PROB) * math.sqrt(np.trace(self.second_moment))
        return scale * distance / self.reduction


def trial_data(n: int, kappa: float, sigma: float, alpha: float, seed: int) -> Dataset:
    """One trial's data: n rows of the Sec. 5.1 design, all for training; `extra` holds w* and S = E[x x^T]."""
    return load_dataset({"name": "paper004_synthetic", "n_train": n, "n_test": 0, "kappa": kappa, "sigma": sigma,
                         "fraction": alpha}, split_seed=seed)


def label_spread(sigma: float, alpha: float) -> float:
    """The label noise scale of the data an algorithm sees: sigma, or with a fraction alpha of the labels at
    CORRUPT_LABEL the root mean square mix sqrt((1 - alpha) sigma^2 + alpha CORRUPT_LABEL^2) -- what a threshold
    estimated from the data (Varshney et al.'s DP-STAT) tracks; it cannot tell corrupted labels apart (paper 004
    Remark 4.1 (iii): only Alg. 2 is robust to them)."""
    return math.sqrt((1 - alpha) * sigma**2 + alpha * CORRUPT_LABEL**2)


def settings(n: int, w_star: np.ndarray, S: np.ndarray, sigma: float, epsilon: float, corruption: bool,
             extra: bool, alpha: float = 0.0):
    """[(label, registry name, params, private)] for one cell; params are public functions of the design (w*, S:
    the second moment of its covariates, sigma, the corrupted fraction alpha)."""
    ev = np.linalg.eigvalsh(S)
    lam_max, kappa_s = float(ev[-1]), float(ev[-1] / ev[0])
    delta = min(1e-6, n ** -2.0)
    priv = {"epsilon": epsilon, "delta": delta}
    robgd = {**priv, "trace": 1.0, "norm_bound": 1.0, "lambda_max": lam_max, "learning_rate": 1 / 1.1,
             "c2": C2_SMALLEST, "n_rounds": math.ceil(0.55 * kappa_s * math.log(n))}
    out = [("DP-ROBGD", "robgd", robgd, True),
           ("DP-ROBGD*", "robgd", {**robgd, "best_iterate": True}, True),
           ("DP-AMBSSGD", "ambssgd", {**priv, "learning_rate": 1 / (2 * lam_max),
                                      "n_rounds": math.ceil(3 * kappa_s * math.log(n)),
                                      "grad_bound": TheoryThreshold(w_star, S, label_spread(sigma, alpha), n)},
            True),
           ("DP-SSP", "ssp", {**priv, "x_bound": 1.0, "y_bound": 1.0 + sigma}, True),
           ("OLS (non-private)", "ols", {"fit_intercept": False}, False)]  # the model has no intercept
    if corruption:
        out.insert(4, ("DP-SSP (y_bound = max|y|, non-private)", "ssp", {**priv, "x_bound": 1.0, "y_bound": None},
                       False))
    if extra:
        out.insert(1, (DEFAULTS, "robgd", {**priv, "trace": 1.0, "n_rounds": 30}, True))
    return out


def run_cell(n, kappa, sigma, alpha, epsilon, trials, corruption=False, extra=False) -> list[dict]:
    rows = []
    for seed in range(trials):
        data = trial_data(n, kappa, sigma, alpha, seed)
        X, y, w, S = data.X_train, data.y_train, data.extra["coef"], data.extra["second_moment"]
        for label, name, params, private in settings(n, w, S, sigma, epsilon, corruption, extra, alpha):
            params = dict(params)
            if name == "ssp" and params["y_bound"] is None:
                params["y_bound"] = float(np.abs(y).max())  # data-dependent: non-private
            start = time.perf_counter()
            est = algorithms.make(name, random_state=seed, **params).fit(X, y)
            seconds = time.perf_counter() - start
            e = est.coef_ - w
            rows.append({"n": n, "kappa": kappa, "sigma": sigma, "alpha": alpha, "epsilon": epsilon,
                         "delta": params.get("delta", np.nan), "seed": seed, "algorithm": label, "registry": name,
                         "private": private, "excess_error": float(e @ S @ e),
                         "status": getattr(est, "fit_status_", "ok"), "n_rounds": params.get("n_rounds", np.nan),
                         "fit_seconds": seconds})
    return rows


def run_all(grid: dict, epsilon: float, corruption: bool, smoke: bool = False) -> pd.DataFrame:
    """Every cell once (a cell shared by two sweeps, e.g. n_fixed, kappa = sigma = 1, is fitted once), the cells on
    two processes, the largest n first (`parallel_map`)."""
    cells: dict[tuple, list[str]] = {}
    if not corruption:
        for n in grid["n"]:
            cells.setdefault((n, 1.0, 1.0, 0.0), []).append("n")
        for k in grid["kappa"]:
            cells.setdefault((grid["n_fixed"], k, 1.0, 0.0), []).append("kappa")
        for s in grid["sigma"]:
            cells.setdefault((grid["n_fixed"], 1.0, s, 0.0), []).append("sigma")
    else:
        for a in grid["alpha"]:
            cells.setdefault((grid["n_fixed"], 1.0, 1.0, a), []).append("alpha")
    jobs = [(n, k, s, a, epsilon, grid["trials"], corruption, "n" in sweeps) for (n, k, s, a), sweeps in cells.items()]
    done = parallel_map(run_cell, jobs, smoke, cost=lambda job: job[0] * (2 if job[-1] else 1))  # extra: DP-ROBGD*
    frames = []
    for ((n, k, s, a), sweeps), rows in zip(cells.items(), done, strict=True):
        for sweep in sweeps:
            frames.append(pd.DataFrame(rows).assign(sweep=sweep))
        print(f"  cell n={n} kappa={k} sigma={s} alpha={a}: {len(rows)} fits", flush=True)
    return pd.concat(frames, ignore_index=True)


def _summary(df: pd.DataFrame, x: str) -> pd.DataFrame:
    return df.groupby(["algorithm", x])["excess_error"].agg(["mean", "std", "count"]).reset_index()


def _run_fig1(out: Path, smoke: bool, epsilon: float, name: str) -> list[Path]:
    grid = SMOKE if smoke else FULL
    df = run_all(grid, epsilon, corruption=False, smoke=smoke)
    table = out / f"{name}.parquet"
    df.to_parquet(table)
    fixed = grid["n_fixed"]
    title = (f"paper 004 Fig. {'1' if epsilon == 1 else '2'}: d = 10, eps = {epsilon:g}, "
             f"delta = min(1e-6, n^-2); kappa = sigma = 1 in the n panel, n = {fixed:.0e} in the kappa "
             f"(sigma = 1) and sigma (kappa = 1) panels (paper: 1e7); {grid['trials']} trials")
    return [table, excess_error(df, out / f"{name}.png", ["n", "kappa", "sigma"], title, LABELS, DEFAULTS)]


@analysis("paper004_fig1", "paper 004 Fig. 1: excess error vs n, kappa, sigma at eps = 1 (DP-ROBGD, DP-ROBGD*, "
                           "DP-AMBSSGD, DP-SSP, OLS)")
def fig1(out: Path, smoke: bool = False) -> list[Path]:
    return _run_fig1(out, smoke, 1.0, "paper004_fig1")


@analysis("paper004_fig1_eps0.1", "paper 004 App. K.1 Fig. 2: paper004_fig1 at eps = 0.1")
def fig1_eps01(out: Path, smoke: bool = False) -> list[Path]:
    return _run_fig1(out, smoke, 0.1, "paper004_fig1_eps0.1")


@analysis("paper004_corruption", "paper 004 Sec. 5.2: excess error vs the fraction of labels set to 1000")
def corruption(out: Path, smoke: bool = False) -> list[Path]:
    grid = SMOKE if smoke else FULL
    df = run_all(grid, 1.0, corruption=True, smoke=smoke)
    table = out / "paper004_corruption.parquet"
    df.to_parquet(table)
    title = f"paper 004 Sec. 5.2: n = {grid['n_fixed']:.0e}, kappa = sigma = 1, eps = 1; {grid['trials']} trials"
    return [table, excess_error(df, out / "paper004_corruption.png", ["alpha"], title, LABELS, DEFAULTS)]


# ---- claims ---------------------------------------------------------------------------------------------------

CELL = ["n", "kappa", "sigma", "alpha"]
ALMOST_ALL = 0.8  # "almost all the settings": at least this share of the cells
SLIGHTLY = (1.0, 2.0)  # "slightly better": median DP-ROBGD / DP-SSP error ratio in this interval
ROBUST = 10.0  # "handles the corruptions": mean error at the largest alpha at most 10 x the clean one


def _runs(df: pd.DataFrame) -> pd.DataFrame:
    """Each (cell, seed, algorithm) once: a cell shared by two sweeps (n_fixed, kappa = sigma = 1) counts once."""
    return df.drop_duplicates(subset=[*CELL, "seed", "algorithm"])


def _robgd_vs_ambssgd(load, name) -> Verdict:
    c = paired_cells(_runs(load(name)), CELL, "algorithm", "DP-ROBGD", "DP-AMBSSGD", "excess_error")
    t = c.table
    holds, text = majority(t["ours"] < t["partner"], t["ours"] > t["partner"])
    share = float((t["ours"] < t["partner"]).mean()) if len(t) else float("nan")
    if holds is not None and share < ALMOST_ALL:
        holds = False
    lost = ", ".join(f"n={n:g} kappa={k:g} sigma={s:g}" for (n, k, s, _), r in t.iterrows()
                     if r["ours"] >= r["partner"])
    return Verdict(holds, f"DP-ROBGD below DP-AMBSSGD in {text} cells ({share:.0%}); not in: {lost or 'none'}"
                          f"{c.note()}")


def _ssp(load, name, slightly: bool) -> Verdict:
    """DP-SSP worse than DP-ROBGD in the trials at the smallest sigma, better in the other cells."""
    df = _runs(load(name))
    low = df.loc[df["sweep"] == "sigma", "sigma"].min()
    at_low = paired_cells(df[(df["sweep"] == "sigma") & (df["sigma"] == low)], ["seed"], "algorithm", "DP-SSP",
                          "DP-ROBGD", "excess_error")
    a = at_low.table
    poor, poor_text = majority(a["ours"] > a["partner"], a["ours"] < a["partner"])
    rest = paired_cells(df[df["sigma"] > low], CELL, "algorithm", "DP-ROBGD", "DP-SSP", "excess_error")
    t = rest.table
    ratio = t["ours"] / t["partner"]
    better, better_text = majority(t["partner"] < t["ours"], t["partner"] > t["ours"], ratio=ratio,
                                   max_median_ratio=SLIGHTLY[1] if slightly else None)
    verdicts = [poor, better]
    holds = False if False in verdicts else (True if verdicts == [True, True] else None)
    return Verdict(holds, f"sigma = {low:g}: DP-SSP above DP-ROBGD in {poor_text} trials (mean "
                          f"{a['ours'].mean():.2g} vs {a['partner'].mean():.2g}){at_low.note()}; other cells: DP-SSP "
                          f"below DP-ROBGD in {better_text}; DP-ROBGD / DP-SSP from {ratio.min():.2g} to "
                          f"{ratio.max():.2g}{rest.note()}")


SIGN_CELLS = ("one-sided sign test over the cells of the n, kappa and sigma sweeps (mean over trials; every released "
              "run counted, a fallback with its error), p < 0.05 with at least 5 cells")


@claim("paper004_fig1", "004", "Sec. 5.1, Fig. 1",
       "It can be seen that DP-ROBGD outperforms DP-AMBSSGD in almost all the settings.",
       f"DP-ROBGD's mean excess error below DP-AMBSSGD's: {SIGN_CELLS}; and 'almost all': in at least "
       f"{ALMOST_ALL:.0%} of the cells (not reproduced below it)")
def claim_robgd_beats_ambssgd(load):
    return _robgd_vs_ambssgd(load, "paper004_fig1")


POOR_LOW = ("at the smallest sigma, DP-SSP's excess error above DP-ROBGD's in significantly more than half of the "
            "trials (paired by seed; one-sided sign test, p < 0.05, needs 5 trials)")


@claim("paper004_fig1", "004", "Sec. 5.1, Fig. 1",
       "DP-SSP has poor performance when the noise sigma is low, but performs slightly better than DP-ROBGD in "
       "other settings.",
       f"{POOR_LOW}; and in the cells with a larger sigma DP-SSP's mean below DP-ROBGD's: {SIGN_CELLS}; 'slightly': "
       f"the median DP-ROBGD / DP-SSP ratio in [{SLIGHTLY[0]:g}, {SLIGHTLY[1]:g}]; not reproduced when either part "
       "holds on at most half or the median ratio is above 2")
def claim_ssp_slightly_better(load):
    return _ssp(load, "paper004_fig1", slightly=True)


@claim("paper004_fig1_eps0.1", "004", "App. K.1, Fig. 2",
       "In particular, DP-SSP has poor performance when sigma is small. In other settings, DP-SSP has better "
       "performance than DP-ROBGD.",
       f"{POOR_LOW}; and in the cells with a larger sigma DP-SSP's mean below DP-ROBGD's: {SIGN_CELLS}")
def claim_eps01(load):
    return _ssp(load, "paper004_fig1_eps0.1", slightly=False)


@claim("paper004_corruption", "004", "Sec. 5.2",
       "It can be seen that none of the baselines are robust to adversarial corruptions. [...] In contrast, "
       "DP-ROBGD is able to handle the corruptions well.",
       f"DP-ROBGD's mean excess error at the largest alpha at most {ROBUST:g} x its error at alpha = 0, and every "
       f"baseline's (DP-AMBSSGD, DP-SSP, OLS) more than {ROBUST:g} x; failed DP-ROBGD runs count in its mean and "
       "are reported")
def claim_only_robgd_robust(load):
    df = load("paper004_corruption")
    m = df.groupby(["alpha", "algorithm"])["excess_error"].mean().unstack("algorithm")
    clean, worst = m.loc[m.index.min()], m.loc[m.index.max()]
    robgd_ok = bool(worst["DP-ROBGD"] <= ROBUST * clean["DP-ROBGD"])
    baselines = [c for c in m.columns if not c.startswith("DP-ROBGD")]
    robust = [c for c in baselines if worst[c] <= ROBUST * clean[c]]
    failed_runs = int(failed(df).sum()) if "status" in df else 0
    text = (f"alpha = {m.index.max():g} vs 0: " + "; ".join(f"{c} {clean[c]:.2g} -> {worst[c]:.2g}" for c in m.columns)
            + f". Robust (error grows <= {ROBUST:g}x): {', '.join(robust + ['DP-ROBGD'] * robgd_ok) or 'none'}"
            + f"; fallback outputs (counted): {failed_runs}")
    return Verdict(robgd_ok and not robust, text)
