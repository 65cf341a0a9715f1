"""TukeyEM (paper 003): depth volumes, PTR distance, samplers, privacy ledger, utility."""

import math

import numpy as np
import pytest
from scipy import stats
from sklearn.base import clone

import dpbench.algorithms.tukey as tukey
from dpbench.algorithms import get_spec, make
from dpbench.algorithms.base import nonprivate_diagnostics, random_parts
from dpbench.algorithms.tukey import (
    TukeyEMRegressor,
    approximate_tukey_depth,
    depth_log_weights,
    log_depth_volumes,
    partition_ols,
    ptr_distance,
    sample_point_with_depth,
    sorted_projections,
)
from dpbench.privacy.mechanisms import recorded_releases
from dpbench.tuning.spaces import tuning_space

EPS, DELTA = math.log(3), 1e-5  # the paper's (ln 3, 1e-5); one record is one model swapped: the same budget
EPS_R, DELTA_R = EPS, DELTA


def fig2_data(d, m, seed):
    """Paper 003 Fig. 2 set-up: n = (d+1) m, make_regression-like features, intercept, label noise sigma = 10."""
    rng = np.random.default_rng(seed)
    n = (d + 1) * m
    X = rng.normal(size=(n, d))
    y = X @ rng.uniform(0, 100, d) + 3.0 + rng.normal(0, 10, n)
    return X, y


def grid_cells(S):
    """Independent depth bookkeeping: the sorted coordinates cut R^d into cells of constant depth.

    In one coordinate the open interval between the k-th and (k+1)-th sorted
    values (0-indexed k) has k+1 models on its left and m-k-1 on its right.
    Returns each cell's volume and approximate depth, as arrays over the grid.
    """
    d, m = S.shape
    k = np.arange(m - 1)
    depth_1d = np.minimum(k + 1, m - k - 1)
    vol, dep = np.ones((1,) * d), np.full((1,) * d, m)
    for length, depth in zip(np.ix_(*[np.diff(S[j]) for j in range(d)]), np.ix_(*[depth_1d] * d), strict=True):
        vol, dep = vol * length, np.minimum(dep, depth)
    return vol, dep


# --- depth and volumes -----------------------------------------------------------------------------------------


def test_paper_illustration_depth_boxes():
    """Sec. 7.1 / Fig. 3 points: depth-1 box [1,7]x[1,7], depth-2 box [3,6]x[3,5], depth 3 has zero volume (ties)."""
    P = np.array([(1, 1), (7, 3), (5, 7), (3, 3), (5, 5), (6, 3)], float)
    S = sorted_projections(P, 0.0, np.random.default_rng(0))
    V = np.exp(log_depth_volumes(S))
    assert V[0] == np.inf and V[4] == 0
    np.testing.assert_array_equal(V[1:4], [36.0, 6.0, 0.0])
    pts = np.array([[4, 4], [0, 0], [1.5, 2], [2, 4.5], [5.5, 4], [6.5, 6.5], [8, 2]])
    np.testing.assert_array_equal(approximate_tukey_depth(pts, S), [2, 0, 1, 1, 2, 1, 0])
    # the paper's perturbation removes the zero volume without moving the others
    Vp = np.exp(log_depth_volumes(sorted_projections(P, 1e-10, np.random.default_rng(1))))
    np.testing.assert_allclose(Vp[1:3], [36.0, 6.0], rtol=1e-9)
    assert 0 < Vp[3] < 1e-18


@pytest.mark.parametrize("d,m", [(1, 7), (2, 8), (3, 9)])
def test_volumes_match_grid_cells(d, m):
    """V_i = total volume of cells of depth >= i, W_i = V_i - V_{i+1} of depth exactly i; depth function agrees."""
    rng = np.random.default_rng(d)
    S = sorted_projections(rng.normal(size=(m, d)), 0.0, rng)
    vol, dep = grid_cells(S)
    logv = log_depth_volumes(S)
    D = m // 2
    for i in range(1, D + 1):
        np.testing.assert_allclose(np.exp(logv[i]), vol[dep >= i].sum(), rtol=1e-9)
    w = np.exp(depth_log_weights(logv, 1, 0.0))
    np.testing.assert_allclose(w, [vol[dep == i].sum() for i in range(1, D + 1)], rtol=1e-9)
    mids = [(S[j, :-1] + S[j, 1:]) / 2 for j in range(d)]
    centres = np.stack(np.meshgrid(*mids, indexing="ij"), axis=-1).reshape(-1, d)
    np.testing.assert_array_equal(approximate_tukey_depth(centres, S), dep.reshape(-1))


