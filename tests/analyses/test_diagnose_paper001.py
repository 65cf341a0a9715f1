"""diagnose_paper001 (issue 37 item 4): the runs each experiment refits, and the readings of the Fig. 4 claim."""

import json

import numpy as np
import pandas as pd
import pytest

from dpbench import algorithms, claims
from dpbench.analyses import diagnose_paper001 as diag
from dpbench.privacy import mu_from_epsilon_delta
from dpbench.privacy.mechanisms import authors_noise
from dpbench.runner.grid import RunSpec

EPS = (0.01, 0.1, 1.0, 10.0, 100.0)
ROUNDS = (1, 10, 100)
DATASETS = tuple(f"d{i}" for i in range(5))


def bell(eps):  # F1 after R rounds / after 1 round: a peak at eps 1
    return 1 + 2 * np.exp(-np.log10(eps) ** 2)


def falling(eps):  # largest at the smallest eps
    return 1 + 3 / np.sqrt(eps)


def rows(shape, rng, seeds=range(5), noise=0.01, experiment=None) -> pd.DataFrame:
    """Runs of BoostedAdaSSP (squared loss): F1 0.2 after 1 round, 0.2 x shape(eps) after more (x 1 + noise N)."""
    out = [{"algorithm": diag.ALGORITHM, "param_loss": diag.LOSS, "status": "ok", "dataset": ds, "epsilon": e,
            "param_n_rounds": r, "seed": s, "run_id": f"{experiment}-{ds}-{e}-{r}-{s}",
            "test_f1": 0.2 * (shape(e) if r > 1 else 1.0) * (1 + noise * rng.normal())}
           for ds in DATASETS for e in EPS for r in ROUNDS for s in seeds]
    frame = pd.DataFrame(out)
    return frame if experiment is None else frame.assign(experiment=experiment)


def test_each_reading_judges_its_own_runs_with_the_claims_test():
    rng = np.random.default_rng(0)
    sweep = rows(falling, rng, seeds=range(3))
    made = pd.concat([rows(bell, rng, seeds=range(3), experiment="authors_noise"),
                      rows(falling, rng, seeds=range(3, 10), experiment="seeds"),
                      rows(bell, rng, seeds=range(3), experiment="one_scale").query("param_n_rounds > 1")])
    s = diag.summary(made, sweep)
    n = len(DATASETS) * (len(ROUNDS) - 1)
    assert s["wins"]["sweep"] == (0, n) and s["verdicts"]["sweep"].holds is False
    assert s["wins"]["authors_noise"] == (n, n) and s["verdicts"]["authors_noise"].holds is True
    assert s["wins"]["one_scale"] == (n, n)  # the sweep's 1-round runs with the refits' R > 1
    assert s["wins"]["paper_split"] == (0, n)  # no paper-split refits: the sweep's runs
    assert s["seeds"] == 10 and s["sides"]["below"] == (n, list(DATASETS)) and s["sides"]["above"][0] == 0
    assert s["creditcard"][:2] == (3, n + 3) and s["creditcard"][2] > 0.05
    assert s["small_peak"] == (n, n)  # falling: largest at the smallest epsilon
    text = diag.diagnosis_text(s)
    assert f"in 0/{n} (p = 1) curves as run" in text and f"not private) {n}/{n} (p = " in text
    assert f"below 0 on {n} (d0, d1, d2, d3, d4)" in text and "above 0" not in text


def test_the_seed_interval_is_the_spread_over_seeds():
    rng = np.random.default_rng(1)
    exact = diag.seed_intervals(rows(bell, rng, noise=0.0))
    assert np.allclose(exact["low"], exact["d"]) and np.allclose(exact["high"], exact["d"]) and (exact["d"] > 0).all()
    noisy = diag.seed_intervals(rows(bell, rng, noise=0.6))
    assert ((noisy["low"] < 0) & (noisy["high"] > 0)).sum() >= 5  # a bell of this size is lost in this noise
    tight = diag.seed_intervals(rows(bell, rng, noise=0.02))
    assert (tight["low"] > 0).all()


def test_an_infinite_ratio_is_the_peak():
    rng = np.random.default_rng(2)
    r = rows(bell, rng, seeds=range(2), noise=0.0)
    assert set(diag.peak_epsilon(r)) == {1.0}
    r.loc[(r["epsilon"] == EPS[0]) & (r["param_n_rounds"] == 1), "test_f1"] = 0.0  # F1 after 1 round 0
    assert set(diag.peak_epsilon(r)) == {EPS[0]}
    assert set(diag.curves(r) > 0) == {True}  # the claim's d leaves the infinite ratio out


def _sweep_row(dataset, seed, rounds, **params) -> dict:
    spec = RunSpec(diag.ALGORITHM, {"loss": "squared", "n_rounds": rounds, "budget_ratio": [1.0, 1.0, 1.0], **params},
                   {"name": dataset}, 1.0, 1e-6, "fixed", seed, "fixed")
    return {"run_id": spec.run_id, "random_state": spec.random_state, "algorithm": spec.algorithm,
            "params": json.dumps(dict(spec.params)), "dataset": dataset, "epsilon": 1.0, "delta": 1e-6,
            "tuning_mode": "fixed", "seed": seed, "split": "fixed", "param_n_rounds": rounds}


