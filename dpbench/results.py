"""The result format: tidy rows written as parquet parts, atomically; read back as one DataFrame.

A sweep's directory holds `parts/part-*.parquet`.  Each part is written to a
temporary name and renamed, so a reader (or a resumed sweep) only ever sees
whole parts; a killed sweep leaves at most a stray temporary file, removed on
the next run.
"""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path

import pandas as pd

PARTS = "parts"
TMP_SUFFIX = ".parquet.tmp"

REGRESSION_METRICS = ["test_mse", "train_mse", "test_r2", "train_r2"]
CLASSIFICATION_METRICS = ["test_f1", "test_auroc", "test_accuracy", "train_f1", "train_auroc", "train_accuracy"]

COLUMNS = [
    "run_id", "experiment", "algorithm", "params", "private", "dataset", "task", "n_train", "n_test", "d",
    "epsilon", "delta", "tuning_mode", "seed", "split", "data_seed", "random_state",
    *REGRESSION_METRICS, *CLASSIFICATION_METRICS,
    "fit_seconds", "status", "error", "spent_epsilon", "spent_delta", "ledger_entries",
    "dpbench_version", "git_commit", "config_hash", "numpy_version", "scipy_version", "sklearn_version",
    "python_version",
]


# Statuses of runs that produced no model.  Any other status (e.g. TukeyEM's 'ptr_failed', which
# predicts with the all-zero model as paper 000 reports, or an algorithm's documented fallback) has metrics.
NO_MODEL_STATUSES = ("error", "missing_data", "data_error")


def has_metrics(df: pd.DataFrame) -> pd.Series:
    """Rows whose metrics count in figures and tables."""
    return ~df["status"].isin(NO_MODEL_STATUSES)


def parts_dir(sweep_dir: str | os.PathLike) -> Path:
    return Path(sweep_dir) / PARTS


def write_part(rows: list[dict], sweep_dir: str | os.PathLike, stem: str) -> Path:
    """Write rows as one parquet part: temp file in the same directory, then atomic rename."""
    out = parts_dir(sweep_dir)
    out.mkdir(parents=True, exist_ok=True)
    df = pd.DataFrame(rows).reindex(columns=COLUMNS)
    final = out / f"part-{stem}.parquet"
    tmp = out / f".{final.stem}-{uuid.uuid4().hex[:8]}{TMP_SUFFIX}"
    df.to_parquet(tmp, index=False)
    with open(tmp, "rb") as fh:
        os.fsync(fh.fileno())
    os.replace(tmp, final)
    return final


def remove_stale_temporaries(sweep_dir: str | os.PathLike) -> int:
    n = 0
    for p in parts_dir(sweep_dir).glob(f"*{TMP_SUFFIX}"):
        p.unlink(missing_ok=True)
        n += 1
    return n


def finished_run_ids(sweep_dir: str | os.PathLike) -> set[str]:
    """run_ids already written (only the run_id column is read)."""
    ids: set[str] = set()
    for p in sorted(parts_dir(sweep_dir).glob("part-*.parquet")):
        ids.update(pd.read_parquet(p, columns=["run_id"])["run_id"])
    return ids


def load(path: str | os.PathLike, expand_params: bool = True) -> pd.DataFrame:
    """All rows of a sweep directory (or of a single part / parts directory) as one DataFrame.

    With expand_params, each hyperparameter also gets a `param_<name>` column.
    """
    path = Path(path)
    if path.is_file():
        files = [path]
    else:
        base = path / PARTS if (path / PARTS).is_dir() else path
        files = sorted(base.glob("part-*.parquet"))
    if not files:
        raise FileNotFoundError(f"no result parts under {path}")
    df = pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)
    if expand_params and len(df):
        params = pd.json_normalize([json.loads(p) for p in df["params"]]).add_prefix("param_")
        params.index = df.index
        df = pd.concat([df, params], axis=1)
    return df
