"""dpbench.analyses.parallel_map: an analysis's independent fits on two processes give the numbers they give in one,
in the jobs' order, on one BLAS thread each (so the machine's cores change no number)."""

import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits

from dpbench.analyses import parallel_map


def gram_sum(seed: int, n: int) -> tuple[float, int]:
    """A BLAS product whose rounding depends on its thread count, and the BLAS threads it ran on."""
    X = np.random.default_rng(seed).normal(size=(n, 12))
    threads = max(p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas")
    return float((X.T @ X).sum()), threads


def test_two_processes_give_the_numbers_of_one_in_the_jobs_order():
    jobs = [(seed, 20_000 * (1 + seed % 3)) for seed in range(5)]
    on_two = parallel_map(gram_sum, jobs, cost=lambda job: job[1])  # the largest n first, results in jobs' order
    in_this = parallel_map(gram_sum, jobs, smoke=True)
    assert on_two == in_this
    with threadpool_limits(1):
        assert [value for value, _ in on_two] == [gram_sum(*job)[0] for job in jobs]  # each its own job's
    assert {threads for _, threads in on_two + in_this} == {1}