def test_the_experiments_refit_the_sweeps_runs_with_one_change():
    runs = pd.DataFrame([_sweep_row(ds, s, r) for ds in ("cod-rna", "telco") for s in range(3) for r in (1, 10)])
    for r in runs.itertuples():  # the sweep's run, as the runner made it
        assert diag.run_spec(r).run_id == r.run_id and diag.run_spec(r).random_state == r.random_state
    assert {s.run_id for s, _ in diag.specs(runs, "authors_noise")} == set(runs["run_id"])
    check = diag.specs(runs, "check")
    assert len(check) == 4 and all(s.seed == 0 and s.run_id == src for s, src in check)
    seeds = diag.specs(runs, "seeds", (3, 4))
    assert sorted({s.seed for s, _ in seeds}) == [3, 4] and len(seeds) == 8
    assert {s.run_id for s, _ in seeds} == {_sweep_row(ds, s, r)["run_id"] for ds in ("cod-rna", "telco")
                                             for s in (3, 4) for r in (1, 10)}
    split = diag.specs(runs, "paper_split")
    assert len(split) == 6 and all(s.dataset == {"name": "cod-rna", "split": "paper"} for s, _ in split)
    assert len({s.data_seed for s, _ in split}) == 1
    one = diag.specs(runs, "one_scale")
    assert len(one) == 6 and all(s.params["budget_ratio"] == "one_scale" and s.params["n_rounds"] == 10
                                 for s, _ in one)
    with pytest.raises(ValueError, match="unknown experiment"):
        diag.specs(runs, "nope")


def test_the_authors_noise_reaches_every_release_of_the_classifier():
    """Paper 001's classifier draws its releases through the same mechanisms as the regressor: within the hook
    X^T X, lambda_min and every round's X^T g draw std = sensitivity x the fit's total mu, as the authors' code."""
    rng = np.random.default_rng(3)
    X, y = rng.normal(size=(500, 4)), rng.integers(0, 2, 500)
    mu = mu_from_epsilon_delta(1.0, 1e-6)
    make = lambda: algorithms.make(diag.ALGORITHM, epsilon=1.0, delta=1e-6, n_rounds=10,  # noqa: E731
                                   x_bound=0.5, random_state=0)
    with authors_noise(mu):
        inside = make().fit(X, y)
    after = make().fit(X, y)
    names = {e.name for e in inside.privacy_ledger_.gaussian_entries}
    assert names == {"X^T X", "lambda_min(X^T X)", "X^T clip(g_t)"}
    for e in inside.privacy_ledger_.gaussian_entries:
        assert e.noise_scale == pytest.approx(e.sensitivity * mu, rel=1e-12)
    for e in after.privacy_ledger_.gaussian_entries:
        assert e.noise_scale == pytest.approx(e.sensitivity / e.mu, rel=1e-12)


@pytest.mark.usefixtures("mirror")
def test_smoke_on_the_reference(tmp_path):
    if not (diag.reference.DIR / diag.FIGURE).is_dir():
        pytest.skip("no reference paper001 results")
    out = tmp_path / "diagnose_paper001_smoke"
    path, png = diag.run(out, smoke=True)
    rows = pd.read_parquet(path)
    assert png.exists() and set(rows["dataset"]) == {diag.SMOKE_DATASET} and (rows["status"] == "ok").all()
    assert set(rows["experiment"]) == set(diag.EXPERIMENTS) - {"paper_split"}  # cod-rna only
    assert rows["private"].eq(rows["experiment"] != "authors_noise").all()
    sweep = diag.paper_rows(diag.reference.DIR, diag.FIGURE).set_index("run_id")["test_f1"]
    check = rows[rows["experiment"] == "check"]
    assert len(check) and np.allclose(check["test_f1"], check["source_run_id"].map(sweep))  # the refit reproduces


def test_the_f1_claim_is_read_with_the_authors_noise_refits_in_place():
    """The refits replace the runs they refit, by run id (F1, AUROC, status), and nothing else; the diagnosis is
    the F1 claim's alone, not the AUROC claim's that shares its `where`."""
    sweep = pd.DataFrame({"run_id": ["a", "b", "c"], "test_f1": [0.1, 0.2, 0.3], "test_auroc": [0.5, 0.6, 0.7],
                          "status": ["ok", "ok", "ok"]})
    refits = pd.DataFrame({"experiment": ["authors_noise", "seeds"], "source_run_id": ["b", "c"],
                         "test_f1": [0.9, 0.8], "test_auroc": [0.95, 0.85], "status": ["ok", "ok"]})
    rows, n = diag.with_authors_noise(refits, sweep)
    assert n == 1 and rows["test_f1"].tolist() == [0.1, 0.9, 0.3] and rows["test_auroc"].tolist() == [0.5, 0.95, 0.7]
    holders = [c.quote for c in claims.claims("paper001")
               if diag.explain_f1_rounds in {d.explain for d in claims.diagnoses(c)}]
    assert holders == [diag.F1_ROUNDS]


def test_the_refitted_runs_do_not_depend_on_the_order_of_the_sweeps_rows():
    """A run's place in a batch moves its scores by an ulp, so the runs come in one order (by run id) however
    the sweep's parts were written."""
    frame = rows(bell, np.random.default_rng(2))
    shuffled = frame.sample(frac=1.0, random_state=3)
    assert list(diag.sweep_runs(shuffled)["run_id"]) == list(diag.sweep_runs(frame)["run_id"])
    assert list(diag.sweep_runs(frame)["run_id"]) == sorted(frame["run_id"])
