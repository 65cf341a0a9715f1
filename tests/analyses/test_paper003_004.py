"""Papers 003 (TukeyEM) and 004 (DP-ROBGD): their datasets, the Sec. 5 settings of DP-ROBGD, the analyses (smoke)
and their claims."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from dpbench import analyses, claims
from dpbench.algorithms.robust_gd import C2_SMALLEST, DPRobGDRegressor, c2_smallest
from dpbench.algorithms.tukey import TukeyEMRegressor
from dpbench.analyses import paper003, paper004
from dpbench.data import MissingDataError, catalog, check_spec, load_dataset
from dpbench.data.sets.paper004 import CORRUPT_LABEL, second_moment
from dpbench.privacy.composition import spent_by
from dpbench.privacy.mechanisms import recorded_releases


def test_c2_smallest_is_assumption_2_boundary():
    k, a, alpha = math.sqrt(8 / 3), 0.5, 0.1
    assert 2 * C2_SMALLEST * k**2 * math.log(1 / (2 * alpha)) ** (2 * a) == pytest.approx(1.0)
    assert c2_smallest(0.05) < C2_SMALLEST  # a smaller alpha_bar allows a smaller C2


def test_robgd_public_norm_bound_and_lambda_max_spend_exactly_the_budget():
    data = paper004.trial_data(40_000, 1.0, 1.0, 0.0, seed=1)
    X, y = data.X_train, data.y_train
    est = DPRobGDRegressor(epsilon=1.0, delta=1e-8, n_rounds=4, trace=1.0, norm_bound=1.0, lambda_max=0.1,
                           c2=C2_SMALLEST, random_state=0).fit(X, y)
    assert est.norm_threshold_ == 1.0
    assert est.learning_rate_ == pytest.approx((1 / 1.1) / 0.1)
    eps, delta = spent_by(est.privacy_ledger_, 1e-8)
    assert eps == pytest.approx(1.0, rel=1e-9) and delta == pytest.approx(1e-8, rel=1e-6)
    # the gradient noise is calibrated to Theta * theta_t with Theta = norm_bound
    grads = [e for e in est.privacy_ledger_.entries if "gradient" in e.name]
    assert [g.sensitivity for g in grads] == pytest.approx([1.0 * t for t in est.clip_thresholds_])


def test_sec5_settings_beat_the_theory_constants():
    """Issue 17: the theorem's step with the Sec. 5 clip bound vs dpbench's defaults, n = 3e5, kappa = 1.

    Measured (paper004_fig1, 5 trials): defaults 1.4e-2 (2 of 5 with an empty histogram), Sec. 5 settings
    1.8e-5.  A defaults fit that runs has excess error at least its bias 0.1 x (1 - 0.091)^60 = 3.3e-4; asking
    the Sec. 5 settings for < 1e-4 fails if the step, the clip bound or C2 regresses.
    """
    errs_new, errs_old = [], []
    for seed in range(3):
        data = paper004.trial_data(300_000, 1.0, 1.0, 0.0, seed)
        X, y, w, S = data.X_train, data.y_train, data.extra["coef"], data.extra["second_moment"]
        (_, _, p, _), = [s for s in paper004.settings(300_000, w, S, 1.0, 1.0, False, False) if s[0] == "DP-ROBGD"]
        new = DPRobGDRegressor(random_state=seed, **p).fit(X, y)
        old = DPRobGDRegressor(epsilon=1.0, delta=p["delta"], trace=1.0, random_state=seed).fit(X, y)
        assert new.fit_status_ == "ok"
        errs_new.append((new.coef_ - w) @ S @ (new.coef_ - w))
        errs_old.append((old.coef_ - w) @ S @ (old.coef_ - w))
    assert np.mean(errs_new) < 1e-4
    assert np.mean(errs_old) > 3.3e-4


def test_paper004_data():
    """The registered Sec. 5.1 generator: unit-norm rows, a unit w*, the corrupted training labels, clean test rows,
    w* and S handed on in `extra`."""
    spec = {"name": "paper004_synthetic", "n_train": 5_000, "n_test": 1_000, "kappa": 4.0, "sigma": 0.5,
            "fraction": 0.1}
    data = load_dataset(spec, split_seed=3)
    X, y, w = data.X_train, data.y_train, data.extra["coef"]
    assert (data.n_train, data.n_test) == (5_000, 1_000)
    assert np.allclose(np.linalg.norm(X, axis=1), 1.0) and np.isclose(np.linalg.norm(w), 1.0)
    assert (y == CORRUPT_LABEL).sum() == 500
    clean = y != CORRUPT_LABEL
    assert np.abs(y[clean] - X[clean] @ w).max() <= 0.5
    assert np.abs(data.y_test - data.X_test @ w).max() <= 0.5
    assert data.extra["second_moment"] is second_moment(4.0) and np.trace(second_moment(4.0)) == pytest.approx(1.0)
    # the training rows do not depend on the test part
    np.testing.assert_array_equal(load_dataset({**spec, "n_test": 0}, split_seed=3).X_train, X)
    with pytest.raises(ValueError, match="fraction must be a number in"):
        check_spec({**spec, "fraction": 2})


def _in_mirror(mirror, name):
    path = catalog.mirror_path(name, mirror)
    if path is None or not path.is_file():
        pytest.skip(f"{name} is not in the data mirror {mirror}")


# the data mirror's paper003/README.md: n, features, OLS R^2 (with intercept) on all rows
PAPER_COPIES = {"california": (20_433, 8, 0.637), "diamonds": (53_940, 9, 0.907), "garbage": (18_810, 7, 0.540)}


@pytest.mark.parametrize("name", PAPER_COPIES)
def test_paper003_sets_are_the_papers_copies_on_all_rows(name, mirror):
    """The paper's own copies, read in place, every row a training row (the paper fits and scores on all rows),
    with the paper's n and the README's OLS R^2."""
    _in_mirror(mirror, f"paper003_{name}")
    n, d, r2 = PAPER_COPIES[name]
    data = load_dataset(f"paper003_{name}", data_dir=mirror)
    assert (data.n_train, data.n_test, data.d) == (n, 0, d)
    assert data.source == f"mirror {mirror / 'paper003' / catalog.get_spec(f'paper003_{name}').source.file_name(None)}"
    X = np.hstack([data.X_train, np.ones((n, 1))])
    resid = data.y_train - X @ np.linalg.lstsq(X, data.y_train, rcond=None)[0]
    assert 1 - resid @ resid / np.sum((data.y_train - data.y_train.mean()) ** 2) == pytest.approx(r2, abs=5e-4)


def test_paper003_diamonds_copies_hold_the_same_rows(mirror):
    """The paper's Diamonds and OpenML 361096 read the paper's way: the same rows (README: max abs diff 2e-11)."""
    for name in ("paper003_diamonds", "paper003_diamonds_openml"):
        _in_mirror(mirror, name)

    def rows(name):
        data = load_dataset(name, data_dir=mirror)
        table = np.column_stack([data.X_train, data.y_train])
        return table[np.lexsort(np.round(table, 6).T[::-1])]

    np.testing.assert_allclose(rows("paper003_diamonds_openml"), rows("paper003_diamonds"), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("name, task, scale", [("california", "openml_361089", 1e5), ("diamonds", "openml_361096", 1)])
def test_paper003_openml_copies_read_the_mirror_tasks_as_the_paper(name, task, scale, mirror):
    """The OpenML task's rows, all of them, with the label back from log1p and Diamonds' grades as ordinal codes."""
    _in_mirror(mirror, task)
    ours = load_dataset(f"paper003_{name}_openml", data_dir=mirror)
    theirs, _ = catalog.encoded(task, mirror)  # the whole task, unsplit
    assert ours.n_test == 0
    np.testing.assert_array_equal(ours.y_train, np.expm1(theirs.y) * scale)
    if name == "california":
        np.testing.assert_array_equal(ours.X_train, theirs.X)
    else:
        assert ours.d == 9 and ours.feature_types == ["continuous"] * 9
        codes = {c: ours.X_train[:, ours.feature_names.index(c)] for c in ("cut", "color", "clarity")}
        assert [sorted(set(v)) for v in codes.values()] == [list(range(1, k + 1)) for k in (5, 7, 8)]
        ideal = theirs.X[:, theirs.feature_names.index("cut=Ideal")] == 1
        assert (codes["cut"][ideal] == 5).all() and (codes["cut"][~ideal] < 5).all()


def test_paper003_missing_file_names_it(tmp_path):
    """A mirror without paper003/: a one-line MissingDataError naming the file, no traceback of a read."""
    catalog._encoded.cache_clear()
    for name, stem in (("california", "california_kaggle"), ("garbage", "garbage")):
        assert catalog.availability(f"paper003_{name}", tmp_path)[0] == "missing"
        with pytest.raises(MissingDataError, match=f"paper003_{name} .* is missing: no "
                                                   f"{tmp_path / 'paper003' / stem}.parquet; copy the data mirror's"):
            load_dataset(f"paper003_{name}", data_dir=tmp_path)


def test_paper003_manifest_is_checked(tmp_path):
    """`data verify` compares a paper003 file with its MANIFEST.csv row (rows, features; its sha256 is the
    original file's, so it is not compared)."""
    from dpbench.data import mirror as mirror_files

    folder = tmp_path / "paper003"
    folder.mkdir()
    rng = np.random.default_rng(0)
    pd.DataFrame(rng.normal(size=(100, 8)), columns=[f"c{j}" for j in range(8)]).to_parquet(folder / "garbage.parquet")
    pd.DataFrame([{"name": "garbage", "sha256": "0" * 64, "rows": 18810, "features": 7}]).to_csv(
        folder / "MANIFEST.csv", index=False)
    (check,) = [c for c in mirror_files.verify(tmp_path) if c.name == "paper003_garbage"]
    assert check.status == "mismatch"
    assert check.detail == "rows 100 != manifest 18810; n 100 != paper 18810", check.detail


def test_paper003_missing_sets_say_why(data_dir):
    for name in ("traffic", "nba", "beijing", "mlb"):
        assert catalog.availability(f"paper003_{name}", data_dir)[0] == "missing"
        with pytest.raises(MissingDataError, match=f"paper003_{name} .* is missing: not in the mirror; .*"
                                                   r"\(the data mirror's paper003/README.md\)"):
            load_dataset(f"paper003_{name}", data_dir=data_dir)


def test_paper_exponent_diagnosis_changes_only_the_exponent():
    """The diagnosis' TukeyEM: the same models and PTR outcome as the private one with the same seed, the depth
    drawn with the paper's exp((eps/2) i); never a registered algorithm."""
    from dpbench.algorithms import available, get_spec

    rng = np.random.default_rng(7)
    X = rng.normal(size=(20_000, 3))
    y = X @ np.array([1.0, -2.0, 0.5]) + rng.normal(0, 0.1, 20_000)
    fits = {}
    for cls in (TukeyEMRegressor, paper003.PaperExponentTukey):
        with recorded_releases() as releases:
            est = cls(epsilon=paper003.EPS, delta=paper003.DELTA, n_models=500, fit_intercept=True,
                      random_state=3).fit(X, y)
        (em,) = [r for r in releases if r.mechanism == "restricted_exponential"]
        fits[cls] = (est, em.value)
    (ours, w_ours), (theirs, w_theirs) = fits.values()
    assert ours.ptr_passed_ and theirs.ptr_noisy_distance_ == ours.ptr_noisy_distance_
    # log weights log W_i + c i: the paper's c is twice ours
    np.testing.assert_allclose(np.diff(w_theirs - w_ours), paper003.EPS / 4, rtol=1e-9)
    assert TukeyEMRegressor.depth_exponent_divisor == 2
    assert all(get_spec(a).estimator is not paper003.PaperExponentTukey for a in available())


def test_diagnosis_table():
    rows = [{"dataset": "California", "part": "table", "method": "NonDP", "train_r2": 0.6}]
    for m, passed in ((250, False), (500, True)):
        rows += [{"dataset": "California", "part": "m_sweep", "method": "TukeyEM", "m": m, "seed": s,
                  "ptr_passed": passed, "train_r2": -1.0 + s} for s in range(3)]
    rows += [{"dataset": "California", "part": "diagnosis", "method": paper003.PAPER_EXPONENT, "m": 500, "seed": s,
              "train_r2": -0.5 + s} for s in range(3)]
    rows += [{"dataset": "California (OpenML 361089)", "part": "diagnosis", "method": "TukeyEM", "m": 250, "seed": s,
              "ptr_passed": True, "train_r2": -9.0} for s in range(3)]
    rows += [{"dataset": "California (OpenML 361089)", "part": "diagnosis", "method": paper003.PAPER_EXPONENT,
              "m": 250, "seed": s, "train_r2": -8.0} for s in range(3)]
    diag = paper003.diagnosis(pd.DataFrame(rows)).set_index("dataset")
    assert diag.loc["California", ["m", "tukey_r2", "paper_exponent_r2", "exponent_effect", "nondp_r2"]].tolist() \
        == [500, 0.0, 0.5, 0.5, 0.6]
    assert diag.loc["California (OpenML 361089)", ["copy", "m", "paper_r2", "exponent_effect"]].tolist() \
        == ["paper003_california_openml", 250, 0.099, 1.0]
    text = paper003.diagnosis_text(diag.reset_index())
    assert "California: 0.000, with the paper's exponent (not private) 0.500 (+0.500) at m = 500 (paper 0.099)" in text
    assert paper003.diagnosis(pd.DataFrame(rows[:7])).empty


def test_runtime_uses_cpu_time_and_parts_of_at_least_d_rows(monkeypatch):
    """Fig. 2 right: the median of the repeats in CPU seconds, only at m with n / m >= d (22,000 rows, d = 11)."""
    monkeypatch.setattr(paper003, "M_GRID", [1000, 2000, 2500])
    monkeypatch.setattr(paper003, "RUNTIME_REPEATS", 3)
    rt = pd.DataFrame(paper003.runtime(smoke=False))
    assert rt.loc[rt["method"] == "TukeyEM", "m"].tolist() == [1000, 2000]
    assert (rt["repeats"] == 3).all() and (rt["cpu_seconds"] > 0).all()


def test_choose_m_is_the_smallest_m_passing_every_trial():
    sweep = pd.DataFrame({"m": [250, 250, 500, 500, 750, 750], "ptr_passed": [True, False, True, True, True, True]})
    assert paper003.choose_m(sweep) == (500, True)
    assert paper003.choose_m(sweep.assign(ptr_passed=[False, False, True, False, False, False])) == (500, False)


def test_claims_registered():
    texts = {c.paper: [] for c in claims.claims()}
    for c in claims.claims():
        texts[c.paper].append(c.figure)
    assert {"paper004_fig1", "paper004_fig1_eps0.1", "paper004_corruption"} <= set(texts["004"])
    assert texts["003"].count("paper003") >= 5


@pytest.mark.parametrize("name", ["paper004_fig1", "paper004_corruption", "paper003"])
def test_analysis_smoke(tmp_path, name):
    written = analyses.get(name).run(tmp_path, smoke=True)
    assert all(p.exists() for p in written) and any(p.suffix == ".png" for p in written)
    assert any(p.with_suffix(".pdf").exists() for p in written if p.suffix == ".png")
    df = pd.read_parquet(next(p for p in written if p.suffix == ".parquet"))
    assert len(df)
    for c in claims.claims(name):  # the checks read the real columns; verdicts: built cases in test_claims.py
        verdict = c.check(lambda _n, df=df: df)
        assert any(verdict.holds is h for h in (True, False, None)) and verdict.measured  # not a numpy bool
        if name == "paper004_fig1":  # 2 trials, 4 cells: too few for any sign test
            assert verdict.holds is None, verdict.measured


def test_r2_axis_ticks_read_as_numbers():
    """Fig. 5's R^2 axis: linear ticks in [-1, 1], decades below -1 (not symlog's bare 0 and 10^0)."""
    import matplotlib.pyplot as plt

    from dpbench.plots.paper003 import r2_axis

    for lowest, expected in ((-0.01, ["0", "0.25", "0.5", "0.75", "1"]),
                             (-300, ["-100", "-10", "-1", "-0.5", "0", "0.5", "1"])):
        fig, ax = plt.subplots()
        ax.plot([0, 1], [lowest, 1])
        r2_axis(ax, lowest)
        fig.canvas.draw()
        lo, hi = ax.get_ylim()
        assert [t.get_text() for t in ax.get_yticklabels() if lo <= t.get_position()[1] <= hi] == expected
        plt.close(fig)


def test_tukey_matches_diagnosis_swaps_in_the_papers_exponent_at_the_same_m():
    """'exceeding or matching': the bolding rule with TukeyEM's quartiles from the paper's exponent's rows at the m
    the paper's rule chose for the private TukeyEM (quartiles overlapping count, as in the paper)."""
    rows = []
    for name, partner in (("California", 0.12), ("Garbage", 0.27)):
        rows += [{"dataset": name, "part": "table", "method": m, "train_r2": partner + 0.001 * s, "status": "ok"}
                 for m in paper003.PAPER_METHODS if m != "TukeyEM" for s in range(3)]
        rows += [{"dataset": name, "part": "m_sweep", "method": "TukeyEM", "m": 750, "seed": s, "ptr_passed": True,
                  "train_r2": -2.0 + 0.1 * s, "status": "ok"} for s in range(4)]
        rows += [{"dataset": name, "part": "diagnosis", "method": paper003.PAPER_EXPONENT, "m": m, "seed": s,
                  "train_r2": r, "status": "ok"} for m, r in ((750, 0.0), (750, 0.5), (1000, -5.0)) for s in range(2)]
    df = pd.DataFrame(rows)
    assert paper003._matches(paper003.table(df)).holds is False
    text = paper003.explain_tukey_matches(lambda name: df)
    assert "same rule is reproduced" in text and "California: TukeyEM 0.250 vs" in text
    assert "(ok, quartiles overlap)" in text
    with pytest.raises(FileNotFoundError):
        paper003.explain_tukey_matches(lambda name: df[df["part"] != "diagnosis"])
