"""The result format: tidy rows written as parquet parts, atomically; read back as one DataFrame.

A sweep's directory holds `parts/part-*.parquet`.  Each part is written to a
temporary name and renamed, so a reader (or a resumed sweep) only ever sees
whole parts; a killed sweep leaves at most a stray temporary file, removed on
the next run.

Parts are never rewritten: a run redone by a re-run (a harness failure, see
RETRIED_STATUSES) gets a new row with a higher `attempt`, and `load` keeps the
newest row of each run, so no row of a run that is not redone can be lost.  A
part that cannot be read is skipped by readers with a warning (a reader never
changes a results directory) and its runs count as not done; the next sweep
on the directory, holding its lock, moves it to `parts/corrupt/`
(`set_aside_corrupt`).
"""

from __future__ import annotations

import json
import os
import uuid
import warnings
from pathlib import Path

import pandas as pd

from dpbench import metrics

PARTS = "parts"
STUDIES = "_studies"  # <results_dir>/_studies: the tuning studies' journals, shared by every sweep there
TMP_SUFFIX = ".parquet.tmp"

IDENTITY = ["run_id", "experiment", "algorithm", "params", "private", "dataset", "task", "n_train", "n_test", "d",
            "epsilon", "delta", "tuning_mode", "seed", "split", "data_seed", "random_state"]
# tuned mode: the chosen hyperparameters (JSON), their mean validation score and the trials chosen among
TUNING = ["tuned_params", "validation_score", "tuning_trials", "study"]
# zero_model: the released model is the all-zero one (an algorithm's fallback), from its coefficients (None: a model
# without them, or a run that released nothing)
OUTCOME = ["fit_seconds", "batch_runs", "status", "zero_model", "attempt", "error", "spent_epsilon", "spent_delta",
           "ledger_entries", "dpbench_version", "git_commit", "git_dirty", "git_diff_hash", "config_hash",
           "numpy_version", "scipy_version", "sklearn_version", "python_version"]


def result_columns() -> list[str]:
    """The result columns: identity, every registered metric's (dpbench.metrics, read at write time), outcome."""
    return [*IDENTITY, *TUNING, *metrics.columns(), *OUTCOME]


# Statuses of runs that produced no model.  Any other status (e.g. TukeyEM's 'ptr_failed', which
# predicts with the all-zero model as paper 000 reports, or an algorithm's documented fallback) has metrics.
NO_MODEL_STATUSES = ("error", "missing_data", "data_error")
# Harness failures (a crash, absent or unreadable data), not results: a re-run of the sweep redoes them.
RETRIED_STATUSES = NO_MODEL_STATUSES
CORRUPT = "corrupt"


class CorruptPartWarning(UserWarning):
    """A result part could not be read and was moved aside."""


def has_metrics(df: pd.DataFrame) -> pd.Series:
    """Rows whose metrics count in figures and tables."""
    return ~df["status"].isin(NO_MODEL_STATUSES)


def parts_dir(sweep_dir: str | os.PathLike) -> Path:
    """The directory of a sweep's parquet parts."""
    return Path(sweep_dir) / PARTS


def write_part(rows: list[dict], sweep_dir: str | os.PathLike, stem: str) -> Path:
    """Write rows as one parquet part: temp file in the same directory, then atomic rename."""
    out = parts_dir(sweep_dir)
    out.mkdir(parents=True, exist_ok=True)
    df = pd.DataFrame(rows).reindex(columns=result_columns())
    final = out / f"part-{stem}.parquet"
    tmp = out / f".{final.stem}-{uuid.uuid4().hex[:8]}{TMP_SUFFIX}"
    df.to_parquet(tmp, index=False)
    with open(tmp, "rb") as fh:
        os.fsync(fh.fileno())
    os.replace(tmp, final)
    return final


def remove_stale_temporaries(sweep_dir: str | os.PathLike) -> int:
    """Delete the temporary files of parts that were never renamed (a sweep killed while writing); returns how
    many."""
    n = 0
    for p in parts_dir(sweep_dir).glob(f"*{TMP_SUFFIX}"):
        p.unlink(missing_ok=True)
        n += 1
    return n


def _unreadable(exc: Exception) -> str:
    return " ".join(f"{type(exc).__name__}: {exc}".split())