# --- samplers --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("d,m,depth", [(2, 8, 2), (2, 8, 3), (3, 9, 2), (3, 9, 4), (2, 10, 5)])
def test_point_sampler_uniform_on_exact_depth(d, m, depth):
    """Sec. 7.4: every draw has depth exactly i, and cell counts fit volume-proportional expectations (chi-square)."""
    rng = np.random.default_rng(100 + 10 * d + depth)
    S = sorted_projections(rng.uniform(-1, 1, size=(m, d)), 0.0, rng)
    N = 10_000
    Y = np.array([sample_point_with_depth(S, depth, rng) for _ in range(N)])
    np.testing.assert_array_equal(approximate_tukey_depth(Y, S), depth)
    vol, dep = grid_cells(S)
    cell = tuple(np.searchsorted(S[j], Y[:, j]) - 1 for j in range(d))
    counts = np.zeros(vol.shape)
    np.add.at(counts, cell, 1)
    mask = dep == depth
    assert counts[~mask].sum() == 0
    expected = N * vol[mask] / vol[mask].sum()
    if mask.sum() == 1:  # deepest shell of even m: a single box, check uniformity per coordinate instead
        for j in range(d):
            lo, hi = S[j, depth - 1], S[j, depth]
            assert stats.kstest((Y[:, j] - lo) / (hi - lo), "uniform").pvalue > 1e-3
        return
    observed, small = counts[mask], expected < 5  # pool sparse cells into one bin (chi-square validity)
    if small.any():
        observed = np.append(observed[~small], observed[small].sum())
        expected = np.append(expected[~small], expected[small].sum())
    assert len(observed) >= 8
    assert stats.chisquare(observed, expected).pvalue > 1e-3


