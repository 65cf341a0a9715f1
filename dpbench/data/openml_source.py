"""Reading paper 000's regression tasks through the `openml` package (0.15 API) and its own cache.

`fetch_frame` returns the mirror layout (features with categoricals as pandas
`category`, target last), so OpenML data and mirror files go through the same
preprocessing.  `cached_data_file` only looks at files on disk: it never
imports more than openml's config and never touches the network.
Set DPBENCH_OFFLINE=1 to forbid downloads (only complete cache entries are read).
Without it, a download starts with one short probe of the server per process
(`check_reachable`): offline, openml's own retries sleep ~10 s per task.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pandas as pd

OFFLINE_ENV = "DPBENCH_OFFLINE"
_TASK_DATASET = re.compile(r"<oml:data_set_id>\s*(\d+)\s*</oml:data_set_id>")
_unreachable: list[str] = []  # set once a download failed with a connection error: do not retry in this process
_reachable: list[bool] = []  # set once the server answered the probe
PROBE_TIMEOUT = 3.0  # seconds to connect to the server before calling it unreachable


def offline() -> bool:
    return os.environ.get(OFFLINE_ENV, "").strip().lower() not in ("", "0", "false", "no")


def cache_dir() -> Path:
    """openml's cache for the configured server (honours openml's config file and its root cache setting)."""
    import openml

    return Path(openml.config.get_cache_directory())


def cached_data_file(task_id: int) -> Path | None:
    """The cached data file of a task if task description, dataset description and data are all on disk."""
    root = cache_dir()
    task_xml = root / "tasks" / str(task_id) / "task.xml"
    if not task_xml.is_file():
        return None
    match = _TASK_DATASET.search(task_xml.read_text(encoding="utf8", errors="replace"))
    if match is None:
        return None
    did = match.group(1)
    ddir = root / "datasets" / did
    if not (ddir / "description.xml").is_file():
        return None
    for name in (f"dataset_{did}.pq", "dataset.pq", "dataset.arff"):
        if (ddir / name).is_file():
            return ddir / name
    return None


def _short(exc: BaseException) -> str:
    """One line: a requests error's underlying reason (e.g. a failed name resolution), without object reprs."""
    reason = getattr(exc.args[0], "reason", exc) if exc.args else exc
    text = re.sub(r"<[^>]* object at 0x[0-9a-f]+>:?\s*|\w+Connection\(host=[^)]*\):\s*", "", str(reason))
    return " ".join(f"{type(reason).__name__}: {text}".split())[:300]


def check_reachable() -> None:
    """Raise requests' ConnectionError at once if the OpenML server does not answer within PROBE_TIMEOUT.

    openml retries a refused connection with sleeps and has no connect
    timeout; this probe (once per process, proxies honoured) fails in seconds.
    """
    if _reachable:
        return
    import openml
    import requests

    try:
        requests.head(openml.config.server, timeout=(PROBE_TIMEOUT, 2 * PROBE_TIMEOUT))
    except requests.RequestException as exc:
        raise requests.exceptions.ConnectionError(f"{openml.config.server} unreachable: {_short(exc)}") from None
    _reachable.append(True)


def fetch_frame(task_id: int) -> pd.DataFrame:
    """The task's data in mirror layout, from openml's cache or (when online) downloaded into it.

    The target is the task's target_name (the authors used the dataset's
    default_target_attribute, the same column for these tasks); categorical
    columns are those of openml's categorical indicator.  Raises OSError or an
    openml.exceptions.PyOpenMLError when the data cannot be had.
    """
    import openml

    if cached_data_file(task_id) is None:
        check_reachable()
    task = openml.tasks.get_task(
        int(task_id),
        download_splits=False,
        download_data=True,
        download_qualities=False,
        download_features_meta_data=False,
    )
    dataset = task.get_dataset(download_data=True, download_qualities=False, download_features_meta_data=False)
    X, y, categorical, names = dataset.get_data(target=task.target_name, dataset_format="dataframe")
    frame = pd.DataFrame(X).copy()
    for col, is_cat in zip(names, categorical, strict=True):
        if is_cat and not isinstance(frame[col].dtype, pd.CategoricalDtype):
            frame[col] = frame[col].astype("category")
    frame[task.target_name] = pd.Series(y, index=frame.index).astype("float64")
    return frame


def network_errors() -> tuple[type[BaseException], ...]:
    """What a failed or refused download raises (OSError covers requests' ConnectionError)."""
    from openml.exceptions import PyOpenMLError

    return (OSError, PyOpenMLError)


def fetch_or_reason(task_id: int) -> tuple[pd.DataFrame | None, str]:
    """(frame, where it came from) or (None, why not): cache first; downloads unless offline or unreachable."""
    cached = cached_data_file(task_id)
    if cached is None and offline():
        return None, f"not in the openml cache {cache_dir()} and {OFFLINE_ENV} is set"
    if cached is None and _unreachable:
        return None, f"not in the openml cache {cache_dir()} and OpenML was unreachable ({_unreachable[0]})"
    try:
        frame = fetch_frame(task_id)
    except network_errors() as exc:
        reason = _short(exc)
        import requests

        if isinstance(exc, requests.exceptions.ConnectionError) and not _unreachable:
            _unreachable.append(reason)
        return None, f"openml could not provide it ({reason})"
    where = f"openml cache {cached}" if cached is not None else f"openml download into {cache_dir()}"
    return frame, f"OpenML task {task_id} ({where})"
