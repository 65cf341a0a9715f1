"""Building and checking a data mirror (the layout of ../shared/data), for machines without internet.

Layout: openml/<task_id>.parquet (features, categoricals as pandas `category`
with string labels, the target last), classification/<name>.parquet (the
raw columns as published; LIBSVM sets as f1..fp float32, y in {0,1}, and a
`split` column train/test) and paper003/<name>.parquet (a paper's own copies,
prepared by the mirror's maintainers: sources.PaperCopy), each folder with a
MANIFEST.csv.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from dpbench.data import catalog
from dpbench.data.registry import DatasetSpec, available, get_spec
from dpbench.data.sources import OpenMLTask, RawFiles

OPENML_MANIFEST_COLUMNS = (
    "task_id",
    "name",
    "rows",
    "columns",
    "target",
    "categorical_columns",
    "max_abs_y",
    "nan_rows",
    "d_after_onehot",
    "matches_table",
    "source",
    "sha256",
)
CLASSIFICATION_MANIFEST_COLUMNS = (
    "name",
    "rows",
    "cols",
    "positive_rate",
    "label",
    "source_path",
    "bytes",
    "sha256",
    "matches_expected",
)


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


# ---------------------------------------------------------------- mirror frames


def mirror_layout(frame: pd.DataFrame, categorical) -> pd.DataFrame:
    """Categorical columns with string labels (pyarrow would store integer-valued categoricals as plain ints)."""
    frame = frame.copy()
    for col, is_cat in zip(frame.columns[:-1], categorical, strict=True):
        if is_cat:
            cat = frame[col] if isinstance(frame[col].dtype, pd.CategoricalDtype) else frame[col].astype("category")
            frame[col] = cat.cat.rename_categories([str(c) for c in cat.cat.categories])
    return frame


# ---------------------------------------------------------------- manifests


def read_manifest(folder: Path) -> pd.DataFrame:
    path = folder / "MANIFEST.csv"
    return pd.read_csv(path, dtype=str, keep_default_na=False) if path.is_file() else pd.DataFrame()


def _write_manifest(folder: Path, row: dict, key: str, columns) -> None:
    old = read_manifest(folder)
    row = {c: str(row.get(c, "")) for c in columns}
    if len(old) and key in old.columns:
        old = old[old[key] != row[key]]
    out = pd.concat([old, pd.DataFrame([row])], ignore_index=True)
    out.to_csv(folder / "MANIFEST.csv", index=False)


def _write_parquet(frame: pd.DataFrame, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".parquet.tmp")
    frame.to_parquet(tmp, compression="zstd", index=False)
    tmp.replace(path)


# ---------------------------------------------------------------- checks against the papers


def measure(spec: DatasetSpec, frame: pd.DataFrame) -> dict:
    """The numbers a paper reports, measured on a raw frame under the paper's split (`spec.paper_split`)."""
    enc = catalog.encode_frame(spec, frame)
    train, test = catalog.split_rows(spec, enc, spec.paper_split)
    return {
        "n": len(enc.y),
        "columns": enc.n_columns,
        "d": enc.X.shape[1],
        "true_bound": round(float(np.abs(enc.y).max()), 6) if len(enc.y) else math.nan,
        "train": len(train),
        "test": len(test),
        "positive_pct": math.floor(enc.y[train].mean() * 1e4 + 1e-6) / 100 if len(train) else math.nan,  # truncated
    }


def paper_check(name: str, frame: pd.DataFrame) -> list[str]:
    """Differences between a mirror frame and the paper's numbers ([] when it reproduces them)."""
    spec = get_spec(name)
    got = measure(spec, frame)
    return [f"{key} {got[key]} != paper {value}" for key, value in spec.paper.items()
            if not (got[key] == value or (isinstance(value, float) and math.isclose(got[key], value, abs_tol=1e-9)))]


def manifest_check(name: str, path: Path, frame: pd.DataFrame, manifest: pd.DataFrame) -> list[str]:
    """Differences between a mirror file and its MANIFEST.csv row (only the fields the manifest has)."""
    spec = get_spec(name)
    key, value = spec.source.manifest_key(spec)
    rows = manifest[manifest[key] == value] if key in manifest.columns else manifest.iloc[:0]
    if rows.empty:
        return ["no MANIFEST.csv row"]
    row = rows.iloc[-1]
    got = {"rows": str(len(frame)), "bytes": str(path.stat().st_size), "columns": str(frame.shape[1] - 1),
           "features": str(frame.shape[1] - 1), "cols": str(frame.shape[1])}
    # columns / features: feature columns (openml/ / paper003/), cols: all columns (classification/)
    problems = [f"{k} {v} != manifest {row[k]}" for k, v in got.items() if row.get(k, "") not in ("", v)]
    hashed = getattr(spec.source, "manifest_sha256_of_file", True)  # False: the original file's (PaperCopy)
    if hashed and row.get("sha256", "") and row["sha256"] != sha256(path):
        problems.append("sha256 differs from the manifest")
    return problems


