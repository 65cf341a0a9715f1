"""Fixtures shared by every test directory: well-scaled linear data, and the data mirror.

The mirror (the read-only directory of real datasets: DPBENCH_DATA_DIR, else ../shared/data beside the
repository) is looked up here, once: a test that needs it takes the `mirror` fixture (or is marked
`@pytest.mark.usefixtures("mirror")`) and is skipped, with one reason, without it; a test that runs either
way takes `data_dir` (None without a mirror).  Tests of the lookup itself (`catalog.resolve_data_dir`) call
it directly.
"""

from pathlib import Path

import numpy as np
import pytest

from dpbench.data import catalog

NO_MIRROR = "no data mirror (set DPBENCH_DATA_DIR or provide ../shared/data)"


@pytest.fixture
def linear_data():
    """Well-scaled linear data: rows inside the unit ball, |y| < 1, noise std 0.01."""
    rng = np.random.default_rng(123)
    n, d = 50_000, 5
    X = rng.normal(size=(n, d)) / (2 * np.sqrt(d))
    w = rng.uniform(-1, 1, size=d)
    y = X @ w + rng.normal(0, 0.01, size=n)
    return X, y, w


@pytest.fixture(scope="session")
def data_dir() -> Path | None:
    """The data mirror's directory, or None when there is none (for tests that run either way)."""
    root = catalog.resolve_data_dir()
    return root if root is not None and root.is_dir() else None


@pytest.fixture(scope="session")
def mirror(data_dir) -> Path:
    """The data mirror's directory; the test is skipped without one."""
    if data_dir is None:
        pytest.skip(NO_MIRROR)
    return data_dir
