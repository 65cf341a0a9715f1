import numpy as np
import pytest


@pytest.fixture
def linear_data():
    """Well-scaled linear data: rows inside the unit ball, |y| < 1, noise std 0.01."""
    rng = np.random.default_rng(123)
    n, d = 50_000, 5
    X = rng.normal(size=(n, d)) / (2 * np.sqrt(d))
    w = rng.uniform(-1, 1, size=d)
    y = X @ w + rng.normal(0, 0.01, size=n)
    return X, y, w
