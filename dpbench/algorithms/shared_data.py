"""Work shared by the runs of one unit (one loaded dataset): feature maps, Gram matrices, their eigenvalues.

A `SharedData` is made per (dataset, split) by the runner and handed to the
algorithms' batched fits.  It only caches exact functions of the data that
every run would compute identically (the clipped features per x_bound,
X^T X and lambda_min(X^T X) per feature map, X^T clip(y) per label bound),
so a batched run releases exactly what the run alone would (to rounding:
`clipped_statistics` computes many bounds' statistics in one pass without
their clipped copies).  It is never shared across units.  It keeps the n-sized
statistics of the MAX_FEATURE_MAPS most recently used feature maps (an n x d
copy each), the d-sized ones of every map: a tuning study that tries
hundreds of clip bounds on one unit does not hold hundreds of copies.
"""

from __future__ import annotations

import itertools
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
        self._maps: OrderedDict = OrderedDict()  # (fit_intercept, x_bound) -> {statistic key: n-sized value}
        self._small: dict = {}  # statistic key -> d-sized value (X^T X, lambda_min, X^T y): kept for every map

    def _get(self, key, compute):
        """key = (statistic, fit_intercept, x_bound, ...).  n-sized statistics are cached under their feature
        map, most recent last (MAX_FEATURE_MAPS kept); d-sized ones (SMALL) for every map."""
        if key[0] in SMALL:
            if key not in self._small:
                self._small[key] = compute()
            return self._small[key]
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
            return self.features(fit_intercept, None) * row_scale(self.row_norms(fit_intercept, None), x_bound)[:, None]
        return self._get(("features", bool(fit_intercept), x_bound), compute)

    def gram(self, fit_intercept: bool, x_bound: float | None) -> np.ndarray:
        def compute():
            Phi = self.features(fit_intercept, x_bound)
            return Phi.T @ Phi
        return self._get(("gram", bool(fit_intercept), x_bound), compute)

    def min_eigenvalue(self, fit_intercept: bool, x_bound: float | None) -> float:
        return self._get(("min_eig", bool(fit_intercept), x_bound),
                         lambda: min_eigenvalue(self.gram(fit_intercept, x_bound)))

    def xty(self, fit_intercept: bool, x_bound: float | None, y_bound: float) -> np.ndarray:
        """phi(X)^T clip(y, y_bound)."""
        def compute():
            return self.features(fit_intercept, x_bound).T @ np.clip(self.y, -y_bound, y_bound)
        return self._get(("xty", bool(fit_intercept), x_bound, y_bound), compute)

    def row_norms(self, fit_intercept: bool, x_bound: float | None) -> np.ndarray:
        Phi = self.features(fit_intercept, x_bound)
        return self._get(("row_norms", bool(fit_intercept), x_bound), lambda: row_norms(Phi))

    def clipped_statistics(self, fit_intercept: bool, bounds: list[tuple[float, float]]) -> None:
        """Cache `gram` and `xty` for every (x_bound, y_bound) in `bounds`, computed from the unclipped X
        without a clipped copy per x_bound (the runs of a tuning study each have their own bounds).

        Row clipping is a row scaling s_C,i = min(1, C / ||x_i||): a row with ||x_i|| <= C adds x_i x_i^T to
        X_C^T X_C and a row above adds C^2 u_i u_i^T (u_i = x_i / ||x_i||).  So with the rows grouped into the
        segments between consecutive bounds (by norm), each bound's Gram matrix is a sum of the segments'
        sums of x x^T below it plus C^2 times their sums of u u^T above it: 2 n d^2 work for any number of
        bounds.  X_C^T clip(y, tau) = X^T (s_C * clip(y, tau)): the distinct pairs' columns, one product per
        row block.  Equal to `gram` and `xty` up to rounding.  One x_bound (a fixed-mode batch) uses its clipped
        copy instead, which is faster for one bound and is reused to score the runs.
        """
        fit_intercept = bool(fit_intercept)
        if len({c for c, _ in bounds}) == 1:
            for c, tau in bounds:
                self.gram(fit_intercept, c), self.xty(fit_intercept, c, tau)
            return
        grams = sorted({c for c, _ in bounds if ("gram", fit_intercept, c) not in self._small})
        pairs = list(dict.fromkeys(p for p in bounds if ("xty", fit_intercept, *p) not in self._small))
        if not grams and not pairs:
            return
        X, norms = self.features(fit_intercept, None), self.row_norms(fit_intercept, None)
        if grams:
            segment = np.searchsorted(grams, norms).astype(np.min_scalar_type(len(grams)))  # rows <= grams[s]: s
            order = np.argsort(segment, kind="stable")  # a radix sort of small integers
            Xs, inside, outside = np.take(X, order, axis=0), [], []
            edges = np.cumsum([0, *np.bincount(segment, minlength=len(grams) + 1)])
            for s, (a, b) in enumerate(itertools.pairwise(edges)):
                # rows above every bound are never used unclipped (their products overflow for norms near 1e154)
                inside.append(Xs[a:b].T @ Xs[a:b] if s < len(grams) else np.zeros((X.shape[1],) * 2))
                if s:  # segment 0 (norms <= the smallest bound) is inside every bound
                    Xs[a:b] /= norms[order[a:b], None]
                outside.append(Xs[a:b].T @ Xs[a:b])
            below, above = np.cumsum(inside, axis=0), np.cumsum(outside[::-1], axis=0)[::-1]
            for j, c in enumerate(grams):
                self._small[("gram", fit_intercept, c)] = below[j] + c**2 * above[j + 1]
        if pairs:
            x_bounds, y_bounds = (np.array(v, dtype=float) for v in zip(*pairs, strict=True))
            xty = np.zeros((X.shape[1], len(pairs)))
            for rows in row_blocks(len(norms), len(pairs), X.shape[1]):
                w = np.maximum(np.minimum(self.y[rows, None], y_bounds), -y_bounds)  # clip(y, tau) per pair
                w *= row_scale(norms[rows, None], x_bounds)
                xty += X[rows].T @ w
            for j, p in enumerate(pairs):
                self._small[("xty", fit_intercept, *p)] = xty[:, j].copy()


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


SMALL = ("gram", "min_eig", "xty")  # d-sized statistics: kept for every feature map


def row_scale(norms: np.ndarray, x_bound):
    """min(1, C / ||x_i||) as clip_rows computes it: C / max(||x_i||, C)."""
    return x_bound / np.maximum(norms, x_bound)


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
