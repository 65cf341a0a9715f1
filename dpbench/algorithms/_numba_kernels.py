"""numba versions of `kernels`' elementwise passes: one loop over a row block for all its runs, the numpy
functions' operations in their order (imported by `kernels` only when numba is used; see there).  Each loss has
its own kernel and each case its own inner loop, without branches, so the loops vectorize (a loss chosen inside
the loop ran 7x slower)."""

import numba
import numpy as np

_jit = numba.njit(cache=True, nogil=True, error_model="numpy", boundscheck=False)
_inline = numba.njit(inline="always", error_model="numpy")


@_inline
def _clip(v, tau):
    """np.clip(v, -tau, tau): NaN stays NaN."""
    if v > tau:
        return tau
    if v < -tau:
        return -tau
    return v


@_inline
def _squared(yi, v):
    return yi - v


@_inline
def _logistic(yi, v):
    return yi - 1 / (1 + np.exp(-v))  # scipy's expit


@_inline
def _hinge(yi, v):
    return yi if yi * v < 1 else 0 * yi  # (y s < 1) * y


@_inline
def _boosting(gradient, s, y, a, b, f, norms, inverse_tau, tau):
    """kernels.boosting_gradients on the (runs x rows) block s, in place (inverse_tau empty: one bound)."""
    runs, m = s.shape
    per_run = inverse_tau.shape[0] > 0
    for r in range(runs):
        row = s[r]
        if r < a:  # clipped runs: no row factor
            if per_run:
                it = inverse_tau[r]
                for i in range(m):
                    row[i] = _clip(gradient(y[i], row[i]) * it, tau)
            else:
                for i in range(m):
                    row[i] = _clip(gradient(y[i], row[i]), tau)
        else:  # mixed runs: their factors f[r - a]; unclipped runs: the norms
            factor = f[r - a] if r < b else norms
            if per_run:
                it = inverse_tau[r]
                for i in range(m):
                    c = factor[i]
                    row[i] = _clip(gradient(y[i], row[i] * c) * it, tau) * c
            else:
                for i in range(m):
                    c = factor[i]
                    row[i] = _clip(gradient(y[i], row[i] * c), tau) * c


@_jit
def boosting_squared(s, y, a, b, f, norms, inverse_tau, tau):
    _boosting(_squared, s, y, a, b, f, norms, inverse_tau, tau)


@_jit
def boosting_logistic(s, y, a, b, f, norms, inverse_tau, tau):
    _boosting(_logistic, s, y, a, b, f, norms, inverse_tau, tau)


@_jit
def boosting_hinge(s, y, a, b, f, norms, inverse_tau, tau):
    _boosting(_hinge, s, y, a, b, f, norms, inverse_tau, tau)


BOOSTING = {"squared": boosting_squared, "logistic": boosting_logistic, "hinge": boosting_hinge}


@_jit
def dpgd(r, y, bounds, norms):
    """kernels.clip_residuals on the (rows x runs) block r = X theta, in place."""
    m, runs = r.shape
    for i in range(m):
        row, yi, ni = r[i], y[i], norms[i]
        for j in range(runs):
            v = row[j] - yi
            c = abs(v)
            limit = bounds[j] / ni
            if c > limit:  # np.minimum: NaN stays NaN
                c = limit
            row[j] = np.copysign(c, v)
