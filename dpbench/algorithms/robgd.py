"""DP-ROBGD (paper 004 Alg. 1): full-batch gradient descent with private, robust adaptive clipping.

The pieces DP-AMBSSGD reuses live here too: the group statistics and the
private geometric-histogram estimates of Alg. 2 and 3, and the (eps, delta)
Gaussian noise calibration of Lemma 2.2.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from dpbench.algorithms.base import DPLinearRegressor, check_choice, check_positive, check_positive_int, clip_rows
from dpbench.algorithms.base import clip_values as clip_residuals
from dpbench.algorithms.registry import ITERATIONS, AlgorithmSpec, register
from dpbench.privacy import PrivacyLedger, mu_from_epsilon_delta
from dpbench.privacy.composition import ADVANCED_PARALLEL, per_step_budget, tag
from dpbench.privacy.histogram import private_mode_left_edge

NOISE_CALIBRATIONS = ("paper", "analytic")
K_GAUSSIAN = math.sqrt(8 / 3)  # sub-Gaussian constant of N(0, 1): E exp(Z^2 / K^2) = 2


def gaussian_noise_std(sensitivity: float, epsilon: float, delta: float, calibration: str) -> tuple[float, str]:
    """(noise std, mechanism name) of an (eps, delta)-DP Gaussian mechanism with L2 `sensitivity`.

    'paper': the classical sqrt(2 log(1.25/delta)) sensitivity / eps (paper 004
    Lemma 2.2, eq. (1), Alg. 1 line 8), which is only a theorem for eps <= 1;
    above that we switch to 'analytic'.  'analytic': sensitivity / mu with mu
    the GDP parameter equivalent to (eps, delta) -- exact (Balle & Wang 2018),
    never larger than the classical std.
    """
    check_choice("noise_calibration", calibration, NOISE_CALIBRATIONS)
    if calibration == "paper" and epsilon <= 1:
        return sensitivity * math.sqrt(2 * math.log(1.25 / delta)) / epsilon, "gaussian_classical"
    return sensitivity / mu_from_epsilon_delta(epsilon, delta), "gaussian_analytic"


def n_groups(c1: float, epsilon: float, delta: float, zeta: float, n: int) -> int:
    """k = ceil(2 + C1 log(1/(delta zeta)) / eps) groups (Alg. 2-3 line 2 plus 2), kept within [1, n].

    With C1 = 4 this is exactly the k for which the largest bin (>= k/2 of the
    group statistics when they straddle two bins, as Thm 4 shows) clears the
    histogram threshold 1 + 2 log(2/delta)/eps after Laplace(2/eps) noise with
    probability >= 1 - zeta: k/2 - (2/eps) log(1/(2 zeta)) >= 1 + (2/eps) log(2/delta).
    The paper's floor(C1 log(1/(delta zeta))/eps) drops the additive 2, which
    matters at large eps (few groups).
    """
    k = math.ceil(2 + c1 * math.log(1 / (delta * zeta)) / epsilon)
    return int(min(max(k, 1), n))


def group_statistics(values: np.ndarray, k: int, keep_quantile: float | None = None) -> np.ndarray:
    """Per-group means of `values` (already in random order) split into k equal groups (remainder unused).

    keep_quantile = q gives the trimmed statistic of Alg. 2 line 3,
    phi_j = (1/|G_j|) sum_i b_i 1{b_i <= psi_j} with psi_j the q-quantile of G_j;
    None the plain mean of Alg. 3 line 3.
    """
    m = values.size // k
    groups = values[: k * m].reshape(k, m)
    if keep_quantile is None:
        return groups.mean(axis=1)
    psi = np.quantile(groups, keep_quantile, axis=1, method="inverted_cdf", keepdims=True)
    return np.where(groups <= psi, groups, 0.0).sum(axis=1) / m


def private_scale_estimate(
    values: np.ndarray, k: int, keep_quantile: float | None, base: float, epsilon: float, delta: float,
    rng: np.random.Generator, ledger: PrivacyLedger, name: str,
) -> float | None:
    """Alg. 2 / Alg. 3: group statistics, then the left end of the modal bin of the private histogram (or None)."""
    stats = group_statistics(values, k, keep_quantile)
    return private_mode_left_edge(stats, base, epsilon, delta, rng, ledger, name)


def split_sizes(n: int, fractions: tuple[float, ...]) -> list[int]:
    """Sizes of consecutive parts taking `fractions` of n (rounded down, >= 1 each); the rest is the last part."""
    sizes = [max(1, int(f * n)) for f in fractions]
    if sum(sizes) >= n:
        raise ValueError(f"{n} samples are too few to split into {len(sizes) + 1} non-empty parts")
    return sizes + [n - sum(sizes)]


def check_fraction(name: str, value, low: float = 0.0, high: float = 1.0) -> float:
    if not isinstance(value, numbers.Real) or isinstance(value, bool) or not low < value < high:
        raise ValueError(f"{name} must lie strictly between {low} and {high}, got {value!r}")
    return float(value)


class DPRobGDRegressor(DPLinearRegressor):
    """DP-ROBGD, paper 004 Alg. 1 (and DP-ROBGD* with `best_iterate`).

    The rows are randomly split (a data-independent partition; n is public)
    into S1 (`norm_fraction`), S2 (`gamma_fraction`, 20% in the paper's Sec. 5)
    and S3 (the rest):

    1. Gamma = Private Norm Estimator (Alg. 3) on S1: ||x_i||^2 averaged over
       k groups, stability histogram over bins [2^(j/4), 2^((j+1)/4)) and {0},
       left end of the modal bin.  Norm clip Theta = K sqrt(2 Gamma) log^a(n3/zeta0).
       `trace` = a public value of Tr(Sigma) replaces this step (the paper's
       Sec. 5 used the true Tr(Sigma); only private if the value is
       data-independent) and S1 is then empty.
    2. For t = 0..T-1: gamma_t = Robust Private Distance Estimator (Alg. 2) on S2:
       squared residuals (y - w_t^T x)^2, per-group mean of the values below the
       group's (1 - 3 alpha)-quantile, stability histogram over bins
       [2^j, 2^(j+1)) and {0}, left end of the modal bin;
       theta_t = 2 sqrt(2 gamma_t) sqrt(9 C2 K^2 log^(2a)(1/(2 alpha))), and
       w_{t+1} = w_t - eta ( (1/n3) sum_{S3} clip_Theta(x_i) clip_theta_t(w_t^T x_i - y_i) + std_t nu_t )
       with std_t the Gaussian std for L2 sensitivity Theta theta_t / n3 at (eps0, delta0) (one record added
       or removed, n3 public, as in the paper's proof).
    3. Return w_T; with `best_iterate` (DP-ROBGD*, Sec. 5) one more gamma_T is
       released and the iterate with the smallest gamma_t (latest on ties) is
       returned.  gamma_t are private releases and the iterates are private,
       so the selection is post-processing: DP-ROBGD* is private.

    Privacy: every release costs (eps0, delta0); S1, S2, S3 are disjoint so
    they compose in parallel (Lemma B.2), and within a part (S2 makes the
    most releases, k = T (+1 for best_iterate)) by advanced composition.
    eps0 is solved from Kairouz et al. (2015) Thm 3.4 (the theorem behind
    Lemma B.4) with delta0 = delta/(2k) so that the k releases spend exactly
    (epsilon, delta) (`dpbench.privacy.composition.per_step_budget`).
    Deviation: Alg. 1 line 2 sets eps0 = eps/(4 sqrt(T) log(1/delta0)), a
    looser sufficient condition (about 14x smaller eps0 at T = 30, eps = 1,
    delta = 1e-6); it would spend less than the budget.

    Constants (the paper leaves all but the data split open; our choices):
    - n_iterations T = 30 (Thm 3: T ~ kappa log ||w*||; Sec. 5's baseline rule 3 kappa log n at kappa=1, n ~ 1e4).
    - learning_rate: eta = learning_rate / Gamma.  Thm 3 needs eta <= 1/(1.1 lambda_max(Sigma)); lambda_max
      is unknown but <= Tr(Sigma) ~ Gamma, so the default 1/1.1 is the theorem's step with that bound.
    - alpha = 0.1: corruption bound / target error rate (Assumption 2 needs alpha <= 1/10); must be < 1/3.
    - failure_prob zeta = 0.1 (zeta0 = zeta/3 per estimator, Alg. 1 line 2).
    - subweibull_k K = sqrt(8/3), subweibull_a a = 1/2: the sub-Gaussian (a = 1/2) constant of a standard
      normal (E exp(Z^2/K^2) = 2).  c2 = 1: the resilience constant C2 of Lemma J.7.
    - c1 = 4: number of histogram groups, see `n_groups` (we add 2 groups to the paper's formula).
    - norm_fraction = 1/3 (Alg. 1's S1), gamma_fraction = 0.2 (Sec. 5; Alg. 1 has 1/3).  With these constants
      the histograms need many samples: on x ~ N(0, I_5) at eps = 1 the fit succeeds from n ~ 1e5 (T = 10)
      or 3e5 (T = 30); below that `fit_status_` reports the empty histogram.
    - noise_calibration 'paper': the classical Gaussian mechanism of Alg. 1 line 8 (see `gaussian_noise_std`).

    Fallbacks (`fit_status_` names the first that happened, else 'ok'):
    'norm_histogram_empty' / 'norm_estimate_zero' -- Alg. 3 gave no bin or
    the bin {0}: the fit returns w_0 = 0 and releases nothing more;
    'distance_histogram_empty' -- Alg. 2 gave no bin in `failed_rounds_` of
    the rounds: the last released gamma is reused (post-processing), or,
    before any release, the step is skipped (no gradient released).
    """

    def __init__(
        self,
        epsilon=1.0,
        delta=1e-6,
        n_iterations=30,
        learning_rate=1 / 1.1,
        alpha=0.1,
        failure_prob=0.1,
        subweibull_k=K_GAUSSIAN,
        subweibull_a=0.5,
        c1=4.0,
        c2=1.0,
        norm_fraction=1 / 3,
        gamma_fraction=0.2,
        trace=None,
        best_iterate=False,
        noise_calibration="paper",
        fit_intercept=False,
        random_state=None,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.n_iterations = n_iterations
        self.learning_rate = learning_rate
        self.alpha = alpha
        self.failure_prob = failure_prob
        self.subweibull_k = subweibull_k
        self.subweibull_a = subweibull_a
        self.c1 = c1
        self.c2 = c2
        self.norm_fraction = norm_fraction
        self.gamma_fraction = gamma_fraction
        self.trace = trace
        self.best_iterate = best_iterate
        self.noise_calibration = noise_calibration
        self.fit_intercept = fit_intercept
        self.random_state = random_state

    def _validate_params(self):
        super()._validate_params()
        check_positive_int("n_iterations", self.n_iterations)
        for name in ("learning_rate", "subweibull_k", "subweibull_a", "c1", "c2"):
            check_positive(name, getattr(self, name))
        check_fraction("alpha", self.alpha, 0.0, 1 / 3)
        check_fraction("failure_prob", self.failure_prob)
        check_fraction("gamma_fraction", self.gamma_fraction)
        if self.trace is None:
            check_fraction("norm_fraction", self.norm_fraction)
            if self.norm_fraction + self.gamma_fraction >= 1:
                raise ValueError("norm_fraction + gamma_fraction must be < 1 (S3 gets the rest)")
        else:
            check_positive("trace", self.trace)
        check_choice("noise_calibration", self.noise_calibration, NOISE_CALIBRATIONS)
        check_choice("best_iterate", self.best_iterate, (True, False))

    def _fit_private(self, X, y, mu, rng, ledger):
        ledger.accountant = ADVANCED_PARALLEL
        n, d = X.shape
        T = self.n_iterations
        eps0, delta0 = per_step_budget(self.epsilon, self.delta, T + int(self.best_iterate))
        zeta0 = self.failure_prob / 3
        K, a = self.subweibull_k, self.subweibull_a
        self.step_epsilon_, self.step_delta_ = eps0, delta0

        perm = rng.permutation(n)
        fractions = (self.gamma_fraction,) if self.trace is not None else (self.norm_fraction, self.gamma_fraction)
        sizes = self.part_sizes_ = split_sizes(n, fractions)
        parts = np.split(perm, np.cumsum(sizes)[:-1])
        S3 = parts[-1]
        S2 = parts[-2]
        n3 = S3.size
        self.distance_estimates_, self.clip_thresholds_, self.fit_status_, self.failed_rounds_ = [], [], "ok", 0

        if self.trace is None:
            S1 = parts[0]
            k1 = n_groups(self.c1, eps0, delta0, zeta0, S1.size)
            sq_norms = np.einsum("ij,ij->i", X[S1], X[S1])
            gamma_norm = private_scale_estimate(sq_norms, k1, None, 2 ** 0.25, eps0, delta0, rng, ledger,
                                                tag("S1", "norm histogram"))
        else:
            gamma_norm = float(self.trace)
        self.norm_estimate_ = gamma_norm
        if not gamma_norm:  # None (empty histogram) or the bin {0}: no scale to clip or step with
            self.fit_status_ = "norm_histogram_empty" if gamma_norm is None else "norm_estimate_zero"
            return np.zeros(d)
        Theta = K * math.sqrt(2 * gamma_norm) * math.log(n3 / zeta0) ** a
        eta = self.learning_rate / gamma_norm
        self.norm_threshold_, self.learning_rate_ = Theta, eta
        residual_factor = 2 * math.sqrt(2) * math.sqrt(9 * self.c2 * K**2 * math.log(1 / (2 * self.alpha)) ** (2 * a))

        X2, y2 = X[S2], y[S2]
        k2 = n_groups(self.c1, eps0, delta0, zeta0, S2.size)
        X3, y3 = clip_rows(X[S3], Theta), y[S3]
        self.n_groups_ = k2

        def distance(w, t):
            g = private_scale_estimate((y2 - X2 @ w) ** 2, k2, 1 - 3 * self.alpha, 2.0, eps0, delta0, rng, ledger,
                                       tag("S2", f"distance histogram t={t}"))
            self.distance_estimates_.append(np.nan if g is None else g)
            return g

        w = np.zeros(d)
        iterates, last_gamma, failed = [], None, 0
        for t in range(T):
            gamma = distance(w, t)
            iterates.append(w)
            failed += gamma is None
            last_gamma = gamma if gamma is not None else last_gamma
            if last_gamma is None:
                self.clip_thresholds_.append(np.nan)
                continue
            theta = residual_factor * math.sqrt(last_gamma)
            self.clip_thresholds_.append(theta)
            grad = X3.T @ clip_residuals(X3 @ w - y3, theta) / n3
            sens = Theta * theta / n3
            std, mechanism = gaussian_noise_std(sens, eps0, delta0, self.noise_calibration)
            ledger.record_dp(tag("S3", f"gradient t={t}"), mechanism, eps0, delta0, sensitivity=sens, noise_scale=std)
            w = w - eta * (grad + std * rng.normal(size=d))
        if self.best_iterate:
            failed += distance(w, T) is None
            iterates.append(w)
            gammas = np.array(self.distance_estimates_)
            if np.all(np.isnan(gammas)):
                self.best_iteration_ = T
            else:
                self.best_iteration_ = int(np.flatnonzero(gammas == np.nanmin(gammas))[-1])
            w = iterates[self.best_iteration_]
        if failed:
            self.fit_status_, self.failed_rounds_ = "distance_histogram_empty", failed
        return w


register(AlgorithmSpec(
    "robgd", DPRobGDRegressor, "regression", private=True,
    fixed_params={"n_iterations": 30, "learning_rate": 1 / 1.1, "alpha": 0.1, "gamma_fraction": 0.2},
    tuning_space={
        "n_iterations": ITERATIONS,
        "learning_rate": {"type": "float", "low": 1e-2, "high": 1e2, "log": True},
        "c2": {"type": "float", "low": 1e-3, "high": 1e2, "log": True},
    },
    description="DP-ROBGD (paper 004 Alg. 1): robust private full-batch GD with private adaptive clipping",
))
