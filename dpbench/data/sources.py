"""Where a dataset's raw frame comes from: an OpenML task, raw files a user downloads, or a generator
(or nowhere yet: `Unavailable`, a paper's dataset that is listed as missing with the reason).

File-backed datasets live in a mirror directory (the layout of ../shared/data)
as `<folder>/<file_name>` parquet files: `data import` writes them from the
source, loading reads them in place.  An OpenML task can also be read through
the `openml` package; raw files only through a mirror (`data import --from-raw`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np
import pandas as pd

from dpbench.data import openml_source

DATA_DIR_ENV = "DPBENCH_DATA_DIR"


@dataclass(frozen=True)
class OpenMLTask:
    """A task of the OpenML benchmark; mirror file openml/<task_id>.parquet (features, target last)."""

    task_id: int
    folder: ClassVar[str] = "openml"
    import_flag: ClassVar[str] = "--from-openml"

    def file_name(self, spec) -> str:
        return f"{self.task_id}.parquet"

    def manifest_key(self, spec) -> tuple[str, str]:
        return "task_id", str(self.task_id)

    def fetch_hint(self, spec) -> str:
        return (f"fetch it online with `python -m dpbench data import --from-openml --datasets {spec.name} "
                f"--out DIR` and set {DATA_DIR_ENV}=DIR")

    def cached_file(self) -> Path | None:
        return openml_source.cached_data_file(self.task_id)

    def not_cached(self) -> str:
        return f", not in the openml cache {openml_source.cache_dir()}"

    def fetch(self) -> tuple[pd.DataFrame | None, str]:
        """(frame, where from) from openml's cache or a download, or (None, why not)."""
        return openml_source.fetch_or_reason(self.task_id)


class NotDownloaded:
    """What a source without a download (nothing cached, nothing to fetch) answers the data layer."""

    def cached_file(self) -> Path | None:
        return None

    def not_cached(self) -> str:
        return ""

    def fetch(self) -> tuple[pd.DataFrame | None, str]:
        return None, ""


@dataclass(frozen=True)
class RawFiles(NotDownloaded):
    """Files a user downloads (LIBSVM, Kaggle CSV); mirror file classification/<name>.parquet.

    files: one tuple of accepted names per file (the first is canonical); read: paths -> raw frame.
    """

    files: tuple[tuple[str, ...], ...]
    read: Callable[[list[Path]], pd.DataFrame]
    folder: ClassVar[str] = "classification"
    import_flag: ClassVar[str] = "--from-raw"

    def file_name(self, spec) -> str:
        return f"{spec.name}.parquet"

    def manifest_key(self, spec) -> tuple[str, str]:
        return "name", spec.name

    def fetch_hint(self, spec) -> str:
        return (f"download {' + '.join(self.canonical())} from {spec.url} into RAW, run `python -m dpbench data "
                f"import --from-raw RAW --out DIR` and set {DATA_DIR_ENV}=DIR")

    def canonical(self) -> list[str]:
        return [names[0] for names in self.files]

    def find(self, raw_dir: Path) -> list[Path] | None:
        """The files in raw_dir (one per role), or None if one is absent."""
        found = []
        for candidates in self.files:
            hit = next((raw_dir / c for c in candidates if (raw_dir / c).is_file()), None)
            if hit is None:
                return None
            found.append(hit)
        return found


@dataclass(frozen=True)
class PaperCopy(NotDownloaded):
    """A paper's own copy of a dataset that the mirror's maintainers prepared (no import command): mirror file
    <folder>/<stem>.parquet (features, then the label), read in place.

    Its MANIFEST.csv row (name = stem) gives rows and features; its sha256 is the original file's, not the
    parquet's, so `data verify` does not compare it (the folder's README.md says how each file was made).
    """

    folder: str
    stem: str
    import_flag: ClassVar[str] = "from the data mirror's maintainers, no import command"
    manifest_sha256_of_file: ClassVar[bool] = False

    def file_name(self, spec) -> str:
        return f"{self.stem}.parquet"

    def manifest_key(self, spec) -> tuple[str, str]:
        return "name", self.stem

    def fetch_hint(self, spec) -> str:
        return f"copy the data mirror's {self.folder}/ folder (its README.md) and set {DATA_DIR_ENV}=DIR"


@dataclass(frozen=True)
class Unavailable(NotDownloaded):
    """A dataset a paper used that no source here can provide: listed, and reported missing with `reason`."""

    reason: str
    folder: ClassVar[None] = None  # no mirror file to look for
    import_flag: ClassVar[str] = "from no source yet"

    def fetch_hint(self, spec) -> str:
        return self.reason

    def not_cached(self) -> str:
        return f"; {self.reason}"


@dataclass(frozen=True)
class Generator:
    """Data drawn afresh from a seed: `make(seed=..., **options)` returns the raw frame.

    check(**options), if given, raises ValueError on bad option values without drawing anything (so a config
    can be checked before a sweep starts).
    """

    make: Callable[..., pd.DataFrame]
    check: Callable[..., None] | None = None

    def options(self) -> dict:
        """The generator's options and their defaults."""
        params = inspect.signature(self.make).parameters.values()
        return {p.name: p.default for p in params if p.name != "seed"}

    def describe(self) -> str:
        return f"drawn by {self.make.__module__}.{self.make.__name__} from each seed"


# ---------------------------------------------------------------- readers of raw files


def read_libsvm(paths: list[Path], n_features: int) -> pd.DataFrame:
    """LIBSVM train + test files -> f1..fp (float32), y (labels > 0 -> 1, else 0), split ('train'/'test')."""
    from sklearn.datasets import load_svmlight_files

    train, test = paths
    X_tr, y_tr, X_te, y_te = load_svmlight_files([str(train), str(test)], n_features=n_features, zero_based=False)
    frame = pd.DataFrame(
        np.vstack([X_tr.toarray(), X_te.toarray()]).astype(np.float32), columns=[f"f{j + 1}" for j in range(n_features)]
    )
    frame["y"] = (np.concatenate([y_tr, y_te]) > 0).astype(np.int8)
    frame["split"] = pd.Categorical(["train"] * len(y_tr) + ["test"] * len(y_te), categories=["test", "train"])
    return frame


def read_csv(paths: list[Path], sep: str = ",", ids: tuple[str, ...] = (), numeric: tuple[str, ...] = ()):
    """A CSV as published: text columns as category (`ids` kept as strings), `numeric` coerced (blanks -> NaN)."""
    frame = pd.read_csv(paths[0], sep=sep)
    frame.columns = [str(c).strip() for c in frame.columns]
    for col in numeric:
        frame[col] = pd.to_numeric(frame[col], errors="coerce")
    for col in frame.columns:
        text = pd.api.types.is_object_dtype(frame[col]) or pd.api.types.is_string_dtype(frame[col])
        if text and col not in ids:
            frame[col] = frame[col].astype("category")
    return frame
