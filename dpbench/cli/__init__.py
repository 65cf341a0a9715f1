"""`python -m dpbench <command>` (and the `dpbench` console script): dispatch to the command's module.

A command's module is imported only when it runs, so that `--help` stays fast: the experiment commands run
through Hydra (cli.hydra) with their bodies in cli.sweep; every other command is `dpbench.cli.<command>.main`.
"""

from __future__ import annotations

import sys
from importlib import import_module

from dpbench.cli import sweep, timing

USAGE = """python -m dpbench <command> [args]   (`python -m dpbench <command> --help` for a command's options)

commands:
  sweep   [key=value ...]     run an experiment grid, e.g. `sweep experiment=quickstart runner.n_jobs=2`
                              (no experiment given: the offline quickstart); writes parquet + a figure;
                              `--dry-run` prints the number of runs and fits, `--multirun` runs several grids
  plot    [key=value ...]     re-draw an experiment's figure from its parquet results
  report  [key=value ...]     print a summary table (mean +/- std over seeds) of an experiment's results;
                              `report` alone (or with results_dir=DIR only) writes the reproduction report
                              results/report.html + report.md: every figure's claims, verdicts and runs
  data    list|verify|import  the real datasets: what is available, check the mirror, build a mirror
  analysis NAME [--smoke]     an analysis that is not a sweep grid (a theory figure, a table, a timing);
                              `analysis` alone lists them
  reproduce [--dry-run] [--paper NNN]
                              the whole reproduction in order (every sweep and analysis of the papers, then the
                              report; resumable), a progress line per part; --dry-run: each part's estimate and
                              the total in hours, nothing run
  audit   [--full] [...]      empirical privacy audit: fit each private algorithm many times on D and on D
                              plus one crafted record, lower-bound epsilon (see `audit --help`);
                              `audit --ledger`: check that each ledger composes to the requested budget
  readme  [--check]           rewrite the measured tables of the README and docs/ from results/reference (the
                              committed full-scale results); --check: exit 1 if they differ
  algorithms [NAME]           the registered algorithms: task, privacy, parameters (defaults, constraints),
                              tuning ranges, what each implements
  leaderboard [--algorithm NAME] [--imports MOD]
                              the private leaderboard: every algorithm end-to-end private (fixed, privately
                              selected) beside the papers' non-private tuning; ranks, tests, figures; a NAME of
                              yours joins the reference board
  check   MODULE[:NAME]       every generic check on the algorithms your module registers (sklearn, ledger,
                              degenerate inputs, per-release sensitivity, fast audit): a table, exit 1 on a failure
  --version, -V               dpbench's version
  help [COMMAND]              this text, or a command's options
"""
HYDRA_COMMANDS = tuple(sweep.TASKS)  # composed by Hydra from dpbench/conf (and ./conf)
COMMANDS = (*HYDRA_COMMANDS, "data", "audit", "analysis", "reproduce", "readme", "algorithms", "check", "leaderboard",
            "--version")


def run() -> None:
    """`python -m dpbench` and the `dpbench` console script: main(), then `quick_exit` with its code."""
    quick_exit(main())


DRAIN_SECONDS = 5.0  # the longest the quick exit waits for a failed sweep's prestart to clean up (~10 ms)


