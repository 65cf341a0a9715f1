"""SIGTERM ends a sweep like Ctrl-C: one line, exit code 130, finished runs kept and resumable."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from dpbench import results

HANG = 300  # seconds: only catches a hang, never decides the outcome


def test_sigterm_mid_sweep_is_an_interrupt(tmp_path):
    env = {**os.environ, "MPLBACKEND": "Agg", "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    args = [sys.executable, "-m", "dpbench", "sweep", "experiment=quickstart", "runner.progress=false",
            "runner.part_size=1", "runner.chunk_runs=1", "seeds=[0,1,2,3,4,5,6,7,8,9]"]
    proc = subprocess.Popen(args, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    parts = tmp_path / "results" / "quickstart" / "parts"
    deadline = time.monotonic() + HANG
    while not list(parts.glob("part-*.parquet")) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=HANG)  # 150 runs, signalled at the first part: far from finished
    assert proc.returncode == 130, err
    assert err.strip().splitlines()[-1] == "interrupted; finished runs are saved, re-run the same command to resume"
    assert "leaked" not in err and "Traceback" not in err
    done = results.finished_run_ids(tmp_path / "results" / "quickstart")
    assert len(done) >= 1  # what was written stays readable
    (logged,) = [json.loads(line) for line in (tmp_path / "results" / "quickstart" / "sweeps.jsonl").open()]
    assert logged["ran"] is None and logged["seconds"] > 0  # its time counts in the report's wall time
