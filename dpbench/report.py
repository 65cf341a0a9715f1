"""Text summaries of results, and the ledger audit."""

from __future__ import annotations

import numpy as np
import pandas as pd


def summary_table(df: pd.DataFrame, metric: str | None = None) -> pd.DataFrame:
    """Mean +/- std of the metric over seeds per (dataset, algorithm, epsilon), and how many runs were not 'ok'.

    metric None: test MSE for regression rows, test F1 for classification rows.  Runs with an algorithm
    outcome other than 'ok' (e.g. TukeyEM's PTR failure, which predicts with the zero model) count in the
    mean; runs that produced no model (see results.NO_MODEL_STATUSES) do not.
    """
    from dpbench.results import has_metrics

    if metric is None:
        value = df["test_mse"].where(df["task"] != "classification", df["test_f1"])
        name = "test_mse|test_f1"
    else:
        value, name = df[metric], metric
    frame = pd.DataFrame({
        "dataset": df["dataset"], "algorithm": df["algorithm"], "epsilon": df["epsilon"].fillna(np.inf),
        "value": value.where(has_metrics(df)), "not_ok": df["status"] != "ok",
    })
    g = frame.groupby(["dataset", "algorithm", "epsilon"])
    return pd.DataFrame({f"{name}_mean": g["value"].mean(), f"{name}_std": g["value"].std(ddof=0),
                         "runs": g.size(), "not_ok": g["not_ok"].sum()})


def audit_ledgers(epsilon: float = 1.0, delta: float = 1e-6, seed: int = 0) -> pd.DataFrame:
    """Fit every private algorithm once on small synthetic data; compare its ledger with the budget.

    A fit that ends normally must spend exactly the budget; one that stops early with a documented
    status (e.g. robgd's empty norm histogram on small n) must spend no more than it.
    """
    from dpbench import algorithms
    from dpbench.data import load_dataset

    rows = []
    for name in algorithms.available():
        spec = algorithms.get_spec(name)
        if not spec.private:
            continue
        data = load_dataset({"name": "synthetic", "outlier": "none", "n_train": 20_000, "n_test": 10, "d": 5,
                             "task": spec.task}, split_seed=seed)
        est = algorithms.make(name, epsilon=epsilon, delta=delta, random_state=seed)
        try:
            est.fit(data.X_train, data.y_train)
            spent_eps, spent_delta = est.privacy_ledger_.epsilon_delta(delta)
            status = getattr(est, "fit_status_", "ok")
            exact = np.isclose(spent_eps, epsilon, rtol=1e-9, atol=0) and np.isclose(spent_delta, delta, rtol=1e-9)
            # a documented early stop (e.g. a private histogram came back empty) may spend less, never more
            within = spent_eps <= epsilon * (1 + 1e-9) and spent_delta <= delta * (1 + 1e-9)
            ok = exact or (status != "ok" and within)
            rows.append({"algorithm": name, "releases": len(est.privacy_ledger_), "spent_epsilon": spent_eps,
                         "spent_delta": spent_delta, "status": status, "ok": bool(ok)})
        except Exception as exc:  # noqa: BLE001
            rows.append({"algorithm": name, "status": f"error: {exc}", "ok": False})
    return pd.DataFrame(rows)
