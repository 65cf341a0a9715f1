"""The one shape every dataset takes once loaded and preprocessed."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


class MissingDataError(RuntimeError):
    """A dataset is not available locally; the message is one line saying where we looked and how to get it."""


class EmptyDataError(ValueError):
    """A dataset with no row to fit: it has none, or none without a missing value (such rows are dropped)."""


@dataclass
class Dataset:
    """A preprocessed train/test split, ready for any algorithm.

    X are float64 design matrices after encoding (one-hot columns included);
    `feature_types` has one entry per column of X ('continuous' or
    'nominal'), taken from the dataset's schema, never inferred from values.
    Classification labels are {0, 1}.  `extra`: what a generator knows beyond
    the rows (e.g. the true coefficients), for analyses that measure against it.
    """

    name: str
    task: str  # 'regression' or 'classification'
    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    feature_names: list[str] = field(default_factory=list)
    feature_types: list[str] = field(default_factory=list)
    source: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def n_train(self) -> int:
        return int(self.X_train.shape[0])

    @property
    def n_test(self) -> int:
        return int(self.X_test.shape[0])

    @property
    def d(self) -> int:
        return int(self.X_train.shape[1])
