"""`python -m dpbench` ends at once when its command is done (dpbench.cli.quick_exit): output flushed, exit code
kept, the sweep's workers gone, nothing left behind; an ordinary exit while another thread still works."""

import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "MPLBACKEND": "Agg", "PYTHONPATH": str(ROOT)}


def _group_gone(pgid: int, within: float = 30.0) -> bool:
    """True once no process of the process group is left (the loky resource tracker leaves as its pipe closes)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


class Session:
    """The pids of a process's session (start_new_session=True: its own pid), read from /proc while it runs: its
    workers' pids, which name what they create in /dev/shm, are gone once it ends."""

    def __init__(self, sid: int):
        self.sid, self.pids, self._stop = sid, {sid}, threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()

    def _poll(self):
        while not self._stop.wait(0.05):
            for entry in os.listdir("/proc"):
                try:
                    fields = Path("/proc", entry, "stat").read_text().rsplit(")", 1)[1].split()
                except (OSError, IndexError):  # not a process, or gone
                    continue
                if int(fields[3]) == self.sid:
                    self.pids.add(int(entry))

    def stop(self) -> set[int]:
        self._stop.set()
        self._thread.join()
        return self.pids


SHARED = ("/dev/shm", tempfile.gettempdir())  # joblib's memmapping folders (the second when /dev/shm is small)
# Named semaphores (loky's, and the standard library's in a loky worker: /dev/shm/sem.loky-<pid>-...) and joblib's
# memmapping folders (joblib_memmapping_folder_<pid>_...) carry the pid of the process that made them.
OWNED = re.compile(r"^(?:sem\.loky-(\d+)-|joblib_memmapping_folder_(\d+)_)")


def _listing() -> dict[str, set[str]]:
    return {d: set(os.listdir(d)) if os.path.isdir(d) else set() for d in SHARED}


def _left_behind(before: dict[str, set[str]], pids: set[int]) -> list[str]:
    """What the processes `pids` made in /dev/shm or the temporary directory and left there."""
    left = []
    for d, names in _listing().items():
        for name in sorted(names - before[d]):
            m = OWNED.match(name)
            if m and int(m.group(1) or m.group(2)) in pids:
                left.append(os.path.join(d, name))
    return left


def _noise(stderr: str) -> list[str]:
    return [w for w in ("resource_tracker", "leaked", "Traceback", "KeyError", "Warning") if w in stderr]


def _run_cleanly(args: list[str], cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    """Run `python <args>` in a session of its own; assert it printed no noise at its exit, left no process and
    nothing in /dev/shm or the temporary directory."""
    before = _listing()
    proc = subprocess.Popen([sys.executable, *args], cwd=cwd, env=ENV, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    session = Session(proc.pid)
    out, err = proc.communicate(timeout=timeout)  # also waits for the resource trackers (they hold stderr)
    assert _group_gone(proc.pid)
    pids = session.stop()
    assert not _noise(err), err
    assert not _left_behind(before, pids)
    return subprocess.CompletedProcess(args, proc.returncode, out, err)


# `python -m dpbench` (runpy, as -m runs it) with every task of the sweep announced as a long one (a worker writes
# its line as it starts: tqdm.write in a worker made tqdm's lock, a named semaphore the quick exit's kill left to
# the resource tracker, which warned "leaked semaphore objects").
ANNOUNCED = """
import runpy, sys
from dpbench.runner import estimate
estimate.Estimate.note = lambda self, experiment, task, seconds: f"{experiment}: announced"
sys.argv = ["dpbench", *sys.argv[1:]]
runpy.run_module("dpbench", run_name="__main__", alter_sys=True)
"""


def test_a_tuned_sweep_with_announced_tasks_leaves_nothing_behind(tmp_path):
    """A tuned sweep on 2 loky workers (its studies, then its chunks), each task announced by its worker: exit 0,
    nothing on stderr but the announcements, no semaphore or memmapping folder of its processes left."""
    args = ["-c", ANNOUNCED, "sweep", "experiment=quickstart", "epsilons=[1.0]", "seeds=[0,1]",
            "algorithms=[{name: boosted_adassp, modes: [tuned]}, {name: adassp, modes: [fixed]}]",
            "tuning.n_trials=2", "tuning.seeds=1", "tuning.batch_trials=2", "runner.n_jobs=2",
            "runner.progress=false", f"results_dir={tmp_path / 'results'}"]
    p = _run_cleanly(args, tmp_path)
    assert p.returncode == 0 and "ok 4" in p.stdout, p.stderr
    assert set(p.stderr.splitlines()) == {"quickstart: announced"}  # each task's line, and nothing else


def test_a_command_failing_while_its_workers_start_leaves_nothing_behind(tmp_path):
    """A sweep whose config fails validation while its workers are still starting (runner.prestart: a daemon
    thread collects their answers): one line on stderr, nothing left.  That thread's joblib call, aborted by the
    quick exit's kill, cleaned its memmapping folder while the atexit handlers cleaned it too: a KeyError of
    loky's resource tracker on stderr, in most runs of this early error on an idle machine (twice, one after the
    other: at once, the load let the workers start before the error)."""
    for _ in range(2):
        p = _run_cleanly(["-m", "dpbench", "sweep", "+epsilon=[1]"], tmp_path)
        assert p.returncode == 2 and p.stderr.startswith("dpbench sweep: error: ") and p.stderr.count("\n") == 1
    assert not list(tmp_path.iterdir())


def test_a_sweep_exits_with_its_output_and_leaves_no_worker(tmp_path):
    timings = tmp_path / "timings.json"
    args = [sys.executable, "-m", "dpbench", "sweep", "experiment=quickstart", "runner.n_jobs=2",
            "runner.progress=false", "seeds=[0,1]"]
    proc = subprocess.Popen(args, cwd=tmp_path, env={**ENV, "DPBENCH_TIMINGS": str(timings)},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    assert "figure: " in out and out.rstrip().splitlines()[-1].split()[0] == "ols"  # the summary's last row: flushed
    assert "leaked" not in err and "Traceback" not in err
    assert _group_gone(proc.pid)  # the workers (killed when idle) and the resource tracker
    phases = [name for name, _ in json.loads(timings.read_text())["marks"]]
    assert phases[0] == "main" and phases[-1] == "done" and "swept" in phases and "figure" in phases
    assert "workers_ready" in phases  # started while the config was validated (runner.prestart)


def test_an_error_keeps_its_exit_code():
    p = subprocess.run([sys.executable, "-m", "dpbench", "sweep", "epsilons=[-1]"], cwd=ROOT, env=ENV,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 2 and p.stderr.startswith("dpbench sweep: error: ") and p.stderr.count("\n") == 1


def test_a_thread_still_working_gets_an_ordinary_exit(tmp_path):
    done = tmp_path / "done"
    code = ("import threading, time; from dpbench.cli import quick_exit; "
            f"t = threading.Thread(target=lambda: (time.sleep(0.5), open({str(done)!r}, 'w').write('x'))); "
            "t.start(); print('before', flush=False); quick_exit(3)")
    p = subprocess.run([sys.executable, "-c", code], env=ENV, capture_output=True, text=True, timeout=120)
    assert p.returncode == 3 and p.stdout == "before\n" and done.read_text() == "x"
