"""Text summaries of results, and the ledger audit."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd


def summary_table(df: pd.DataFrame, metric: str | None = None) -> pd.DataFrame:
    """Per (dataset, algorithm, epsilon): the metric's mean and std over seeds, and how the runs ended.
    A run in a tuning mode other than fixed is listed as 'algorithm [mode]'.

    metric None: test MSE for regression rows, test F1 for classification rows (column `metric` says which).
    `failed`: runs with an algorithm outcome other than 'ok' that still predict (e.g. TukeyEM's PTR failure,
    the zero model, as paper 000 reports it); they count in the mean.  `no_model`: runs that produced no model
    (results.NO_MODEL_STATUSES: errors, missing data); they do not.  Non-private rows have epsilon inf.
    """
    from dpbench.results import has_metrics

    if metric is None:
        clf = df["task"] == "classification"
        value, name = df["test_mse"].where(~clf, df["test_f1"]), np.where(clf, "test_f1", "test_mse")
    else:
        value, name = df[metric], metric
    usable = has_metrics(df)
    mode = df["tuning_mode"] if "tuning_mode" in df else pd.Series("fixed", index=df.index)
    algorithm = df["algorithm"].where(mode.fillna("fixed") == "fixed", df["algorithm"] + " [" + mode + "]")
    frame = pd.DataFrame({
        "dataset": df["dataset"], "algorithm": algorithm, "epsilon": df["epsilon"].fillna(np.inf),
        "metric": name, "value": value.where(usable), "failed": usable & (df["status"] != "ok"), "no_model": ~usable,
    })
    g = frame.groupby(["dataset", "algorithm", "epsilon"])
    return pd.DataFrame({"metric": g["metric"].first(), "mean": g["value"].mean(), "std": g["value"].std(ddof=0),
                         "runs": g.size(), "failed": g["failed"].sum(), "no_model": g["no_model"].sum()})


def render(df: pd.DataFrame, plot: Mapping | None = None) -> str:
    """The report a sweep prints: the summary table, then what the figure kind adds (scatter: win counts)."""
    from dpbench import plots

    plot = plot or {}
    with pd.option_context("display.width", 200, "display.max_rows", 1000):
        parts = [summary_table(df, plot.get("metric")).to_string(float_format=lambda v: f"{v:.4g}")]
    extra = plots.summary(plot, df)
    return "\n\n".join(parts + ([extra] if extra else []))


def audit_ledgers(epsilon: float = 1.0, delta: float = 1e-6, seed: int = 0, names=None) -> pd.DataFrame:
    """Fit every private algorithm (or those in `names`) once on small synthetic data; compare its ledger with
    the budget.

    A fit that ends normally must spend exactly the budget; one that stops early with a documented
    status (e.g. robgd's empty norm histogram on small n) must spend no more than it.
    """
    from dpbench import algorithms
    from dpbench.data import load_dataset

    rows = []
    for name in names or algorithms.available():
        spec = algorithms.get_spec(name)  # ValueError naming the valid ones
        if not spec.private:
            if names:
                raise ValueError(f"algorithm {name!r} is not private; it has no ledger to check")
            continue
        data = load_dataset({"name": "synthetic", "outlier": "none", "n_train": 20_000, "n_test": 10, "d": 5,
                             "task": spec.task}, split_seed=seed)
        est = algorithms.make(name, epsilon=epsilon, delta=delta, random_state=seed)
        try:
            est.fit(data.X_train, data.y_train)
            rows.append({"algorithm": name, "releases": len(est.privacy_ledger_), **spent_budget(est, epsilon, delta)})
        except Exception as exc:  # noqa: BLE001
            rows.append({"algorithm": name, "status": f"error: {exc}", "ok": False})
    return pd.DataFrame(rows)


def spent_budget(est, epsilon: float, delta: float) -> dict:
    """A fitted private estimator's ledger against the budget it was given: {spent_epsilon, spent_delta, status,
    ok}.  A fit that ends normally must spend exactly the budget (to rounding); one that stops early with a
    documented status (`fit_status_`, e.g. a private histogram came back empty) may spend less, never more."""
    spent_eps, spent_delta = est.privacy_ledger_.epsilon_delta(delta)
    status = getattr(est, "fit_status_", "ok")
    exact = np.isclose(spent_eps, epsilon, rtol=1e-9, atol=0) and np.isclose(spent_delta, delta, rtol=1e-9)
    within = spent_eps <= epsilon * (1 + 1e-9) and spent_delta <= delta * (1 + 1e-9)
    return {"spent_epsilon": spent_eps, "spent_delta": spent_delta, "status": status,
            "ok": bool(exact or (status != "ok" and within))}
