"""The sweep lock: one live sweep per results directory, and workers that stop once their sweep is gone.

A sweep killed with SIGKILL cannot stop its workers: loky's finish the task
they hold, a Dask worker's task cannot be cancelled.  Left alone they would
go on writing parts while a re-run of the same sweep redoes those runs.  So a
sweep holds `<sweep_dir>/sweep.lock` (its host, pid and a random token), and
every task checks `Owner.alive()` before each run and each part it writes:
the lock must still hold its token and, on the sweep's host, the sweep's pid
must be alive.  A re-run takes over a dead sweep's lock (so its leftovers stop
at their next check) and refuses while a live sweep holds it.

A killed sweep cannot log its wall time either, so the sweep touches its lock every HEARTBEAT seconds
(`heartbeat`) and the lock says when it started: a re-run that takes over a dead local sweep's lock learns how
long that one ran (`Owner.dead_seconds`: the lock's last touch minus its start, to within HEARTBEAT), which the
runner logs as a killed command's (reproduction.log_sweep).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

LOCK = "sweep.lock"
HEARTBEAT = 30.0  # seconds between touches of a live sweep's lock


def pid_alive(pid: int) -> bool:
    """Whether a local process exists and is not a zombie (a killed sweep not yet reaped is dead)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def _read(path: Path) -> dict:
    try:
        held = json.loads(path.read_text())
        return held if isinstance(held, dict) else {}
    except (OSError, ValueError):
        return {}


@dataclass(frozen=True)
class Owner:
    path: str
    token: str
    host: str
    pid: int
    started: float = 0.0  # time.time() when the lock was taken
    dead_seconds: float | None = None  # how long the dead sweep whose lock this one took over ran (None: none)

    def alive(self) -> bool:
        """True while this sweep still holds its lock (cheap: one small file read and, locally, one kill(0))."""
        if self.host == socket.gethostname() and not pid_alive(self.pid):
            return False
        return _read(Path(self.path)).get("token") == self.token


def acquire(sweep_dir: Path) -> Owner:
    """Take the sweep directory's lock; ValueError if a live sweep holds it or the directory is not writable."""
    path = Path(sweep_dir) / LOCK
    held = _read(path)
    if held.get("token"):
        host, pid = held.get("host"), held.get("pid")
        if host != socket.gethostname():
            raise ValueError(
                f"{path} says a sweep (pid {pid}) writes to {sweep_dir} from host {host}; "
                f"if it is no longer running, delete {path}"
            )
        if isinstance(pid, int) and pid_alive(pid):
            raise ValueError(f"a sweep (pid {pid}) is still writing to {sweep_dir}; wait for it or stop it")
    dead = _ran(path, held)
    me = Owner(str(path), uuid.uuid4().hex, socket.gethostname(), os.getpid(), time.time(), dead)
    tmp = path.with_name(f".{LOCK}.{me.token}")
    tmp.write_text(json.dumps(asdict(me)))
    os.replace(tmp, path)
    if _read(path).get("token") != me.token:
        raise ValueError(f"another sweep took {path} at the same moment; run one sweep per directory")
    return me


def _ran(path: Path, held: dict) -> float | None:
    """Seconds a dead sweep's lock was kept alive: its last touch minus its start (None for no such lock, or one
    an older dpbench wrote without its start)."""
    started = held.get("started")
    if not held.get("token") or not isinstance(started, (int, float)) or not started:
        return None
    with contextlib.suppress(OSError):
        return max(0.0, path.stat().st_mtime - started)
    return None


def heartbeat(owner: Owner, every: float = HEARTBEAT) -> Callable[[], None]:
    """Touch the owner's lock every `every` seconds from a daemon thread of this process, from now until the
    returned function is called."""
    stop = threading.Event()

    def beat():
        while not stop.wait(every):
            with contextlib.suppress(OSError):
                if _read(Path(owner.path)).get("token") == owner.token:
                    os.utime(owner.path)

    thread = threading.Thread(target=beat, name="dpbench-sweep-heartbeat", daemon=True)
    thread.start()

    def halt() -> None:
        stop.set()
        thread.join()

    return halt


def release(owner: Owner) -> None:
    path = Path(owner.path)
    if _read(path).get("token") == owner.token:
        path.unlink(missing_ok=True)
