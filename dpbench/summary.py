"""Text summaries of results, and the ledger audit."""

from __future__ import annotations

import json
from collections.abc import Mapping

import numpy as np
import pandas as pd


def settings(df: pd.DataFrame) -> pd.Series:
    """Each row's algorithm and the parameters that vary among its experiment's runs of it ('tukey n_models=1000'):
    a sub-grid's parameter values are different settings, not more seeds."""
    names = {}
    for (experiment, algorithm), unique in df.groupby(["experiment", "algorithm"])["params"].unique().items():
        params = {p: json.loads(p) for p in unique}
        keys = sorted({k for v in params.values() for k in v})
        varying = [k for k in keys if len({json.dumps(v.get(k), sort_keys=True) for v in params.values()}) > 1]
        names.update({(experiment, algorithm, p): " ".join([algorithm, *(f"{k}={v.get(k)}" for k in varying)])
                      for p, v in params.items()})
    return pd.Series([names[k] for k in zip(df["experiment"], df["algorithm"], df["params"], strict=True)],
                     index=df.index, dtype=object)


def summary_table(df: pd.DataFrame, metric: str | None = None) -> pd.DataFrame:
    """Per (dataset, setting, epsilon): the metric's mean and std over seeds, and how the runs ended.  A setting
    is the algorithm with the parameters that vary in its experiment (`settings`: a sub-grid's values are not
    pooled); a run in a tuning mode other than fixed is listed as 'setting [mode]'.

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
    setting = settings(df) if {"experiment", "params"} <= set(df) else df["algorithm"]
    algorithm = setting.where(mode.fillna("fixed") == "fixed", setting + " [" + mode + "]")
    frame = pd.DataFrame({
        "dataset": df["dataset"], "algorithm": algorithm, "epsilon": df["epsilon"].fillna(np.inf),
        "metric": name, "value": value.where(usable), "failed": usable & (df["status"] != "ok"), "no_model": ~usable,
    })
    g = frame.groupby(["dataset", "algorithm", "epsilon"])
    return pd.DataFrame({"metric": g["metric"].first(), "mean": g["value"].mean(), "std": g["value"].std(ddof=0),
                         "runs": g.size(), "failed": g["failed"].sum(), "no_model": g["no_model"].sum()})


def _with_models(table: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """The table without its datasets where no run produced a model (missing data: said once elsewhere), and
    how many datasets that leaves out."""
    empty = table.groupby(level="dataset")["no_model"].sum() == table.groupby(level="dataset")["runs"].sum()
    return table[~table.index.get_level_values("dataset").isin(empty[empty].index)], int(empty.sum())


def render(df: pd.DataFrame, plot: Mapping | None = None) -> str:
    """The report a sweep prints: the summary table, then what the figure kind adds (scatter: win counts)."""
    from dpbench import plots

    plot = plot or {}
    table, left_out = _with_models(summary_table(df, plot.get("metric")))
    with pd.option_context("display.width", 200, "display.max_rows", 1000):
        parts = [table.to_string(float_format=lambda v: f"{v:.4g}")
                 + (f"\n({left_out} dataset(s) without a model in any run not shown)" if left_out else "")]
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
