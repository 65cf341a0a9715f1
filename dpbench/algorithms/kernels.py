"""The elementwise passes of the batched fits, fused into one compiled loop when numba is installed.

A batched fit's round is, per row block, two matrix products (X_b Theta, then G^T X_b: BLAS, shared by all the
runs) and between them elementwise work on the (rows x runs) block: BoostedAdaSSP's row factors, negative
gradient, clip and row factors again (`boosting.RoundSums`), DP-GD's residual and its clip
(`gradient_descent.clipped_gradient_sum`).  numpy does each step as a pass over the block (five or six passes);
with numba installed (the optional `fast` extra: `pip install 'dpbench[fast]'`) one loop does all of them in one
pass over it, about 1.6x less CPU per run and round on SGEMM's fit part at 150 runs (the products' own cost is
most of what is left).  The numpy functions here are the reference and the default when numba is absent; the
compiled ones do the same operations in the same order, so they give the same numbers (bitwise in float64; the
test allows the logistic loss an ulp, numba's exp need not be numpy's: tests/algorithms/test_kernels.py), and
the batched fits equal each fit alone either way.

`DPBENCH_KERNELS=numpy` in the environment (or `use("numpy")`) keeps numba out; "numba" insists on it (an error
when it is not installed); unset: numba when importable.  The first call in a process imports numba and compiles
the loop it needs (about 1 CPU second) or loads it from numba's cache on disk (beside this module, else the user's
cache directory: about 0.4 CPU seconds with numba's import).
"""

from __future__ import annotations

import contextlib
import os

import numpy as np
from scipy.special import expit

BACKENDS = ("numpy", "numba")
LOSSES = ("squared", "logistic", "hinge")
_EMPTY = {np.dtype(np.float64): (np.empty(0), np.empty((0, 0))),
          np.dtype(np.float32): (np.empty(0, np.float32), np.empty((0, 0), np.float32))}
_state = {"backend": None, "compiled": None}


def numba_available() -> bool:
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


def backend() -> str:
    """The backend in use: DPBENCH_KERNELS (numpy or numba) if set, else numba when it is installed."""
    if _state["backend"] is None:
        choice = os.environ.get("DPBENCH_KERNELS", "").strip().lower()
        if choice and choice not in BACKENDS:
            raise ValueError(f"DPBENCH_KERNELS must be one of {BACKENDS}, got {choice!r}")
        _state["backend"] = choice or ("numba" if numba_available() else "numpy")
        if _state["backend"] == "numba" and not numba_available():
            raise ImportError("DPBENCH_KERNELS=numba but numba is not installed: pip install 'dpbench[fast]'")
    return _state["backend"]


@contextlib.contextmanager
def use(name: str):
    """Run the batched fits with the kernels of `name` ('numpy' or 'numba') inside the block."""
    if name not in BACKENDS:
        raise ValueError(f"kernel backend must be one of {BACKENDS}, got {name!r}")
    if name == "numba" and not numba_available():
        raise ImportError("numba is not installed: pip install 'dpbench[fast]'")
    before, _state["backend"] = _state["backend"], name
    try:
        yield
    finally:
        _state["backend"] = before


# ---- BoostedAdaSSP: the runs' clipped negative gradients of one row block ----

def boosting_gradients(s: np.ndarray, y: np.ndarray, loss: str, a: int, b: int, f, norms, inverse_tau, tau) -> None:
    """Overwrite the scores s (runs x rows, C order; the products of unit rows for runs [a:], of clipped rows
    for runs [:a]) of one row block with each run's row-scaled clipped negative gradient (`boosting.RoundSums`):
    runs [a:b] ('mixed') scale row i's score by f[r - a, i] and runs [b:] ('unclipped') by norms[i], before the
    gradient and again after the clip; g = negative_gradient(loss, y, score), times inverse_tau[r] when given
    (None: one bound for all runs), clipped to [-tau, tau].  f is None when a == b; norms is None when b == runs."""
    boosting_pass(loss, s.dtype)(s, y, a, b, f, norms, inverse_tau, tau)


def boosting_pass(loss: str, dtype):
    """`boosting_gradients` for `loss` on blocks of `dtype`, the backend and the loss's loop looked up once (a round
    has hundreds of blocks): a function (s, y, a, b, f, norms, inverse_tau, tau) -> None."""
    if loss not in LOSSES:
        raise ValueError(f"loss must be one of {LOSSES}, got {loss!r}")
    if backend() == "numpy":
        return lambda s, y, a, b, f, norms, inverse_tau, tau: _numpy_gradients(s, y, loss, a, b, f, norms,
                                                                              inverse_tau, tau)
    kernel, (vector, matrix), scalar = _compiled().BOOSTING[loss], _EMPTY[np.dtype(dtype)], np.dtype(dtype).type

    def numba_pass(s, y, a, b, f, norms, inverse_tau, tau):
        if s.size:
            kernel(s, y, a, b, matrix if f is None else f, vector if norms is None else norms,
                   vector if inverse_tau is None else inverse_tau, scalar(tau))
    return numba_pass


def _numpy_gradients(s, y, loss, a, b, f, norms, inverse_tau, tau):
    """numpy's passes (the reference): row factors, gradient, 1 / tau_r, clip, row factors."""
    _scale(s, a, b, f, norms)
    negative_gradient_into(loss, y, s)
    if inverse_tau is not None:
        s *= inverse_tau[:, None]
    np.clip(s, -tau, tau, out=s)
    _scale(s, a, b, f, norms)


def _scale(s, a, b, f, norms):
    """The row factors of the block's mixed runs [a:b] and unclipped runs [b:] (the norms)."""
    if f is not None:
        s[a:b] *= f
    if b < len(s):
        s[b:] *= norms


def negative_gradient_into(loss: str, y: np.ndarray, s: np.ndarray) -> np.ndarray:
    """boosting.negative_gradient(loss, y, s) written over s (no temporaries); the same numbers."""
    if loss == "squared":
        return np.subtract(y, s, out=s)
    if loss == "logistic":
        return np.subtract(y, expit(s, out=s), out=s)
    if loss == "hinge":  # 1 - y s > 0 exactly when y s < 1
        return np.multiply(np.less(np.multiply(y, s, out=s), 1.0, out=s), y, out=s)
    raise ValueError(f"loss must be one of {LOSSES}, got {loss!r}")


# ---- DP-GD: the runs' clipped residuals of one row block ----

def clip_residuals(r: np.ndarray, y: np.ndarray, bound, norms: np.ndarray) -> np.ndarray:
    """Overwrite the scores r = X theta (rows, or rows x runs, C order) with c = sign(r - y) min(|r - y|,
    bound / ||x_i||), `gradient_descent.clipped_gradient_sum`'s clipped residuals (bound: a number, or one per
    run); an overflowing residual is +-inf and clips, inf - inf stays NaN (the caller zeroes it).  Returns r."""
    if r.ndim == 2 and r.size and backend() == "numba":
        bounds = np.asarray(bound, dtype=r.dtype)
        _compiled().dpgd(r, y, bounds if bounds.ndim else np.full(r.shape[1], bounds), norms)
        return r
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        if r.ndim == 2:
            y, norms = y[:, None], norms[:, None]
        r -= y
        c = np.abs(r)
        np.minimum(c, bound / norms, out=c)
        return np.copysign(c, r, out=r)


def _compiled():
    """The numba kernels (`_numba_kernels`, imported on first use: numba compiles them or loads its cache)."""
    if _state["compiled"] is None:
        from dpbench.algorithms import _numba_kernels

        _state["compiled"] = _numba_kernels
    return _state["compiled"]
