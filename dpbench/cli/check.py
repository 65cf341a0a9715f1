"""`python -m dpbench check MODULE[:NAME]`: every generic check (dpbench.checks) on a user's algorithms, a table."""

from __future__ import annotations

import sys

from dpbench.cli.parsing import OneLineParser


def main(argv: list[str]) -> int:
    """Exit code 0: every check passed; 1: one failed (its row says why); 2: bad input (one line)."""
    parser = OneLineParser(
        prog="python -m dpbench check",
        description="Run every generic check dpbench's own algorithms pass on the algorithms a module of yours "
                    "registers (dpbench.extend.register_algorithm): scikit-learn's estimator checks, the ledger "
                    "(every noise draw recorded, composing to the budget), degenerate inputs (n = 0, one record, "
                    "one class, all-zero X, 1e300: a finite model), the per-release sensitivity, and a fast "
                    "empirical audit (eps 1; a row per design stating its power: what it gives a copy with the "
                    "noise x 0.1, out of the most its fits can certify). Prints a table; exit code 1 if a check "
                    "fails, 2 if MODULE cannot be imported or NAME is unknown. In a test file of yours: "
                    "dpbench.checks.assert_checks(name).",
    )
    parser.add_argument("target", metavar="MODULE[:NAME]",
                        help="a module importable from the working directory (e.g. my_extension); NAME: one "
                             "registered algorithm (default: every algorithm the module registers)")
    parser.add_argument("--runs", type=int, default=None,
                        help="the audit's fits per side, D and D' (default 500, as `audit`)")
    parser.add_argument("--n-jobs", type=int, default=2, help="the audit's joblib workers (default %(default)s)")
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help: nothing is run
        return int(exc.code or 0)
    from dpbench import checks

    runs = checks.AUDIT_RUNS if args.runs is None else args.runs
    if runs < 10 or args.n_jobs < 1:
        raise ValueError(f"--runs must be >= 10 and --n-jobs >= 1, got {runs} and {args.n_jobs}")
    names = checks.algorithms_of(args.target)
    table = checks.run_checks(names, runs=runs, n_jobs=args.n_jobs, progress=_progress_line)
    print("\r".ljust(61) + "\r", end="", file=sys.stderr, flush=True)  # the progress line's end
    print(checks.format_table(table))
    failed = table[table["result"] == checks.FAIL]
    counts = table["result"].value_counts()
    print(f"\n{len(table)} checks of {', '.join(names)}: " + ", ".join(f"{counts[r]} {r}" for r in counts.index)
          + (f"; failed: {', '.join(sorted(set(failed['check'])))}" if len(failed) else ""))
    return 1 if len(failed) else 0


def _progress_line(name: str, check: str) -> None:
    """One updating line on stderr: the check running now."""
    print(f"\rcheck: {name}: {check} ...".ljust(60), end="", file=sys.stderr, flush=True)
