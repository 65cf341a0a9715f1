"""Where the sweep's tasks run: one of joblib's backends on this machine, or a Dask cluster through joblib's
dask backend (runner.backend=dask, runner.address=...)."""

from __future__ import annotations

import contextlib

import joblib

BACKENDS = ("loky", "multiprocessing", "threading", "sequential", "dask")  # joblib's, and Dask through joblib


@contextlib.contextmanager
def parallel(runner):
    """joblib's parallel config for the resolved runner settings (dpbench.config.RunnerConfig)."""
    if runner.backend not in BACKENDS:
        raise ValueError(f"runner.backend must be one of {', '.join(BACKENDS)}; got {runner.backend!r}")
    if runner.backend == "dask":
        with dask_client(runner), joblib.parallel_config(backend="dask"):
            yield
    else:
        with joblib.parallel_config(backend=runner.backend, n_jobs=int(runner.n_jobs)):
            yield


@contextlib.contextmanager
def dask_client(runner):
    """A client of the scheduler at runner.address (a one-line ValueError if it does not answer within
    runner.connect_timeout seconds), or of a local cluster of n_jobs single-threaded worker processes."""
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError as exc:
        raise ValueError("runner.backend=dask needs dask[distributed]: pip install 'dpbench[dask]'") from exc
    if not runner.address:
        with LocalCluster(n_workers=int(runner.n_jobs), threads_per_worker=1) as cluster:
            with Client(cluster) as client:
                yield client
        return
    with _connect(Client, runner.address, float(runner.connect_timeout)) as client:
        yield client


CONNECT_GRACE = 5.0  # seconds beyond connect_timeout before a silent peer is given up on


def _connect(client_class, address: str, timeout: float):
    """Client(address) within timeout + CONNECT_GRACE seconds, whatever answers there, else a one-line
    ValueError.  Dask's own timeout covers the TCP connect, not its handshake: a peer that is not a Dask
    scheduler (an HTTP server, a silent socket) can stall it forever or send bytes it reads as a frame length
    (MemoryError), so the connect runs in a daemon thread with a deadline."""
    import threading

    outcome: dict = {}

    def attempt():
        try:
            outcome["client"] = client_class(address, timeout=timeout)
        except BaseException as exc:  # noqa: BLE001 - reported below in one line
            outcome["error"] = exc

    thread = threading.Thread(target=attempt, name="dpbench-dask-connect", daemon=True)
    thread.start()
    thread.join(timeout + CONNECT_GRACE)
    where = f"runner.address={address!r}"
    if thread.is_alive():
        raise ValueError(f"no Dask scheduler answered at {where} within {timeout + CONNECT_GRACE:g} s "
                         "(runner.connect_timeout + 5): is something else listening there?")
    if "error" in outcome:
        exc = outcome["error"]
        reason = " ".join(f"{type(exc).__name__}: {exc}".split())[:200]
        raise ValueError(f"cannot reach the Dask scheduler at {where}: {reason}")
    return outcome["client"]
