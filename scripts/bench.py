"""`make bench`: timings of the hot paths, printed as a table (never asserted in tests)."""

from __future__ import annotations

import tempfile
import time

import numpy as np

from dpbench import algorithms
from dpbench.privacy import mu_from_epsilon_delta


def best_of(fn, repeat=3):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    rng = np.random.default_rng(0)
    rows = []
    rows.append(("mu_from_epsilon_delta x100", best_of(lambda: [mu_from_epsilon_delta(e, 1e-6)
                                                                for e in np.geomspace(0.01, 20, 100)])))
    for n, d in [(20_000, 10), (200_000, 50)]:
        X = rng.normal(size=(n, d))
        y = X @ rng.normal(size=d) + rng.normal(size=n)
        for name in ["adassp", "boosted_adassp"]:
            est = algorithms.make(name, epsilon=1.0, random_state=0)
            rows.append((f"{name} fit n={n} d={d}", best_of(lambda est=est, X=X, y=y: est.fit(X, y))))
    from dpbench.runner.execute import run_sweep

    exp = {"name": "bench", "algorithms": ["boosted_adassp", "adassp", "ols"],
           "datasets": [{"name": "synthetic", "outlier": "label", "fraction": 0.05, "n_train": 10000,
                         "n_test": 2000, "d": 10}],
           "epsilons": [0.1, 0.5, 1.0, 2.0, 5.0], "deltas": [1e-6], "seeds": [0, 1, 2, 3, 4],
           "tuning_mode": "fixed", "split": "fixed"}
    for backend, n_jobs in [("sequential", 1), ("loky", 2)]:
        def sweep(backend=backend, n_jobs=n_jobs):
            with tempfile.TemporaryDirectory() as tmp:
                run_sweep(exp, {"backend": backend, "n_jobs": n_jobs, "progress": False}, tmp)
        rows.append((f"quickstart grid (55 runs), {backend} n_jobs={n_jobs}", best_of(sweep, repeat=1)))
    width = max(len(r[0]) for r in rows)
    for label, sec in rows:
        print(f"{label:<{width}}  {sec * 1000:10.1f} ms")


if __name__ == "__main__":
    main()
