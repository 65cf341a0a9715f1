"""Each extension point is one declaration: a toy algorithm, a toy dataset and a toy figure kind, registered here,
go through the grid, a sweep, the figures and the report with no other change."""

import matplotlib.pyplot as plt
import matplotlib.text
import numpy as np
import pandas as pd
import pytest

from dpbench import plots, results
from dpbench.algorithms import registry
from dpbench.algorithms.base import PRIVACY, DPLinearRegressor
from dpbench.data import dataset, load_dataset, unregister
from dpbench.runner.grid import expand
from dpbench.runner.sweep import run_sweep
from dpbench.summary import render


@pytest.fixture
def toy_algorithm():
    @registry.algorithm("toy_zero", description="ToyZero (a test): the zero model; releases nothing")
    class ToyZero(DPLinearRegressor):
        _parameter_constraints = dict(PRIVACY)

        def __init__(self, epsilon=1.0, delta=1e-6, random_state=None):
            self.epsilon, self.delta, self.random_state = epsilon, delta, random_state

        def _fit_theta(self, X, y, mu, rng, ledger):
            return np.zeros(X.shape[1])

    yield "toy_zero"
    registry._REGISTRY.pop("toy_zero")


@pytest.fixture
def toy_dataset():
    @dataset("toy_line")
    def toy_line(seed=0, n=500):
        """y = 2x + noise, split 80/20 like a real set."""
        rng = np.random.default_rng(seed)
        x = rng.normal(size=n)
        return pd.DataFrame({"x": x, "y": 2 * x + 0.1 * rng.normal(size=n)})

    yield "toy_line"
    unregister("toy_line")


def experiment(**overrides):
    exp = {"name": "toys", "algorithms": [{"name": "toy_zero"}, {"name": "adassp"}, {"name": "ols"}],
           "datasets": ["toy_line"], "epsilons": [0.5, 2.0], "deltas": [1e-6], "seeds": [0, 1],
           "tuning_mode": "fixed", "split": "fixed"}
    return {**exp, **overrides}


def all_text(fig) -> str:
    return "\n".join(t.get_text() for t in fig.findobj(matplotlib.text.Text))


def test_toy_dataset_loads_like_any_other(toy_dataset):
    ds = load_dataset({"name": toy_dataset, "n": 200}, split_seed=3)
    assert (ds.n_train, ds.n_test, ds.d, ds.task) == (160, 40, 1, "regression")
    assert ds.name == "toy_line[n=200]" and ds.feature_names == ["x"]


def test_toy_algorithm_and_dataset_are_in_the_grid(toy_algorithm, toy_dataset):
    runs = expand(experiment())
    assert {(r.algorithm, r.dataset["name"]) for r in runs} == {(a, "toy_line") for a in ("toy_zero", "adassp", "ols")}
    assert sum(r.algorithm == "toy_zero" for r in runs) == 2 * 2  # epsilons x seeds


def test_toy_algorithm_and_dataset_sweep_plot_and_report(toy_algorithm, toy_dataset, tmp_path):
    out = run_sweep(experiment(), {"backend": "sequential", "n_jobs": 1, "progress": False}, tmp_path)
    df = results.load(tmp_path)
    assert out["ran"] == len(df) == 10 and (df["status"] == "ok").all() and set(df["dataset"]) == {"toy_line"}
    toy = df[df["algorithm"] == "toy_zero"]
    assert toy["private"].all() and (toy["spent_epsilon"] == 0).all()  # releases nothing, spends nothing
    np.testing.assert_allclose(toy["test_mse"], 4.01, rtol=0.3)  # the zero model's error is Var(y) ~ 4
    for kind in ("privacy_curve", "dots"):
        fig = plots.make({"kind": kind}, df, title="toys")
        assert "ToyZero" in all_text(fig)  # its display name, from its description
        plt.close(fig)
    table = render(df, {"kind": "privacy_curve"})
    assert "toy_zero" in table and "toy_line" in table


def test_toy_figure_kind_draws(tmp_path):
    @plots.figure("toy_hist", summary=lambda df, metric="test_mse": f"{len(df)} runs")
    def toy_hist(df, title="", metric="test_mse"):
        fig, ax = plt.subplots()
        ax.hist(df[metric].dropna())
        ax.set_title(title)
        return fig

    try:
        df = pd.DataFrame({"test_mse": [1.0, 2.0, 2.5], "status": "ok"})
        assert "toy_hist" in plots.kinds()
        assert plots.draw({"kind": "toy_hist"}, df, tmp_path / "h.png", title="toy").stat().st_size > 0
        assert plots.summary({"kind": "toy_hist", "metric": "test_mse"}, df) == "3 runs"
    finally:
        plots.unregister("toy_hist")


def test_a_metric_is_one_declaration(tmp_path):
    """A metric registered with @metric gets train_/test_ columns in every run's row, a label and a direction."""
    from dpbench import metrics
    from dpbench.plots.common import lower_is_better, metric_label
    from dpbench.runner.sweep import run_sweep

    @metrics.metric("mae", "regression", label="MAE", lower_is_better=True, scale_free=False)
    def mae(y, pred, s):
        return np.mean(np.abs(y - pred))

    try:
        synth = {"name": "synthetic", "outlier": "none", "fraction": 0.0, "n_train": 500, "n_test": 100, "d": 3}
        exp = {"name": "toy_metric", "algorithms": [{"name": "ols"}], "datasets": [synth], "epsilons": [1.0],
               "deltas": [1e-6], "seeds": [0], "tuning_mode": "fixed", "split": "fixed"}
        run_sweep(exp, {"backend": "sequential", "n_jobs": 1, "progress": False}, tmp_path)
        df = results.load(tmp_path)
        assert df["test_mae"].notna().all() and (df["test_mae"] > 0).all()
        assert metric_label("test_mae") == "test MAE" and lower_is_better("test_mae")
    finally:
        metrics.METRICS.pop("mae", None)
