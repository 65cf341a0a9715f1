"""The one preprocessing every real dataset goes through: raw frame -> X, y -> train/test split.

It follows the authors' code (amazon-science/boostedadassp, run_regression.py /
run_classification.py): drop every row with a missing value, one-hot encode the
categorical columns with one column per observed level (sklearn's OneHotEncoder
default, k columns for k levels: the convention that reproduces paper 000
Table II's d), one-hot columns first and then the numeric ones (the authors'
ColumnTransformer order), no feature scaling, float64; then
train_test_split(test_size=0.2, random_state=42), stratified on the label for
classification.  Which columns are categorical comes from the schema (pandas
`category` dtype in the mirror files, OpenML's categorical indicator, or the
dataset's `Schema`), never from the values.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split

from dpbench.data.base import EmptyDataError

TEST_SIZE = 0.2
FIXED_SPLIT_SEED = 42  # the authors' train_test_split(random_state=42)


@dataclass(frozen=True)
class Encoded:
    """A whole dataset after encoding; arrays are read-only because they are cached and shared."""

    X: np.ndarray
    y: np.ndarray
    feature_names: tuple[str, ...]
    feature_types: tuple[str, ...]
    test_mask: np.ndarray | None = None  # rows of an official test part; None: split at random
    n_columns: int = 0  # feature columns before one-hot (paper 000 Table II's '# columns')


@dataclass(frozen=True)
class Schema:
    """How a raw frame becomes X, y.  The default reads the mirror layout of the OpenML tasks.

    `label`: the label column (None: the last column).  `positive`: the label value coded 1
    (classification only).  `categorical`: the columns to one-hot (None: those of pandas
    `category` dtype).  `indicator_features`: every feature is already a one-hot indicator
    (LIBSVM a9a binarises all 14 Adult attributes), so all are 'nominal'.  `fill_zero`: blanks
    that mean zero, filled before incomplete rows are dropped.
    """

    label: str | None = None
    positive: object = 1
    drop: tuple[str, ...] = ()
    categorical: tuple[str, ...] | None = None
    fill_zero: tuple[str, ...] = ()
    indicator_features: bool = False


def _levels(col: pd.Series) -> tuple[np.ndarray, list]:
    """Integer codes and the observed levels sorted by value (what OneHotEncoder's categories='auto' does)."""
    if isinstance(col.dtype, pd.CategoricalDtype):
        codes, cats = col.cat.codes.to_numpy(), col.cat.categories
        used = np.unique(codes)
        order = used[np.argsort(cats[used].to_numpy(), kind="stable")]
        lookup = np.empty(len(cats), dtype=np.intp)
        lookup[order] = np.arange(len(order))
        return lookup[codes], list(cats[order])
    codes, uniques = pd.factorize(col, sort=True)
    return codes, list(uniques)


def one_hot(frame: pd.DataFrame, categorical: Sequence[str]) -> tuple[np.ndarray, list[str], list[str]]:
    """Float64 design matrix: categorical columns one-hot (sorted observed levels), then the numeric ones."""
    absent = sorted(set(categorical) - set(frame.columns))
    if absent:
        raise ValueError(f"categorical columns {absent} are not in the data")
    categorical = [c for c in frame.columns if c in set(categorical)]
    numeric = [c for c in frame.columns if c not in set(categorical)]
    blocks, names, types = [], [], []
    for col in categorical:
        codes, levels = _levels(frame[col])
        block = np.zeros((len(frame), len(levels)))
        block[np.arange(len(frame)), codes] = 1.0
        blocks.append(block)
        names += [f"{col}={level}" for level in levels]
        types += ["nominal"] * len(levels)
    for col in numeric:
        try:
            blocks.append(frame[col].to_numpy(dtype=np.float64)[:, None])
        except (TypeError, ValueError):
            raise ValueError(f"column {col!r} is neither numeric nor declared categorical") from None
        names.append(str(col))
        types.append("continuous")
    X = np.hstack(blocks) if blocks else np.empty((len(frame), 0))
    return X, names, types


def _frozen(**arrays) -> dict:
    for a in arrays.values():
        if a is not None:
            a.flags.writeable = False
    return arrays


def encode(frame: pd.DataFrame, schema: Schema = Schema(), task: str = "regression",
           split_column: str | None = None) -> Encoded:
    """Raw frame -> X, y (regression: the float target; classification: labels {0, 1}); incomplete rows dropped.

    `split_column` marks the rows of an official test part ('test'); it becomes `test_mask`.
    """
    if schema.fill_zero:
        frame = frame.assign(**{c: frame[c].fillna(0.0) for c in schema.fill_zero})
    drop = [*schema.drop, *([split_column] if split_column else [])]
    split = frame[split_column].astype(str).to_numpy() if split_column else None
    keep = frame.drop(columns=drop).notna().all(axis=1).to_numpy()
    if not keep.any():
        raise EmptyDataError(_why_empty(frame.drop(columns=drop)))
    frame = frame.loc[keep]
    label = schema.label or [c for c in frame.columns if c not in drop][-1]
    if task == "regression":
        y = frame[label].to_numpy(dtype=np.float64)
    else:
        labels = frame[label].astype(object)
        values = set(labels.unique())
        if len(values) != 2 or schema.positive not in values:
            raise ValueError(f"label {label!r} must take two values, one of them {schema.positive!r}; got {values}")
        y = (labels == schema.positive).to_numpy(dtype=np.float64)
    features = frame.drop(columns=[label, *drop])
    categorical = schema.categorical
    if categorical is None:
        categorical = [c for c in features.columns if isinstance(features[c].dtype, pd.CategoricalDtype)]
    X, names, types = one_hot(features, categorical)
    if schema.indicator_features:
        types = ["nominal"] * len(types)
    test_mask = None if split is None else split[keep] == "test"
    return Encoded(**_frozen(X=X, y=y, test_mask=test_mask), feature_names=tuple(names),
                   feature_types=tuple(types), n_columns=features.shape[1])


def _why_empty(frame: pd.DataFrame) -> str:
    """Why a frame leaves no row to fit (encode drops the rows with a missing value)."""
    if not len(frame):
        return "has no rows"
    empty = [str(c) for c in frame.columns if frame[c].isna().all()]
    why = f"column(s) {', '.join(empty)} all NaN" if empty else "a missing value in each"
    return f"has no complete row of its {len(frame)}: {why} (rows with a missing value are dropped)"


def split_indices(y: np.ndarray, seed: int, stratify: bool) -> tuple[np.ndarray, np.ndarray]:
    """Row indices of train_test_split(test_size=0.2, random_state=seed): the same partition, row order
    included, as the authors' call on (X, y), since it depends only on n, y (if stratified) and the seed."""
    idx = np.arange(len(y))
    train, test = train_test_split(idx, test_size=TEST_SIZE, random_state=seed, stratify=y if stratify else None)
    return train, test