def quick_exit(code: int | None) -> None:
    """End the process once its command is done, skipping what only costs time (~1 s after a sweep on 2 cores):
    the joblib (loky) workers are idle, every task having returned, so every part is written: they are killed
    instead of each being sent a sentinel and joined while it tears its interpreter down; then the atexit
    handlers run (logging, joblib's temporary folders), the standard streams are flushed and the process exits
    (os._exit) without its own interpreter teardown (freeing every module's objects).  Before the atexit handlers,
    the thread collecting the answers of a failed sweep's workers (runner.prestart) ends: its joblib call, ended by
    the kill, cleans its own temporary folder.  Nothing a process made is left behind: the sweep's are released
    by the shutdown and the atexit handlers, and the workers make none of their own that only their exit would
    release (runner.workers gives tqdm a lock of threads).  An ordinary exit when a thread other than the main one
    and the daemons still runs (its work would be lost), or that thread has not ended within DRAIN_SECONDS."""
    import atexit
    import os
    import threading

    loky = sys.modules.get("joblib.externals.loky.reusable_executor")
    executor = getattr(loky, "_executor", None)
    if executor is not None:
        executor.shutdown(wait=True, kill_workers=True)
    code = 0 if code is None else code
    prestart = sys.modules.get("dpbench.runner.prestart")  # a failed sweep's workers: their joblib call cleans up
    if prestart is not None and not prestart.drained(timeout=DRAIN_SECONDS):
        sys.exit(code)
    if any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not threading.main_thread()):
        sys.exit(code)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (`| head`) or stream
            pass
    os._exit(code)


def _terminated(signum, frame):
    """SIGTERM (a job scheduler, `kill`) ends a command like Ctrl-C: workers stopped, finished runs kept."""
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    """Exit codes: 0 done, 1 an audit violation or a failed check, 2 a usage or config error (one line on stderr),
    130 interrupted (Ctrl-C or SIGTERM).  DPBENCH_TIMINGS=<file>: the phases' times written there (cli.timing)."""
    import time

    sweep.command_started = time.perf_counter()
    timing.reset()
    timing.mark("main")
    try:
        return _main(argv)
    finally:
        timing.mark("done")
        timing.write()


def _main(argv: list[str] | None) -> int:
    import signal
    import threading

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _terminated)
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["help"] and len(argv) > 1:  # `help sweep` is `sweep --help`
        argv = [argv[1], "--help"]
    if argv[1:] == ["help"]:  # and so is `sweep help`
        argv = [argv[0], "--help"]
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(USAGE)
        return 0
    if argv[0] == "-V":
        argv[0] = "--version"
    if argv[0] in ("-sc", "--shell-completion"):
        from dpbench.cli.completion import complete

        return complete(argv, COMMANDS)
    command, rest = argv[0], argv[1:]
    if command not in COMMANDS:
        print(f"dpbench: error: unknown command {command!r}; commands: {', '.join(COMMANDS)}", file=sys.stderr)
        return 2
    try:
        return _run(command, rest)
    except SystemExit as done:  # e.g. `data --help`: argparse exits after printing
        return done.code if isinstance(done.code, int) else 0
    except KeyboardInterrupt:
        print("interrupted; finished runs are saved, re-run the same command to resume", file=sys.stderr)
        return 130
    except Exception as exc:
        message = _one_line(exc)
        if message is None:
            raise
        print(f"dpbench {command}: error: {message}", file=sys.stderr)
        return 2


def _raised(exc: Exception, module: str, name: str) -> bool:
    """isinstance(exc, module.name), without importing the module: an error of a module not loaded was not raised."""
    loaded = sys.modules.get(module)
    return loaded is not None and isinstance(exc, getattr(loaded, name))


def _one_line(exc: Exception) -> str | None:
    """A usage, config or missing-data error in one line; None for anything else (a bug: its traceback shows)."""
    if isinstance(exc, (ValueError, FileNotFoundError)) or _raised(exc, "dpbench.data.base", "MissingDataError"):
        return " ".join(str(exc).split())
    if _raised(exc, "hydra.errors", "HydraException") or _raised(exc, "omegaconf.errors", "OmegaConfBaseException"):
        from dpbench.config import one_line

        return one_line(exc)
    return None


def _run(command: str, rest: list[str]) -> int:
    """The command's own module runs it (imported here, when it runs)."""
    if command == "report" and all(a.startswith("results_dir=") for a in rest):
        return sweep.reproduction_report(rest)
    if command in HYDRA_COMMANDS:
        from dpbench.cli.hydra import run

        return run(command, rest)
    return import_module(f"dpbench.cli.{command.lstrip('-')}").main(rest)
