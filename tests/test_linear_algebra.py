"""Solvers for noisy (possibly indefinite or singular) symmetric matrices."""

import numpy as np
import pytest

from dpbench.algorithms.linear_algebra import inverse_psd, min_eigenvalue, solve_psd


def test_positive_definite_matches_numpy():
    rng = np.random.default_rng(0)
    A = rng.normal(size=(6, 6))
    A = A @ A.T + np.eye(6)
    b = rng.normal(size=(6, 2))
    np.testing.assert_allclose(solve_psd(A, b), np.linalg.solve(A, b), rtol=1e-10)
    np.testing.assert_allclose(inverse_psd(A) @ A, np.eye(6), atol=1e-10)
    assert min_eigenvalue(A) == pytest.approx(np.linalg.eigvalsh(A)[0], rel=1e-10)


def test_indefinite_and_singular_give_the_least_squares_solution():
    A = np.diag([2.0, -1.0, 0.0])  # a noisy Gram matrix can be both
    b = np.array([2.0, 3.0, 5.0])
    np.testing.assert_allclose(solve_psd(A, b), [1.0, -3.0, 0.0], atol=1e-12)  # minimum norm: 0 on the null space
    assert min_eigenvalue(A) == pytest.approx(-1.0)


def test_empty_matrix():
    assert solve_psd(np.zeros((0, 0)), np.zeros(0)).shape == (0,)
    assert min_eigenvalue(np.zeros((0, 0))) == 0.0
