"""The synthetic linear model of paper 000 Sec. V and its three outlier settings.

    y = x^T w + z,  x ~ N(0, I_d),  z ~ N(0, 0.1)          (eq. 9, d = 10)

N(0, 0.1) is read as variance 0.1 (noise std sqrt(0.1)); w ~ N(0, I_d) is
drawn from the same seed.  A fraction `fraction` of the *training* rows is
corrupted; the test set is always clean (the frame's `split` column says which
rows are which):

- 'label'   (eq. 10): y_out = 10 x^T w + z
- 'feature' (eq. 11): x_out = 10 x, after the labels were drawn
- 'model'   (eq. 12): x_out ~ N(5, I), y_out = x_out^T (w + 5) + z
- 'none'

task='classification' thresholds the clean linear score: y = 1[x^T w + z > 0]
(labels {0, 1}); used by the small zoo experiment, not by any paper figure.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd

from dpbench.data.preprocess import Schema
from dpbench.data.registry import dataset

OUTLIERS = ("none", "label", "feature", "model")
NOISE_STD = math.sqrt(0.1)


def _check(outlier, fraction, n_train, n_test, d, task):
    if outlier not in OUTLIERS:
        raise ValueError(f"outlier must be one of {OUTLIERS}, got {outlier!r}")
    if not isinstance(fraction, (int, float)) or not 0 <= fraction <= 1:
        raise ValueError(f"fraction must be a number in [0, 1], got {fraction!r}")
    for name, v in (("n_train", n_train), ("n_test", n_test), ("d", d)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or int(v) != v or v < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
    if task not in ("regression", "classification"):
        raise ValueError(f"task must be 'regression' or 'classification', got {task!r}")


def synthetic_label(outlier="label", fraction=0.05, n_train=10_000, n_test=2_000, d=10, task="regression") -> str:
    """Name of a synthetic setting as it appears in results (`synthetic_options` reads it back)."""
    label = f"synthetic_{outlier}_p{fraction:g}_n{n_train}_d{d}"
    return label + ("_clf" if task == "classification" else "")


_LABEL = re.compile(r"^synthetic_(?P<outlier>[a-z]+)_p(?P<fraction>[^_]+)_n(?P<n_train>\d+)_d(?P<d>\d+)(?P<clf>_clf)?$")


def synthetic_options(label: str) -> dict | None:
    """The options a `synthetic_label` name was made from (all but n_test); None for another name.  Declared
    beside the format it reads, so figures get a setting's corruption and fraction from the registry."""
    m = _LABEL.match(label)
    if m is None:
        return None
    return {"outlier": m["outlier"], "fraction": float(m["fraction"]), "n_train": int(m["n_train"]), "d": int(m["d"]),
            "task": "classification" if m["clf"] else "regression"}


@dataset("synthetic", split="official", schema=Schema(label="y"), label=synthetic_label, options_of=synthetic_options,
         check=_check)
def synthetic(outlier: str = "label", fraction: float = 0.05, n_train: int = 10_000, n_test: int = 2_000,
              d: int = 10, task: str = "regression", seed: int = 0) -> pd.DataFrame:
    """One seeded draw of the paper 000 model: x0..x{d-1}, y, split (train rows first, `fraction` outliers)."""
    _check(outlier, fraction, n_train, n_test, d, task)
    rng = np.random.default_rng(np.random.SeedSequence([seed, 9]))
    w = rng.normal(size=d)
    X = rng.normal(size=(n_train + n_test, d))
    y = X @ w + rng.normal(0.0, NOISE_STD, size=n_train + n_test)
    n_out = int(round(fraction * n_train))
    out = rng.choice(n_train, size=n_out, replace=False)
    if outlier == "label":
        y[out] = 10 * (X[out] @ w) + rng.normal(0.0, NOISE_STD, size=n_out)
    elif outlier == "feature":
        X[out] *= 10
    elif outlier == "model":
        X[out] = rng.normal(5.0, 1.0, size=(n_out, d))
        y[out] = X[out] @ (w + 5) + rng.normal(0.0, NOISE_STD, size=n_out)
    if task == "classification":
        y = (y > 0).astype(float)
    frame = pd.DataFrame(X, columns=[f"x{i}" for i in range(d)])
    frame["y"] = y
    frame["split"] = np.repeat(["train", "test"], [n_train, n_test])
    return frame
