"""Building and checking a data mirror (the layout of ../shared/data), for machines without internet.

Layout: openml/<task_id>.parquet (features, categoricals as pandas `category`
with string labels, the target last) and classification/<name>.parquet (the
raw columns as published; LIBSVM sets as f1..fp float32, y in {0,1}, and a
`split` column train/test), each folder with a MANIFEST.csv.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from dpbench.data import catalog, openml_source
from dpbench.data.preprocess import CLASSIFICATION_SCHEMAS, encode_classification, encode_regression

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


# ---------------------------------------------------------------- raw files -> mirror frames


def find_raw(name: str, raw_dir: Path) -> list[Path] | None:
    """The raw files of a classification set in raw_dir (one per role), or None if one is absent."""
    found = []
    for candidates in catalog.RAW_FILES[name]:
        hit = next((raw_dir / c for c in candidates if (raw_dir / c).is_file()), None)
        if hit is None:
            return None
        found.append(hit)
    return found


def read_libsvm(train: Path, test: Path, n_features: int) -> pd.DataFrame:
    """LIBSVM train + test files -> f1..fp (float32), y (labels > 0 -> 1, else 0), split ('train'/'test')."""
    from sklearn.datasets import load_svmlight_files

    X_tr, y_tr, X_te, y_te = load_svmlight_files([str(train), str(test)], n_features=n_features, zero_based=False)
    frame = pd.DataFrame(
        np.vstack([X_tr.toarray(), X_te.toarray()]).astype(np.float32), columns=[f"f{j + 1}" for j in range(n_features)]
    )
    frame["y"] = (np.concatenate([y_tr, y_te]) > 0).astype(np.int8)
    frame["split"] = pd.Categorical(["train"] * len(y_tr) + ["test"] * len(y_te), categories=["test", "train"])
    return frame


def read_kaggle(name: str, path: Path) -> pd.DataFrame:
    """A Kaggle CSV as published: text columns as category (ids as strings), numbers untouched."""
    frame = pd.read_csv(path, sep=";" if name == "cardio" else ",")
    frame.columns = [str(c).strip() for c in frame.columns]
    ids = ["customerID"] if name == "telco" else []
    if name == "telco":
        frame["TotalCharges"] = pd.to_numeric(frame["TotalCharges"], errors="coerce")  # 11 blanks -> NaN
    for col in frame.columns:
        text = pd.api.types.is_object_dtype(frame[col]) or pd.api.types.is_string_dtype(frame[col])
        if text and col not in ids:
            frame[col] = frame[col].astype("category")
    return frame


def read_raw(name: str, raw_dir: Path) -> tuple[pd.DataFrame, list[Path]] | None:
    files = find_raw(name, raw_dir)
    if files is None:
        return None
    if name in ("cod-rna", "adult"):
        return read_libsvm(files[0], files[1], catalog.info(name).p), files
    return read_kaggle(name, files[0]), files


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


def paper_check(name: str, frame: pd.DataFrame) -> list[str]:
    """Differences between a mirror frame and the paper's numbers ([] when it reproduces them)."""
    i = catalog.info(name)
    problems = []
    if i.task == "regression":
        enc = encode_regression(frame)
        got = {
            "n": len(enc.y),
            "#columns": frame.shape[1] - 1,
            "d": enc.X.shape[1],
            "true bound": round(float(np.abs(enc.y).max()), 6) if len(enc.y) else math.nan,
        }
        want = {"n": i.n, "#columns": i.n_columns, "d": i.d, "true bound": i.true_bound}
    else:
        enc = encode_classification(frame, CLASSIFICATION_SCHEMAS[name])
        split = "paper" if name == "cod-rna" else "fixed"  # cod-rna: see the catalog docstring
        train, test = catalog.split_rows(name, enc, split)
        pct = math.floor(enc.y[train].mean() * 1e4 + 1e-6) / 100 if len(train) else math.nan  # Table 2 truncates
        got = {"p": enc.X.shape[1], "train": len(train), "test": len(test), "% positive": pct}
        want = {"p": i.p, "train": i.n_train, "test": i.n_test, "% positive": i.positive_pct}
    for key, value in want.items():
        if not (got[key] == value or (isinstance(value, float) and math.isclose(got[key], value, abs_tol=1e-9))):
            problems.append(f"{key} {got[key]} != paper {value}")
    return problems


def manifest_check(name: str, path: Path, frame: pd.DataFrame, manifest: pd.DataFrame) -> list[str]:
    """Differences between a mirror file and its MANIFEST.csv row (only the fields the manifest has)."""
    i = catalog.info(name)
    key, value = ("task_id", str(i.task_id)) if i.task == "regression" else ("name", name)
    rows = manifest[manifest[key] == value] if key in manifest.columns else manifest.iloc[:0]
    if rows.empty:
        return ["no MANIFEST.csv row"]
    row = rows.iloc[-1]
    got = {"rows": str(len(frame)), "bytes": str(path.stat().st_size)}
    if i.task == "regression":
        got["columns"] = str(frame.shape[1] - 1)
    else:
        got["cols"] = str(frame.shape[1])
    problems = [f"{k} {v} != manifest {row[k]}" for k, v in got.items() if row.get(k, "") not in ("", v)]
    if row.get("sha256", "") and row["sha256"] != sha256(path):
        problems.append("sha256 differs from the manifest")
    return problems