@dataclass
class Check:
    name: str
    status: str  # 'ok', 'mismatch', 'missing' (not in the mirror: nothing to check)
    detail: str


def verify(root: Path) -> list[Check]:
    """Every file-backed dataset: its mirror file against MANIFEST.csv and against the paper's table."""
    checks, manifests = [], {}
    for name in available():
        spec = get_spec(name)
        if spec.generated:
            continue
        path = catalog.mirror_path(name, root)
        if path is None or not path.is_file():
            where = f"no {path}" if path is not None else catalog.availability(name, root)[1]
            checks.append(Check(name, "missing", f"{where} (not checked)"))
            continue
        if path.parent not in manifests:
            manifests[path.parent] = read_manifest(path.parent)
        frame = pd.read_parquet(path)
        problems = manifest_check(name, path, frame, manifests[path.parent]) + paper_check(name, frame)
        detail = "; ".join(problems) if problems else _summary(spec)
        checks.append(Check(name, "mismatch" if problems else "ok", detail))
    return checks


def _summary(spec: DatasetSpec) -> str:
    numbers = " ".join(f"{k}={v}" for k, v in spec.paper.items())
    if not numbers:
        return "manifest ok (no paper numbers to check)"
    note = " (trained and tested on the official test part, the paper's split)" if spec.paper_split == "paper" else ""
    return f"{numbers} as {spec.paper_table or 'recorded'}{note}; manifest ok"


# ---------------------------------------------------------------- import


def import_openml(name: str, out: Path) -> tuple[bool, str]:
    """Write one regression task from openml (its cache, or a download unless offline) into the mirror `out`."""
    spec = get_spec(name)
    if not isinstance(spec.source, OpenMLTask):
        return False, f"{name} is not an OpenML task (it comes {_import_flag(spec)})"
    frame, where = spec.source.fetch()
    if frame is None:
        return False, where
    categorical = [isinstance(frame[c].dtype, pd.CategoricalDtype) for c in frame.columns[:-1]]
    cat_names = [c for c, k in zip(frame.columns[:-1], categorical, strict=True) if k]
    frame = mirror_layout(frame, categorical)
    path = catalog.mirror_path(name, out)
    _write_parquet(frame, path)
    problems = paper_check(name, frame)
    y = frame.iloc[:, -1].astype(float)
    _write_manifest(
        path.parent,
        {
            "task_id": spec.source.task_id,
            "name": spec.title,
            "rows": len(frame),
            "columns": frame.shape[1] - 1,
            "target": frame.columns[-1],
            "categorical_columns": ";".join(cat_names),
            "max_abs_y": f"{np.nanmax(np.abs(y)):g}",
            "nan_rows": int(frame.isna().any(axis=1).sum()),
            "d_after_onehot": catalog.encode_frame(spec, frame).X.shape[1],
            "matches_table": "yes" if not problems else "no: " + "; ".join(problems),
            "source": where,
            "sha256": sha256(path),
        },
        "task_id",
        OPENML_MANIFEST_COLUMNS,
    )
    return True, f"{path} ({len(frame)} rows)" + (f"; differs from {spec.paper_table}: " + "; ".join(problems)
                                                  if problems else "")


def import_raw(name: str, raw_dir: Path, out: Path) -> tuple[bool, str]:
    """Write one dataset from its raw files (LIBSVM / Kaggle) in raw_dir into the mirror `out`."""
    spec = get_spec(name)
    if not isinstance(spec.source, RawFiles):
        return False, f"{name} does not come from raw files (it comes {_import_flag(spec)})"
    files = spec.source.find(raw_dir)
    if files is None:
        return False, f"{' + '.join(spec.source.canonical())} not in {raw_dir}"
    frame = spec.source.read(files)
    path = catalog.mirror_path(name, out)
    _write_parquet(frame, path)
    label = spec.schema.label or frame.columns[-1]
    problems = paper_check(name, frame)
    _write_manifest(
        path.parent,
        {
            "name": name,
            "rows": len(frame),
            "cols": frame.shape[1],
            "positive_rate": f"{(frame[label].astype(object) == spec.schema.positive).mean():.6f}",
            "label": label,
            "source_path": " + ".join(str(f) for f in files),
            "bytes": path.stat().st_size,
            "sha256": sha256(path),
            "matches_expected": "yes" if not problems else "no: " + "; ".join(problems),
        },
        "name",
        CLASSIFICATION_MANIFEST_COLUMNS,
    )
    return True, f"{path} ({len(frame)} rows)" + (f"; differs from {spec.paper_table}: " + "; ".join(problems)
                                                  if problems else "")


def _import_flag(spec: DatasetSpec) -> str:
    return getattr(spec.source, "import_flag", "from a generator, no import")
