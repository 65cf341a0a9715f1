"""diagnose_fig2 (issue 37 item 4): the authors' noise hook, the refit rows and the comparison with DP-GD."""

import json
from collections import Counter

import numpy as np
import pandas as pd
import pytest

from dpbench import algorithms
from dpbench.analyses import diagnose_fig2 as diag
from dpbench.data import Dataset, MissingDataError
from dpbench.privacy import mu_from_epsilon_delta
from dpbench.privacy.mechanisms import authors_noise
from tests.algorithms.test_noise_ledger import RecordingGenerator, ledger_draws, rounded

EPS, DELTA = 1.0, 1e-6
PARAMS = {"n_rounds": 20, "x_bound": 0.5, "y_bound": 2.0}


def dataset(seed=0, n=2_000, d=4) -> Dataset:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = X @ rng.normal(size=d) + 0.1 * rng.normal(size=n)
    m = n * 4 // 5
    return Dataset("toy", "regression", X[:m], y[:m], X[m:], y[m:])


def fit(random_state=0, **params):
    data = dataset()
    return algorithms.make("boosted_adassp", epsilon=EPS, delta=DELTA, random_state=random_state,
                           **{**PARAMS, **params}).fit(data.X_train, data.y_train)


def test_the_hook_leaves_a_normal_fit_unchanged():
    before = fit()
    with authors_noise(mu_from_epsilon_delta(EPS, DELTA)):
        inside = fit()
    after = fit()
    assert not np.array_equal(inside.coef_, before.coef_)
    assert np.array_equal(after.coef_, before.coef_) and after.ridge_lambda_ == before.ridge_lambda_
    assert after.privacy_ledger_.entries == before.privacy_ledger_.entries
    for e in after.privacy_ledger_.gaussian_entries:
        assert e.noise_scale == e.sensitivity / e.mu


def test_under_the_hook_every_release_draws_sensitivity_times_mu():
    mu = mu_from_epsilon_delta(EPS, DELTA)
    gen = RecordingGenerator(1)
    with authors_noise(mu):
        est = fit(random_state=gen)
    entries = est.privacy_ledger_.gaussian_entries
    assert {e.name for e in entries} == set(diag.KINDS)
    for e in entries:
        assert e.noise_scale == pytest.approx(e.sensitivity * mu, rel=1e-12)
    # the noise drawn is what the ledger records
    assert Counter((f, rounded(s)) for f, s in gen.draws) == ledger_draws(est.privacy_ledger_)
    # under-noising: correct std / drawn std = 1 / (mu_release mu); rounds at mu / sqrt(3) / sqrt(T)
    ratios = diag.under_noised(est)
    assert ratios["under_noised_gram"] == pytest.approx(np.sqrt(3) / mu**2)
    assert ratios["under_noised_xtg"] == pytest.approx(np.sqrt(3 * PARAMS["n_rounds"]) / mu**2)


def fig2_rows(seeds=(0, 1, 2)) -> pd.DataFrame:
    """A fig2-like table: tuned BoostedAdaSSP and DP-GD runs on two toy datasets at EPS (DP-GD's MSE given)."""
    rows = []
    for ds, dpgd_mse in (("toy_a", 10.0), ("toy_b", 1e-9)):
        for s in seeds:
            common = {"dataset": ds, "epsilon": EPS, "delta": DELTA, "tuning_mode": "tuned", "seed": s,
                      "split": "fixed", "data_seed": 42, "random_state": 100 + s, "status": "ok"}
            rows.append({**common, "run_id": f"{ds}-b{s}", "algorithm": "boosted_adassp",
                         "params": json.dumps({"budget_ratio": [1.0, 1.0, 1.0], "n_rounds": 100}),
                         "tuned_params": json.dumps(PARAMS), "test_mse": 0.5})
            rows.append({**common, "run_id": f"{ds}-g{s}", "algorithm": "dpgd", "params": "{}",
                         "tuned_params": "{}", "test_mse": dpgd_mse})
    return pd.DataFrame(rows)


def test_refit_rows_are_marked_not_private_and_compared_with_dpgd():
    fig2 = fig2_rows()

    def load(run):
        if run["dataset"] == "toy_missing":
            raise MissingDataError("not in the mirror")
        return dataset()

    extra = fig2[fig2["algorithm"] == "boosted_adassp"].head(1).assign(dataset="toy_missing", run_id="m0")
    rows = pd.DataFrame(diag.refit(diag.runs_to_refit(pd.concat([fig2, extra])), load))
    assert len(rows) == 7 and not rows["private"].any()
    assert rows["method"].str.contains("not private").all()
    assert rows.loc[rows["dataset"] == "toy_missing", "status"].tolist() == ["missing_data"]
    done = rows[rows["status"] == "ok"]
    # the refit with dpbench's noise is the plain fit of the same settings and seed
    data = dataset()
    plain = fit(random_state=100)
    expected = float(np.mean((plain.predict(data.X_test) - data.y_test) ** 2))
    assert done.loc[done["source_run_id"] == "toy_a-b0", "test_mse_dpbench"].item() == pytest.approx(expected)
    assert (done["test_mse"] != done["test_mse_dpbench"]).all()
    table = diag.comparison(rows, fig2)
    # DP-GD's MSE 10 on toy_a (BoostedAdaSSP wins), 1e-9 on toy_b (loses), with either noise
    assert table.loc[EPS, ["wins_authors", "n_authors", "wins_dpbench", "n_dpbench"]].tolist() == [1, 2, 1, 2]
    text = diag.diagnosis_text(table)
    assert "1 of 2 datasets (correct accounting: 1 of 2" in text and "not explained at eps 1" in text


@pytest.mark.usefixtures("mirror")
def test_smoke_on_the_reference(tmp_path):
    if not (diag.reference.DIR / diag.FIGURE).is_dir():
        pytest.skip("no reference fig2 results")
    out = tmp_path / "diagnose_fig2_smoke"
    out.mkdir()
    (path,) = diag.run(out, smoke=True)
    rows = pd.read_parquet(path)
    assert len(rows) and not rows["private"].any() and set(rows["epsilon"]) == set(diag.SMOKE_EPSILONS)
    ok = rows[rows["status"] == "ok"]
    # the refit reproduces the sweep's runs (same split, settings and seed), up to rounding
    assert np.allclose(ok["test_mse_dpbench"], ok["test_mse_reference"], rtol=1e-9)


def test_the_refits_judge_another_figures_partner_with_that_claims_reading():
    """Fig. 5's claim is a plain majority: no median-ratio condition, and the partner is named."""
    fig2 = fig2_rows()
    rows = pd.DataFrame(diag.refit(diag.runs_to_refit(fig2), lambda run: dataset()))
    fig5 = fig2.assign(algorithm=fig2["algorithm"].replace({"dpgd": "ambssgd"}))
    table = diag.comparison(rows, fig5, diag.BOTH_TUNED, "fig5", "ambssgd", substantially=False)
    assert table.loc[EPS, ["wins_authors", "n_authors"]].tolist() == [1, 2]
    text = diag.diagnosis_text(table, diag.BOTH_TUNED, "fig5")
    assert "than tuned DP-AMBSSGD on 1 of 2" in text and "median MSE ratio" not in text
    assert "median MSE ratio <= 0.9" in diag.diagnosis_text(diag.comparison(rows, fig2), diag.BOTH_TUNED)