@dataclass
class Check:
    name: str
    status: str  # 'ok', 'mismatch', 'missing' (not in the mirror: nothing to check)
    detail: str


def verify(root: Path) -> list[Check]:
    """Every dataset: its mirror file against MANIFEST.csv and against the paper's table."""
    manifests = {"regression": read_manifest(root / "openml"), "classification": read_manifest(root / "classification")}
    checks = []
    for name, i in catalog.INFOS.items():
        path = catalog.mirror_path(name, root)
        if not path.is_file():
            checks.append(Check(name, "missing", f"no {path} (not checked)"))
            continue
        frame = pd.read_parquet(path)
        problems = manifest_check(name, path, frame, manifests[i.task]) + paper_check(name, frame)
        detail = "; ".join(problems) if problems else _summary(i)
        checks.append(Check(name, "mismatch" if problems else "ok", detail))
    return checks


def _summary(i: catalog.DatasetInfo) -> str:
    if i.task == "regression":
        return f"n={i.n} columns={i.n_columns} d={i.d} bound={i.true_bound:.6f} as Table II; manifest ok"
    note = " (cod-rna.t as train and test, the paper's split)" if i.name == "cod-rna" else ""
    return f"p={i.p} train={i.n_train} test={i.n_test} positive={i.positive_pct}% as Table 2{note}; manifest ok"


# ---------------------------------------------------------------- import


def import_openml(name: str, out: Path) -> tuple[bool, str]:
    """Write one regression task from openml (its cache, or a download unless offline) into the mirror `out`."""
    i = catalog.info(name)
    if i.task != "regression":
        return False, f"{name} is not an OpenML regression task (classification sets come --from-raw)"
    frame, where = openml_source.fetch_or_reason(i.task_id)
    if frame is None:
        return False, where
    categorical = [isinstance(frame[c].dtype, pd.CategoricalDtype) for c in frame.columns[:-1]]
    cat_names = [c for c, k in zip(frame.columns[:-1], categorical, strict=True) if k]
    frame = mirror_layout(frame, categorical)
    path = out / "openml" / f"{i.task_id}.parquet"
    _write_parquet(frame, path)
    problems = paper_check(name, frame)
    y = frame.iloc[:, -1].astype(float)
    _write_manifest(
        out / "openml",
        {
            "task_id": i.task_id,
            "name": i.title,
            "rows": len(frame),
            "columns": frame.shape[1] - 1,
            "target": frame.columns[-1],
            "categorical_columns": ";".join(cat_names),
            "max_abs_y": f"{np.nanmax(np.abs(y)):g}",
            "nan_rows": int(frame.isna().any(axis=1).sum()),
            "d_after_onehot": encode_regression(frame).X.shape[1],
            "matches_table": "yes" if not problems else "no: " + "; ".join(problems),
            "source": where,
            "sha256": sha256(path),
        },
        "task_id",
        OPENML_MANIFEST_COLUMNS,
    )
    return True, f"{path} ({len(frame)} rows)" + ("; differs from Table II: " + "; ".join(problems) if problems else "")


def import_raw(name: str, raw_dir: Path, out: Path) -> tuple[bool, str]:
    """Write one classification set from its raw LIBSVM / Kaggle files in raw_dir into the mirror `out`."""
    if catalog.info(name).task != "classification":
        return False, f"{name} is not a classification set (regression tasks come --from-openml)"
    read = read_raw(name, raw_dir)
    if read is None:
        wanted = " + ".join(names[0] for names in catalog.RAW_FILES[name])
        return False, f"{wanted} not in {raw_dir}"
    frame, files = read
    path = out / "classification" / f"{name}.parquet"
    _write_parquet(frame, path)
    schema = CLASSIFICATION_SCHEMAS[name]
    problems = paper_check(name, frame)
    _write_manifest(
        out / "classification",
        {
            "name": name,
            "rows": len(frame),
            "cols": frame.shape[1],
            "positive_rate": f"{(frame[schema.label].astype(object) == schema.positive).mean():.6f}",
            "label": schema.label,
            "source_path": " + ".join(str(f) for f in files),
            "bytes": path.stat().st_size,
            "sha256": sha256(path),
            "matches_expected": "yes" if not problems else "no: " + "; ".join(problems),
        },
        "name",
        CLASSIFICATION_MANIFEST_COLUMNS,
    )
    return True, f"{path} ({len(frame)} rows)" + ("; differs from Table 2: " + "; ".join(problems) if problems else "")
