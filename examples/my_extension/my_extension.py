"""A user's extension of dpbench, outside the package: a toy algorithm, a toy dataset and a figure kind.

An experiment config that lists `imports: [my_extension]` imports this module (from the working directory)
before its grid is expanded, in the sweep and in every worker.
"""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from dpbench.algorithms.base import POSITIVE, PRIVACY, DPLinearRegressor
from dpbench.extend import dataset, figure, register_algorithm
from dpbench.privacy import gaussian_mechanism


class MySumRegressor(DPLinearRegressor):
    """theta = (X^T clip(y) + noise) / 100, rows clipped to x_bound: one release of L2 sensitivity x_bound."""

    clips_features = True  # phi(x) = x * min(1, x_bound / ||x||), at fit and predict time
    _parameter_constraints = {**PRIVACY, "x_bound": POSITIVE}

    def __init__(self, epsilon=1.0, delta=1e-6, x_bound=1.0, random_state=None):
        self.epsilon, self.delta, self.x_bound, self.random_state = epsilon, delta, x_bound, random_state

    def _fit_theta(self, X, y, mu, rng, ledger):  # X: the clipped rows; mu: the whole budget
        return gaussian_mechanism(X.T @ np.clip(y, -1, 1), self.x_bound, mu, rng, ledger, "X^T clip(y)") / 100


register_algorithm(MySumRegressor, "my_sum", label="MySum", description="MySum (Doe 2025): a noisy sum",
                   tuning_space={"x_bound": {"type": "float", "low": 1e-5, "high": 1e5, "log": True}},
                   audit={"params": {"x_bound": 1.0}})


@dataset("my_line", task="regression")
def my_line(seed=0, n=1000):
    """y = x / 2 + noise: a generator's options are its keyword arguments."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, size=n)
    return pd.DataFrame({"x": x, "y": x / 2 + 0.1 * rng.normal(size=n)})


@figure("my_hist", summary=lambda df, metric="test_mse": f"{len(df)} runs")
def my_hist(df, title="", metric="test_mse"):
    """The metric's histogram per algorithm, on shared log-spaced bins."""
    values = df[metric].dropna()
    bins = np.geomspace(values.min(), values.max(), 30)
    fig, ax = plt.subplots()
    for name, runs in df.groupby("algorithm"):
        ax.hist(runs[metric].dropna(), bins=bins, alpha=0.6, label=name)
    ax.set(xscale="log", xlabel=metric, ylabel="runs", title=title)
    ax.legend()
    return fig
