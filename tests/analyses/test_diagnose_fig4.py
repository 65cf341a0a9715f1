"""diagnose_fig4 (issue 37 item 4): fixed DP-EBM refitted with the public box [-1, 1], judged against fixed
BoostedAdaSSP in the claim's cells."""

import json

import numpy as np
import pandas as pd
import pytest

from dpbench import algorithms
from dpbench.analyses import diagnose_fig4 as diag
from dpbench.data import Dataset, MissingDataError

EPS, DELTA = 1.0, 1e-6
EBM = {"n_rounds": 5}


def dataset(seed=0, n=1_000, d=3) -> Dataset:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = 50 + 20 * X[:, 0] + rng.normal(size=n)  # labels far outside [-1, 1]: the public box clips them
    m = n * 4 // 5
    return Dataset("toy", "regression", X[:m], y[:m], X[m:], y[m:])


def fig4_rows() -> pd.DataFrame:
    """Fixed BoostedAdaSSP (MSE given: 1e-9 on toy_a, 1e9 on toy_b) and fixed DP-EBM (the sweep's MSE 1e-12)."""
    rows = []
    for ds, ours in (("toy_a", 1e-9), ("toy_b", 1e9)):
        for s in (0, 1):
            common = {"dataset": ds, "epsilon": EPS, "delta": DELTA, "tuning_mode": "fixed", "seed": s,
                      "split": "fixed", "data_seed": 42, "random_state": 7 + s, "status": "ok", "tuned_params": None}
            rows.append({**common, "run_id": f"{ds}-b{s}", "algorithm": "boosted_adassp", "params": "{}",
                         "test_mse": ours})
            rows.append({**common, "run_id": f"{ds}-e{s}", "algorithm": "dp_ebm", "params": json.dumps(EBM),
                         "test_mse": 1e-12})
    return pd.DataFrame(rows)


def test_refits_use_the_public_box_and_the_runs_settings():
    fig4 = fig4_rows()

    def load(run):
        if run["dataset"] == "toy_missing":
            raise MissingDataError("not in the mirror")
        return dataset()

    extra = fig4[fig4["algorithm"] == "dp_ebm"].head(1).assign(dataset="toy_missing", run_id="m0")
    rows = pd.DataFrame(diag.refit(diag.runs_to_refit(pd.concat([fig4, extra])), load))
    assert len(rows) == 5 and rows["private"].all()
    assert rows.loc[rows["dataset"] == "toy_missing", "status"].tolist() == ["missing_data"]
    done = rows[rows["status"] == "ok"]
    assert all(json.loads(p) == {**EBM, **diag.PUBLIC_BOX} for p in done["params"])
    data = dataset()
    direct = algorithms.make("dp_ebm", epsilon=EPS, delta=DELTA, random_state=7, **EBM, **diag.PUBLIC_BOX)
    direct.fit(data.X_train, data.y_train)
    expected = float(np.mean((direct.predict(data.X_test) - data.y_test) ** 2))
    assert done.loc[done["source_run_id"] == "toy_a-e0", "test_mse"].item() == pytest.approx(expected)
    assert expected > 1000  # the box [-1, 1] clips labels near 50: far worse than the sweep's 1e-12


def test_the_comparison_puts_the_refits_in_dp_ebms_place():
    fig4 = fig4_rows()
    rows = pd.DataFrame(diag.refit(diag.runs_to_refit(fig4), lambda run: dataset()))
    table = diag.comparison(rows, fig4)
    # with the box BoostedAdaSSP wins toy_a (1e-9 against ~2500) and loses toy_b (1e9); against the sweep's 1e-12
    # it loses both
    assert table.loc[EPS, ["wins_public_box", "n_public_box", "wins_private", "n_private"]].tolist() == [1, 2, 0, 2]
    text = diag.diagnosis_text(table)
    assert "1 of 2 datasets at eps 1" in text and "with the private ranges 0 of 2" in text
    assert "holds at eps none" in text  # 2 cells: too few for the sign test
    assert diag.diagnosis_text(diag.comparison(rows.iloc[:0], fig4)).startswith("no dataset")
