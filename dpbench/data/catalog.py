"""Finding and loading a registered dataset: mirror directory, OpenML, generator; encoding; the train/test split.

The mirror directory is resolved once, by the entry point (`resolve_data_dir`:
$DPBENCH_DATA_DIR, else the config's data.dir, else ../shared/data beside the
repository if it exists), and passed down: nothing below it reads the
environment, so a worker loads from the directory the sweep resolved.

Where a file-backed dataset comes from, in this order:
1. the mirror file (`mirror_path`), read in place;
2. for OpenML tasks, the `openml` package and its own cache (downloads unless
   DPBENCH_OFFLINE=1, see openml_source).
Otherwise loading raises MissingDataError with one line saying which dataset,
where it looked and the command that fetches it.

Splits (`split`): 'fixed' is the authors' train_test_split(test_size=0.2,
random_state=42) for every seed; 'per_seed' uses random_state=split_seed; both
stratified for classification.  Datasets with an official test part (the
LIBSVM files, generated data) always use it; 'paper' trains on it too (cod-rna,
see data/sets/classification.py).  Datasets declared with split policy 'all'
(paper 003's, which its paper fits and scores on every row) train on every row
in every mode, with an empty test part.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

import numpy as np
import pandas as pd

from dpbench.data.base import Dataset, EmptyDataError, MissingDataError
from dpbench.data.preprocess import FIXED_SPLIT_SEED, Encoded, encode, split_indices
from dpbench.data.registry import DatasetSpec, available, get_spec
from dpbench.data.sources import DATA_DIR_ENV

REPO_MIRROR = Path(__file__).resolve().parents[2].parent / "shared" / "data"  # ../shared/data beside the repo
SPLIT_MODES = ("fixed", "per_seed")  # an experiment's split: one train/test split for all seeds, or one per seed
SPLIT_OPTIONS = (*SPLIT_MODES, "paper")  # a dataset's `split` option: a mode, or its paper's own split (cod-rna)
SPLIT_COLUMN = "split"  # the column of a raw frame that marks an official test part


def resolve_data_dir(configured: str | os.PathLike | None = None) -> Path | None:
    """The mirror directory: $DPBENCH_DATA_DIR, else `configured` (data.dir), else ../shared/data if it exists.

    Called once, by the entry point; everything below takes the result as an argument.
    """
    value = os.environ.get(DATA_DIR_ENV) or configured
    if value:
        return Path(value).expanduser()
    return REPO_MIRROR if REPO_MIRROR.is_dir() else None


def mirror_path(name: str, root: Path | None) -> Path | None:
    """Where the mirror file of a dataset would be (None without a mirror directory, for generated data or for
    data no source provides)."""
    spec = get_spec(name)
    if root is None or spec.generated or spec.source.folder is None:
        return None
    return Path(root) / spec.source.folder / spec.source.file_name(spec)


def _looked(name: str, root: Path | None) -> str:
    path = mirror_path(name, root)
    if path is not None:
        return f"no {path}"
    if get_spec(name).source.folder is None:
        return "not in the mirror"
    return f"no data directory ({DATA_DIR_ENV} / data.dir unset)"


def availability(name: str, root: Path | None) -> tuple[str, str]:
    """('mirror' | 'openml_cache' | 'generated' | 'missing', location or reason); no network."""
    spec = get_spec(name)
    if spec.generated:
        return "generated", spec.source.describe()
    path = mirror_path(name, root)
    if path is not None and path.is_file():
        return "mirror", str(path)
    cached = spec.source.cached_file()
    if cached is not None:
        return "openml_cache", str(cached)
    return "missing", _looked(name, root) + spec.source.not_cached()


def encode_frame(spec: DatasetSpec, frame: pd.DataFrame, options: dict | None = None) -> Encoded:
    """A raw frame of `spec` -> X, y (and the official test rows), as its `prepare`, schema and split policy say."""
    if spec.prepare is not None:
        frame = spec.prepare(frame)
    split_column = SPLIT_COLUMN if spec.split == "official" else None
    try:
        return encode(frame, spec.schema, spec.task_for(options or {}), split_column)
    except EmptyDataError as exc:
        raise EmptyDataError(f"dataset {spec.label_for(options or {})!r} {exc}") from None


@functools.lru_cache(maxsize=8)
def _encoded(name: str, path: str | None, looked: str) -> tuple[Encoded, str]:
    """Read and encode a whole dataset once per process (the expensive part a sweep must not repeat)."""
    spec = get_spec(name)
    if path is not None:
        frame, where = pd.read_parquet(path), f"mirror {path}"
    else:
        frame, where = spec.source.fetch()
        if frame is None:
            title = f" ({spec.title})" if spec.title and spec.title != name else ""
            reason = f"; {where}" if where else ""
            hint = spec.source.fetch_hint(spec)
            raise MissingDataError(f"dataset {name}{title} is missing: {looked}{reason}; {hint}")
    return encode_frame(spec, frame), where


def encoded(name: str, root: Path | None) -> tuple[Encoded, str]:
    """The encoded whole file-backed dataset (cached) and where it came from; MissingDataError when it is nowhere."""
    path = mirror_path(name, root)
    return _encoded(name, str(path) if path is not None and path.is_file() else None, _looked(name, root))


def split_rows(spec: DatasetSpec, enc: Encoded, split: str = "fixed", split_seed: int = FIXED_SPLIT_SEED):
    """Train and test row indices of an encoded dataset (see the module docstring)."""
    if split not in SPLIT_OPTIONS:
        raise ValueError(f"split must be one of {SPLIT_OPTIONS}, got {split!r}")
    if split == "paper" and spec.paper_split != "paper":
        raise ValueError(f"split='paper' (train and test on the official test part) exists only for "
                         f"{', '.join(n for n in available() if get_spec(n).paper_split == 'paper')}, not {spec.name}")
    if spec.split == "all":
        return np.arange(len(enc.y)), np.arange(0)
    if enc.test_mask is not None:
        test = np.flatnonzero(enc.test_mask)
        return (test if split == "paper" else np.flatnonzero(~enc.test_mask)), test
    if split == "per_seed" and (
        isinstance(split_seed, bool) or not isinstance(split_seed, (int, np.integer)) or split_seed < 0
    ):
        raise ValueError(f"split_seed must be an integer >= 0, got {split_seed!r}")
    seed = FIXED_SPLIT_SEED if split == "fixed" else int(split_seed)
    return split_indices(enc.y, seed, stratify=spec.task == "classification")


def load(name: str, root: Path | None = None, split_seed: int = FIXED_SPLIT_SEED, split: str = "fixed",
         **options) -> Dataset:
    """A preprocessed train/test split.  Generators draw from `split_seed` with `options`; files come from `root`."""
    spec = get_spec(name)
    if split not in SPLIT_OPTIONS:
        raise ValueError(f"split must be one of {SPLIT_OPTIONS}, got {split!r}")
    extra = {}
    if spec.generated:
        frame = spec.source.make(seed=split_seed, **options)
        extra = dict(frame.attrs.get("extra", {}))  # what the generator knows beyond the rows (e.g. true coefficients)
        enc = encode_frame(spec, frame, options)
        label, where = spec.label_for(options), f"{spec.source.describe()} (seed {split_seed})"
    else:
        if options:
            raise ValueError(f"dataset {name} takes no options besides split; got {sorted(options)}")
        (enc, where), label = encoded(name, root), name
    train, test = split_rows(spec, enc, split, split_seed)
    return Dataset(
        name=label,
        task=spec.task_for(options),
        X_train=enc.X[train],
        y_train=enc.y[train],
        X_test=enc.X[test],
        y_test=enc.y[test],
        feature_names=list(enc.feature_names),
        feature_types=list(enc.feature_types),
        source=where,
        extra=extra,
    )
