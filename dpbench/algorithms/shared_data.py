"""Work shared by the runs of one unit (one loaded dataset): feature maps, Gram matrices, their eigenvalues.

A `SharedData` is made per (dataset, split) by the runner and handed to the
algorithms' batched fits.  It only caches exact functions of the data that
every run would compute identically (the clipped features per x_bound,
X^T X and lambda_min(X^T X) per feature map, X^T clip(y) per label bound),
so a batched run releases exactly what the run alone would.  It is never
shared across units.  It keeps the statistics of the MAX_FEATURE_MAPS most
recently used feature maps (an n x d copy each): a tuning study that tries
hundreds of clip bounds on one unit does not hold hundreds of copies.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from dpbench.algorithms.base import add_intercept_column, row_norms
from dpbench.algorithms.linear_algebra import min_eigenvalue

BLOCK_FLOATS = 1 << 16  # numbers in the row blocks of X and of an (n x runs) matrix: 512 kB, stay in cache
MAX_FEATURE_MAPS = 4  # feature maps (and their statistics) kept per SharedData, least recently used dropped


class SharedData:
    """Cached statistics of one design matrix X (and labels y)."""

    def __init__(self, X: np.ndarray, y: np.ndarray | None = None):
        self.X, self.y = X, y
        self._maps: OrderedDict = OrderedDict()  # (fit_intercept, x_bound) -> {statistic key: value}

    def _get(self, key, compute):
        """key = (statistic, fit_intercept, x_bound, ...): cached under its feature map, most recent last."""
        stats = self._maps.setdefault((key[1], key[2]), {})
        self._maps.move_to_end((key[1], key[2]))
        if key not in stats:
            stats[key] = compute()
            while len(self._maps) > MAX_FEATURE_MAPS:
                self._maps.popitem(last=False)
        return stats[key]

    def features(self, fit_intercept: bool, x_bound: float | None, dtype=np.float64) -> np.ndarray:
        """phi(X): the intercept column when asked, then row clipping at x_bound (None: no clipping); `dtype`
        float32: a float32 copy of it (for products in float32)."""
        if np.dtype(dtype) != np.float64:
            return self._get(("features", bool(fit_intercept), x_bound, np.dtype(dtype).name),
                             lambda: self.features(fit_intercept, x_bound).astype(dtype))

        def compute():
            if x_bound is None:
                return add_intercept_column(self.X) if fit_intercept else self.X
            # clip_rows with the unclipped map's cached row norms: the same numbers, norms computed once
            return self.features(fit_intercept, None) * (x_bound / np.maximum(self.row_norms(fit_intercept, None),
                                                                               x_bound))[:, None]
        return self._get(("features", bool(fit_intercept), x_bound), compute)

    def gram(self, fit_intercept: bool, x_bound: float | None) -> np.ndarray:
        Phi = self.features(fit_intercept, x_bound)
        return self._get(("gram", bool(fit_intercept), x_bound), lambda: Phi.T @ Phi)

    def min_eigenvalue(self, fit_intercept: bool, x_bound: float | None) -> float:
        gram = self.gram(fit_intercept, x_bound)
        return self._get(("min_eig", bool(fit_intercept), x_bound), lambda: min_eigenvalue(gram))

    def xty(self, fit_intercept: bool, x_bound: float | None, y_bound: float) -> np.ndarray:
        """phi(X)^T clip(y, y_bound)."""
        Phi = self.features(fit_intercept, x_bound)
        return self._get(("xty", bool(fit_intercept), x_bound, y_bound),
                         lambda: Phi.T @ np.clip(self.y, -y_bound, y_bound))

    def row_norms(self, fit_intercept: bool, x_bound: float | None) -> np.ndarray:
        Phi = self.features(fit_intercept, x_bound)
        return self._get(("row_norms", bool(fit_intercept), x_bound), lambda: row_norms(Phi))

    def rows_by_norm(self, fit_intercept: bool, dtype=np.float64) -> RowsByNorm:
        """The unclipped phi(X)'s rows sorted by norm, divided by it: clipping at C then leaves a prefix of rows
        unscaled and scales the rest to norm C, so runs with different bounds share products on one matrix with
        per-run constants (`boosting.RoundSums`)."""
        def compute():
            norms = self.row_norms(fit_intercept, None)
            order = np.argsort(norms, kind="stable")
            inverse = np.divide(1.0, norms[order], out=np.zeros(len(order)), where=norms[order] > 0)
            unit = (self.features(fit_intercept, None)[order] * inverse[:, None]).astype(dtype, copy=False)
            return RowsByNorm(order, unit, norms[order])
        return self._get(("rows_by_norm", bool(fit_intercept), None, np.dtype(dtype).name), compute)


@dataclass(frozen=True)
class RowsByNorm:
    order: np.ndarray  # row i here is row order[i] of phi(X)
    unit: np.ndarray  # phi(X)[order] / norms: rows of norm 1 (rows of norm 0 stay 0)
    norms: np.ndarray  # ||phi(x)|| in that order, ascending (float64)


def row_blocks(n: int, runs: int, features: int = 0):
    """Slices of rows such that a (rows x runs) block and the block of X (rows x features) together hold about
    BLOCK_FLOATS numbers: both stay in cache from one product to the next, so X is read from memory once per
    round (float32 blocks of as many numbers measured as fast as larger ones)."""
    step = max(1, BLOCK_FLOATS // max(1, runs + features))
    return [slice(a, min(a + step, n)) for a in range(0, n, step)]
