"""`python -m dpbench` ends at once when its command is done (dpbench.cli.quick_exit): output flushed, exit code
kept, the sweep's workers gone, nothing left behind; an ordinary exit while another thread still works."""

import json
import os
import subprocess
import sys
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