def test_depth_sampler_matches_exponential_mechanism():
    """P[i] ~ W_i exp(eps i) over i = t..D (Sec. 3.3.1, monotone score without the 2), checked by chi-square."""
    rng = np.random.default_rng(7)
    m, d, t, eps = 12, 2, 3, 0.8
    S = sorted_projections(rng.normal(size=(m, d)), 0.0, rng)
    vol, dep = grid_cells(S)
    depths = np.arange(t, m // 2 + 1)
    p = np.array([vol[dep == i].sum() * math.exp(eps * i) for i in depths])
    p /= p.sum()
    logw = depth_log_weights(log_depth_volumes(S), t, eps)
    np.testing.assert_allclose(np.exp(logw - logw.max()) / np.exp(logw - logw.max()).sum(), p, rtol=1e-9)
    N = 20_000
    draws = np.array([tukey._sample_log_weights(logw, rng) for _ in range(N)])
    counts = np.bincount(draws, minlength=len(depths))
    assert stats.chisquare(counts, N * p).pvalue > 1e-3


def test_depth_weights_stable_for_huge_volumes():
    """Log-space weights stay finite where linear volumes would overflow (d = 40 sides of length 1e10)."""
    S = np.tile(np.arange(20.0) * 1e10, (40, 1))
    logw = depth_log_weights(log_depth_volumes(S), 5, 1.0)
    assert np.all(np.isfinite(logw)) and logw.max() > 700
    assert 5 <= 5 + tukey._sample_log_weights(logw, np.random.default_rng(0)) <= 10


# --- PTR -------------------------------------------------------------------------------------------------------


def brute_force_distance(logv, t, eps, delta):
    """Lemma 3.6 by its definition, looping over k and g."""
    D = len(logv) - 2
    best = -1
    for k in range(t):
        for g in range(1, D + 2):
            j = t + k + g + 1
            if j > D + 1:
                break
            with np.errstate(invalid="ignore"):
                if logv[t - k - 1] - logv[j] - eps * g / 2 <= math.log(delta):
                    best = k
                    break
    return best


@pytest.mark.parametrize("seed", range(40))
def test_ptr_distance_equals_definition(seed):
    """The vectorised suffix-maximum search equals the lemma's double loop, on model volumes and on arbitrary ones."""
    rng = np.random.default_rng(seed)
    m = int(rng.integers(8, 400))
    eps, delta = float(rng.uniform(0.2, 3)), float(10 ** rng.uniform(-8, -2))
    if seed % 2:
        S = sorted_projections(rng.standard_t(3, size=(m, int(rng.integers(1, 4)))), 1e-10, rng)
        logv = log_depth_volumes(S)
    else:  # any non-increasing sequence with V_0 = inf, V_{D+1} = 0: gentle steps and a few jumps
        steps = rng.exponential(eps / 2 * rng.uniform(0.05, 0.8), m // 2) + 3 * (rng.random(m // 2) < 0.02)
        logv = np.concatenate([[np.inf], -np.cumsum(steps), [-np.inf]])
    t = math.ceil(m / 4)
    assert ptr_distance(logv, t, eps, math.log(delta)) == brute_force_distance(logv, t, eps, delta)


def test_ptr_distance_grows_with_models():
    """Fig. 2 trend (d = 2, n = (d+1) m, (ln 3, 1e-5)): more models -> larger distance; the check flips fail -> pass."""
    eh = EPS / 2
    ks = []
    for m in (250, 500, 1000, 2000):
        X, y = fig2_data(2, m, seed=m)
        X1 = np.hstack([X, np.ones((len(X), 1))])
        S = sorted_projections(partition_ols(X1, y, m, np.random.default_rng(m)), 1e-10, np.random.default_rng(0))
        ks.append(ptr_distance(log_depth_volumes(S), math.ceil(m / 4), eh, math.log(DELTA / (8 * math.exp(eh)))))
    assert all(a < b for a, b in zip(ks, ks[1:], strict=False)), ks
    threshold = math.log(1 / (2 * DELTA)) / eh
    pass_prob = stats.laplace.sf(threshold, loc=np.array(ks), scale=1 / eh)
    assert pass_prob[0] < 1e-4 and pass_prob[-1] > 1 - 1e-12, pass_prob
    fits = [TukeyEMRegressor(EPS, DELTA, n_models=m, fit_intercept=True, random_state=0).fit(*fig2_data(2, m, m))
            for m in (250, 2000)]
    assert [f.ptr_passed_ for f in fits] == [False, True]


# --- the estimator ---------------------------------------------------------------------------------------------


def easy_data(n=200_000, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return X, X @ np.ones(d) + 2.0 + rng.normal(size=n)


def test_r2_close_to_ols_on_easy_data():
    """n = 200k, d = 3 + intercept, sigma = 1, m = 1000 (200 rows per model).

    A passing run returns a point of depth >= m/4, i.e. inside the box of the
    models' coordinate quartiles; each model coordinate has std ~ sigma/sqrt(200),
    so every coordinate is within 0.674 * 0.0707 + O(1/sqrt(n)) < 0.053 of OLS
    and the excess training MSE is at most 4 * 0.053^2 = 0.0112 (X^T X / n ~ I).
    With var(y) = 4 the R^2 loss is at most 0.0028 on every passing run; we
    allow 0.004.  (The zero model would lose all of R^2 = 0.75.)
    """
    X, y = easy_data()
    r2_ols = make("ols", fit_intercept=True).fit(X, y).score(X, y)
    for seed in range(3):
        est = TukeyEMRegressor(EPS_R, DELTA_R, fit_intercept=True, random_state=seed).fit(X, y)
        assert est.fit_status_ == "ok" and est.ptr_passed_
        assert 250 <= est.depth_ <= 500
        assert r2_ols - est.score(X, y) < 0.004


def check_ledger(est, eps, delta, ran_em=True):
    """Entries (eps/2, 0) for the check and (eps/2, delta) for the exponential mechanism: exactly (eps, delta)
    per record (a record swaps one model: no group privacy)."""
    led = est.privacy_ledger_
    assert led.accountant == "basic" and led.group_size == 1
    spent_eps, spent_delta = led.epsilon_delta(delta)
    if ran_em:
        assert spent_eps == pytest.approx(eps, rel=1e-9) and spent_delta == pytest.approx(delta, rel=1e-9)
        lap, em = led.entries
        assert em.mechanism == "exponential" and em.sensitivity == 1.0
        assert em.epsilon == pytest.approx(eps / 2, rel=1e-12) and em.delta == pytest.approx(delta, rel=1e-12)
    else:  # the check failed: only its release is charged, eps/2 and no delta
        (lap,), em = led.entries, None
        assert spent_eps == pytest.approx(eps / 2, rel=1e-12) and spent_delta == 0.0
    assert lap.mechanism == "laplace" and lap.sensitivity == 1.0 and lap.delta == 0.0
    assert lap.epsilon == pytest.approx(eps / 2, rel=1e-12)
    assert lap.noise_scale == pytest.approx(lap.sensitivity / lap.epsilon, rel=1e-12)
    return lap, em


def test_ledger_when_ptr_passes():
    X, y = easy_data(n=50_000)
    eps, delta = 0.7, 1e-6  # the check and the EM at 0.35 each
    with recorded_releases() as releases, nonprivate_diagnostics():
        est = TukeyEMRegressor(epsilon=eps, delta=delta, n_models=1000, fit_intercept=True,
                               random_state=1).fit(X, y)
    assert est.fit_status_ == "ok" and est.ptr_passed_
    check_ledger(est, eps, delta)
    # Alg. 1: threshold log(1/(2 delta)) / (eps/2), Lemma 3.6 at (eps/2, delta / (8 e^{eps/2}))
    assert est.ptr_threshold_ == pytest.approx(math.log(1 / 2e-6) / 0.35)
    rng = np.random.default_rng(1)  # replay the estimator's draws: partition, then perturbation
    S = sorted_projections(partition_ols(np.hstack([X, np.ones((len(X), 1))]), y, 1000, rng), 1e-10, rng)
    log_v = log_depth_volumes(S)
    k = est.nonprivate_diagnostics_["ptr_distance"]
    assert k == ptr_distance(log_v, 250, 0.35, math.log(1e-6 / (8 * math.exp(0.35)))) > 0
    assert est.ptr_noisy_distance_ >= est.ptr_threshold_
    # the depth is drawn with P[i] ~ W_i exp((eps/2) i / 2): the standard factor 2 (depth is not monotone under
    # the swap one record makes), never the paper's monotone exp((eps/2) i)
    (em,) = [r for r in releases if r.mechanism == "restricted_exponential"]
    np.testing.assert_allclose(em.value, depth_log_weights(log_v, 250, 0.35 / 2), rtol=1e-12)


def test_one_record_changes_one_model_bit_for_bit():
    """D and D plus one record, same seed: m - 1 of the m models are bit-identical (each part's model depends on
    its own rows only; the swap argument of the class docstring needs exactly this), also when parts are
    smaller than d and when the new record enlarges the largest part."""
    rng = np.random.default_rng(3)
    for n, d, m in [(5_000, 3, 1_000), (2_000, 10, 300), (300, 20, 100), (40, 3, 20)]:
        X, y = rng.normal(size=(n + 1, d)), rng.normal(size=n + 1)
        X[-1] *= 1e3  # an outlier record
        a = partition_ols(X[:n], y[:n], m, np.random.default_rng(1))
        b = partition_ols(X, y, m, np.random.default_rng(1))
        assert np.sum(np.all(a == b, axis=1)) == m - 1, (n, d, m)


def test_ptr_failure_is_a_result_charged_what_was_released():
    X, y = fig2_data(2, 250, seed=3)
    est = TukeyEMRegressor(EPS, DELTA, n_models=250, fit_intercept=True, random_state=0).fit(X, y)
    assert est.fit_status_ == "ptr_failed" and est.ptr_passed_ is False and est.depth_ is None
    assert np.all(est.coef_ == 0) and est.intercept_ == 0
    check_ledger(est, EPS, DELTA, ran_em=False)
    np.testing.assert_array_equal(est.predict(X[:5]), 0.0)


def test_no_branch_on_n():
    """n < m d (fewer rows than a model needs) used to return the zero model without looking at the data, so
    one more record could switch the outcome: now the models are fitted (minimum norm) and the check decides."""
    X, y = easy_data(n=2_500, d=2)  # 2.5 rows per model, d = 3 with the intercept
    with nonprivate_diagnostics():
        est = TukeyEMRegressor(EPS, DELTA, fit_intercept=True, random_state=0).fit(X, y)
    assert est.nonprivate_diagnostics_["ptr_distance"] is not None and est.fit_status_ in ("ok", "ptr_failed")


@pytest.mark.parametrize("n", [1, 2, 5])
def test_parts_smaller_than_d_fit_like_the_others(n):
    """An exception only on one of two neighbouring datasets would be observable: tiny parts must just fit."""
    X, y = easy_data(n=n, d=3)
    est = TukeyEMRegressor(EPS, DELTA, n_models=10, random_state=0).fit(X, y)
    assert est.fit_status_ == "ptr_failed" and np.all(est.coef_ == 0)


def test_single_model_is_a_status_not_a_crash():
    X, y = easy_data(n=1_000, d=2)
    with pytest.warns(RuntimeWarning, match="n_models >= 2"):
        est = TukeyEMRegressor(EPS, DELTA, n_models=1, random_state=0).fit(X, y)
    assert est.fit_status_ == "too_few_models" and np.all(est.coef_ == 0)
    assert len(est.privacy_ledger_) == 0  # m is public: nothing was released


@pytest.mark.parametrize("m", [2, 3, 50, 60])
def test_small_odd_and_even_m(m):
    """Tiny m: no g >= 1 fits between depths t+k+1 and floor(m/2), so k = -1 and PTR fails.

    With eps = 1200 (eps_u = 600 for the check, delta_u = 0.1) the lemma needs
    (eps_u / 2) g > log(8 e^{eps_u/2} / delta_u) + log(volume ratio) ~ 1.5 eps_u, i.e. g >= 4, first possible
    for k >= 1 from m = 40 (t = 10, D = 20); from m = 50 k >= 4 clears the threshold log(1/(2 delta_u)) / 300
    ~ 2.0 by far more than the Laplace scale 1/300 and the check passes.
    """
    X, y = easy_data(n=3_000, d=1)
    with nonprivate_diagnostics():
        est = TukeyEMRegressor(epsilon=1200.0, delta=0.1, n_models=m, random_state=m).fit(X, y)
    k = est.nonprivate_diagnostics_["ptr_distance"]
    if m < 10:
        check_ledger(est, 1200.0, 0.1, ran_em=False)
        assert k == -1 and est.fit_status_ == "ptr_failed"
    else:
        check_ledger(est, 1200.0, 0.1)
        assert k >= 1 and est.fit_status_ == "ok"
        assert math.ceil(m / 4) <= est.depth_ <= m // 2


def test_partition_ols_matches_lstsq_per_part(monkeypatch):
    """Random part sizes, a column that is all zero in some parts (rank deficient), and chunking."""
    rng = np.random.default_rng(5)
    n, m, d = 1_003, 10, 4
    X = rng.normal(size=(n, d))
    X[rng.random(n) < 0.99, 3] = 0.0
    y = rng.normal(size=n)
    models = partition_ols(X, y, m, np.random.default_rng(11))
    parts = random_parts(n, np.ones(m), np.random.default_rng(11))
    for g, rows in enumerate(parts):
        np.testing.assert_allclose(models[g], np.linalg.lstsq(X[rows], y[rows], rcond=None)[0], atol=1e-10)
    assert sum(p.size for p in parts) == n and len({p.size for p in parts}) > 1
    monkeypatch.setattr(tukey, "_CHUNK_FLOATS", 2 * 140 * d)  # a few models per chunk
    np.testing.assert_allclose(partition_ols(X, y, m, np.random.default_rng(11)), models, atol=1e-12)


def test_partition_ols_with_fewer_rows_than_features_matches_lstsq():
    """Every part smaller than d (the transposed path): the minimum-norm solution, also with a duplicated
    column (rank deficient) and empty parts."""
    rng = np.random.default_rng(6)
    n, m, d = 120, 40, 25
    X = rng.normal(size=(n, d))
    X[:, 1] = X[:, 0]
    y = rng.normal(size=n)
    models = partition_ols(X, y, m, np.random.default_rng(12))
    parts = random_parts(n, np.ones(m), np.random.default_rng(12))
    assert max(p.size for p in parts) < d
    for g, rows in enumerate(parts):
        ref = np.linalg.lstsq(X[rows], y[rows], rcond=None)[0] if rows.size else np.zeros(d)
        np.testing.assert_allclose(models[g], ref, atol=1e-10)


def test_reproducible_and_sklearn_compatible():
    X, y = easy_data(n=50_000)
    a = TukeyEMRegressor(EPS_R, DELTA_R, fit_intercept=True, random_state=3).fit(X, y)
    b = clone(a).fit(X, y)
    c = TukeyEMRegressor(EPS_R, DELTA_R, fit_intercept=True, random_state=4).fit(X, y)
    assert a.fit_status_ == c.fit_status_ == "ok"
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert a.intercept_ == b.intercept_
    assert not np.array_equal(a.coef_, c.coef_)
    spec = get_spec("tukey")
    assert spec.private and spec.task == "regression" and spec.fixed_params["n_models"] == 1000
    assert tuning_space(spec.name)["n_models"]["low"] == 1 and tuning_space(spec.name)["n_models"]["high"] == 4000
    assert make("tukey").get_params()["n_models"] == 1000


@pytest.mark.parametrize("params", [
    {"epsilon": 0.0}, {"epsilon": -1.0}, {"delta": 0.0}, {"delta": 1.0}, {"n_models": 0}, {"n_models": 2.5},
{"perturbation": -1e-10}, {"perturbation": float("nan")}, {"perturbation": "tiny"},
])
def test_bad_params_raise(params):
    X, y = easy_data(n=1_000, d=2)
    with pytest.raises(ValueError):
        TukeyEMRegressor(**params).fit(X, y)


def test_bad_data_raise():
    X, y = easy_data(n=1_000, d=2)
    X[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        TukeyEMRegressor().fit(X, y)
    with pytest.raises(ValueError, match="different numbers"):
        TukeyEMRegressor().fit(X[:, :1] * 0, y[:-1])
