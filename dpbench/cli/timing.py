"""Phase times of a command, for benchmarks: with DPBENCH_TIMINGS=<file> set, the command line writes to that
file, when the command is done, a JSON object {"marks": [[phase, unix time], ...]}: each phase's name and the
time it ended (`main`: the command line entered, i.e. the interpreter's start-up done; `composed`, `validated`,
`swept`, `results`, `figure`, `summary`, `done`; `workers_ready`: when the warm-up found the sweep's worker
processes ready).  scripts/bench.py reads it (with its own launch and exit times) to print where a sweep's
time goes.  Unset, marking costs a list append and nothing is written."""

from __future__ import annotations

import json
import os
import time

ENV = "DPBENCH_TIMINGS"
_marks: list[tuple[str, float]] = []


def mark(phase: str, at: float | None = None) -> None:
    """Record that `phase` ended now (or at the unix time `at`)."""
    _marks.append((phase, time.time() if at is None else at))


def reset() -> None:
    _marks.clear()


def write() -> None:
    """Write the marks to the file DPBENCH_TIMINGS names (nothing when it is unset)."""
    path = os.environ.get(ENV)
    if path:
        with open(path, "w") as fh:
            json.dump({"marks": _marks}, fh)
