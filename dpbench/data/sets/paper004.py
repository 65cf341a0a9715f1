"""Paper 004's (DP-ROBGD) Sec. 5.1 design, the generator `paper004_synthetic`.

d = 10, w* uniform on the unit sphere, x ~ N(0, Sigma) with Sigma = diag(kappa, 1, ..., 1) projected to the unit
sphere, z ~ U[-sigma, sigma], y = <x, w*> + z; a fraction `fraction` of the training labels (random rows) set to
1000 (Sec. 5.2).  The test rows, drawn after the training rows, are clean.  The loaded dataset's `extra` holds
w* ('coef') and S = E[x x^T] of the projected covariates ('second_moment'), the paper's metric ||w - w*||_S^2.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pandas as pd

from dpbench.data.preprocess import Schema
from dpbench.data.registry import dataset

D = 10
CORRUPT_LABEL = 1000.0


def _check(n_train, n_test, kappa, sigma, fraction):
    for name, v, low in (("n_train", n_train, 1), ("n_test", n_test, 0)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or int(v) != v or v < low:
            raise ValueError(f"{name} must be an integer >= {low}, got {v!r}")
    if not isinstance(kappa, (int, float)) or not kappa > 0:
        raise ValueError(f"kappa must be a number > 0, got {kappa!r}")
    if not isinstance(sigma, (int, float)) or not sigma >= 0:
        raise ValueError(f"sigma must be a number >= 0, got {sigma!r}")
    if not isinstance(fraction, (int, float)) or not 0 <= fraction <= 1:
        raise ValueError(f"fraction must be a number in [0, 1], got {fraction!r}")


@functools.cache
def second_moment(kappa: float) -> np.ndarray:
    """S = E[x x^T] of the projected covariates (Monte Carlo, 2e6 draws, fixed seed; exact I/d at kappa = 1)."""
    if kappa == 1.0:
        S = np.eye(D) / D
        S.flags.writeable = False
        return S
    rng = np.random.default_rng(12345)
    acc = np.zeros((D, D))
    for _ in range(4):
        X = rng.normal(size=(500_000, D))
        X[:, 0] *= math.sqrt(kappa)
        X /= np.linalg.norm(X, axis=1, keepdims=True)
        acc += X.T @ X
    S = acc / 2_000_000
    S.flags.writeable = False  # cached and shared
    return S


@dataset("paper004_synthetic", split="official", schema=Schema(label="y"), check=_check,
         title="Sec. 5.1 design (paper 004)")
def paper004_synthetic(n_train: int = 100_000, n_test: int = 10_000, kappa: float = 1.0, sigma: float = 1.0,
                       fraction: float = 0.0, seed: int = 0) -> pd.DataFrame:
    """One seeded draw: x0..x9, y, split (training rows first); w* and S in `attrs['extra']`."""
    _check(n_train, n_test, kappa, sigma, fraction)
    rng = np.random.default_rng(np.random.SeedSequence([4, seed, n_train, int(kappa * 1000), int(sigma * 1e4)]))
    w = rng.normal(size=D)
    w /= np.linalg.norm(w)
    scale = np.ones(D)
    scale[0] = math.sqrt(kappa)

    def rows(n):
        X = rng.normal(size=(n, D)) * scale
        X /= np.linalg.norm(X, axis=1, keepdims=True)
        return X, X @ w + rng.uniform(-sigma, sigma, size=n)

    X, y = rows(n_train)
    if fraction:
        y[rng.choice(n_train, int(round(fraction * n_train)), replace=False)] = CORRUPT_LABEL
    X_test, y_test = rows(n_test)
    frame = pd.DataFrame(np.vstack([X, X_test]), columns=[f"x{i}" for i in range(D)])
    frame["y"] = np.concatenate([y, y_test])
    frame["split"] = np.repeat(["train", "test"], [n_train, n_test])
    frame.attrs["extra"] = {"coef": w, "second_moment": second_moment(kappa)}
    return frame