def _read_part(path: Path, columns: list[str] | None = None) -> pd.DataFrame | None:
    """One part (only `columns` that it has), or None with a warning if it cannot be read (left where it is)."""
    import pyarrow.parquet as pq

    try:
        if columns is not None:
            names = pq.read_schema(path).names
            columns = [c for c in columns if c in names]
        return pd.read_parquet(path, columns=columns)
    except Exception as exc:  # noqa: BLE001 - any unreadable file is skipped, never fatal
        warnings.warn(f"unreadable result part {path} skipped ({_unreadable(exc)}); its runs count as not done and "
                      f"the next sweep on this directory moves it to {CORRUPT}/", CorruptPartWarning, stacklevel=3)
        return None


def set_aside_corrupt(sweep_dir: str | os.PathLike) -> list[Path]:
    """Move every unreadable part to parts/corrupt/ (a sweep does this holding the directory's lock); the moved
    parts' new paths."""
    import pyarrow.parquet as pq

    moved = []
    for path in sorted(parts_dir(sweep_dir).glob("part-*.parquet")):
        try:
            pq.read_table(path, columns=["run_id"])
        except Exception as exc:  # noqa: BLE001
            dest = path.parent / CORRUPT / path.name
            dest.parent.mkdir(exist_ok=True)
            os.replace(path, dest)
            warnings.warn(f"corrupt result part {path} moved to {dest} ({_unreadable(exc)})", CorruptPartWarning,
                          stacklevel=2)
            moved.append(dest)
    return moved


def _read_parts(files, columns: list[str] | None = None) -> pd.DataFrame:
    frames = [f for f in (_read_part(p, columns) for p in files) if f is not None]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns or result_columns())


def newest(df: pd.DataFrame) -> pd.DataFrame:
    """The newest row (highest attempt; parts from before attempts count as 1) of each run."""
    attempt = df["attempt"].fillna(1) if "attempt" in df else pd.Series(1, index=df.index)
    df = df.assign(attempt=attempt.astype("int64"))
    return df.sort_values("attempt", kind="stable").drop_duplicates("run_id", keep="last").sort_index()


def run_states(sweep_dir: str | os.PathLike) -> pd.DataFrame:
    """Status and attempt of each run's newest row, indexed by run_id (reads three columns only)."""
    df = _read_parts(sorted(parts_dir(sweep_dir).glob("part-*.parquet")), ["run_id", "status", "attempt"])
    return newest(df).set_index("run_id")[["status", "attempt"]]


def finished_run_ids(sweep_dir: str | os.PathLike) -> set[str]:
    """run_ids done for good: their newest row is not a harness failure."""
    states = run_states(sweep_dir)
    return set(states.index[~states["status"].isin(RETRIED_STATUSES)])


def load(path: str | os.PathLike, expand_params: bool = True, all_attempts: bool = False) -> pd.DataFrame:
    """All rows of a sweep directory (or of a single part / parts directory, or of every sweep directory under a
    results directory, e.g. `load("results")`: each row's `experiment` says which) as one DataFrame.

    One row per run (its newest attempt, per sweep directory) unless all_attempts.  With
    expand_params, each hyperparameter also gets a `param_<name>` column.
    """
    path = Path(path)
    sweeps = [] if path.is_file() or (path / PARTS).is_dir() else sorted(p.parent for p in path.glob(f"*/{PARTS}"))
    if sweeps:
        frames = [load(s, expand_params=False, all_attempts=all_attempts) for s in sweeps
                  if any((s / PARTS).glob("part-*.parquet"))]
        if not frames:
            raise FileNotFoundError(f"no result parts under {path}")
        df = pd.concat(frames, ignore_index=True)
        return _with_params(df) if expand_params else df
    if path.is_file():
        files = [path]
    else:
        base = path / PARTS if (path / PARTS).is_dir() else path
        files = sorted(base.glob("part-*.parquet"))
    df = _read_parts(files)
    if not len(df):
        raise FileNotFoundError(f"no result parts under {path}")
    if not all_attempts:
        df = newest(df).reset_index(drop=True)
    return _with_params(df) if expand_params else df


def _with_params(df: pd.DataFrame) -> pd.DataFrame:
    """Each hyperparameter of the rows' `params` JSON as a `param_<name>` column."""
    if not len(df):
        return df
    params = pd.json_normalize([json.loads(p) for p in df["params"]]).add_prefix("param_")
    params.index = df.index
    return pd.concat([df, params], axis=1)
