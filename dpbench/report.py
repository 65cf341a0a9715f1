"""Text summaries of results, and the ledger audit."""

from __future__ import annotations

import numpy as np
import pandas as pd


def summary_table(df: pd.DataFrame, metric: str | None = None) -> pd.DataFrame:
    """Mean +/- std of the metric over seeds per (dataset, algorithm, epsilon), and how many runs were not 'ok'.

    Runs with an algorithm outcome other than 'ok' (e.g. TukeyEM's PTR failure, which predicts with the zero
    model) count in the mean; runs that produced no model (see results.NO_MODEL_STATUSES) do not.
    """
    from dpbench.plots.privacy_curve import default_metric

    from dpbench.results import has_metrics

    usable = has_metrics(df)
    metric = metric or (default_metric(df[usable]) if usable.any() else "test_mse")
    eps = df["epsilon"].fillna(np.inf)  # non-private rows
    keys = [df["dataset"], df["algorithm"], eps.rename("epsilon")]
    g = df.assign(_ok=usable, _exact=df["status"] == "ok").groupby(keys)
    table = pd.DataFrame({
        f"{metric}_mean": g.apply(lambda x: x.loc[x["_ok"], metric].mean(), include_groups=False),
        f"{metric}_std": g.apply(lambda x: x.loc[x["_ok"], metric].std(ddof=0), include_groups=False),
        "runs": g.size(),
        "not_ok": g["_exact"].apply(lambda s: int((~s).sum())),
    })
    return table


def audit_ledgers(epsilon: float = 1.0, delta: float = 1e-6, seed: int = 0) -> pd.DataFrame:
    """Fit every private algorithm once on small synthetic data; compare its ledger with the budget.

    A fit that ends normally must spend exactly the budget; one that stops early with a documented
    status (e.g. robgd's empty norm histogram on small n) must spend no more than it.
    """
    from dpbench import algorithms
    from dpbench.data.synthetic import make_synthetic

    rows = []
    for name in algorithms.available():
        spec = algorithms.get_spec(name)
        if not spec.private:
            continue
        data = make_synthetic(outlier="none", n_train=20_000, n_test=10, d=5, task=spec.task, seed=seed)
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
