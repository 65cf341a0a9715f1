"""Small numerical helpers shared by the sufficient-statistics algorithms."""

from __future__ import annotations

import numpy as np
import scipy.linalg


def solve_psd(A: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Solve A x = b for a (noisy, hence possibly indefinite or singular) symmetric A.

    Cholesky when A is positive definite, otherwise a least-squares solve
    (the minimum-norm solution when A is singular).
    """
    if A.shape[0] == 0:
        return np.zeros((0,) + b.shape[1:])
    try:
        return scipy.linalg.cho_solve(scipy.linalg.cho_factor(A, check_finite=False), b, check_finite=False)
    except np.linalg.LinAlgError:
        return np.linalg.lstsq(A, b, rcond=None)[0]


def inverse_psd(A: np.ndarray) -> np.ndarray:
    """(A)^{-1} via solve_psd; pseudo-inverse when A is singular."""
    return solve_psd(A, np.eye(A.shape[0]))


def min_eigenvalue(A: np.ndarray) -> float:
    """Smallest eigenvalue of a symmetric matrix (0 for the empty matrix)."""
    if A.shape[0] == 0:
        return 0.0
    return float(scipy.linalg.eigvalsh(A, subset_by_index=[0, 0], check_finite=False)[0])
