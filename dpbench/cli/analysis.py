"""`python -m dpbench analysis`: the analyses of the papers that are not sweep grids (dpbench/analyses/)."""

from __future__ import annotations

import time
from pathlib import Path

from dpbench.cli.parsing import OneLineParser


def main(argv: list[str]) -> int:
    from dpbench import analyses, reproduction

    parser = OneLineParser(prog="python -m dpbench analysis",
                           description="Run an analysis of the papers that is not a sweep grid (dpbench/analyses/): "
                                       "it writes <results-dir>/NAME/NAME.parquet and its figures "
                                       "(--smoke: <results-dir>/NAME_smoke/, which the report does not judge).")
    parser.add_argument("name", nargs="?", help=f"one of: {', '.join(analyses.available())} (none: list them)")
    parser.add_argument("--smoke", action="store_true", help="the small version (seconds; what CI runs)")
    parser.add_argument("--results-dir", default="results", help="parent of the output directory (default %(default)s)")
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    if args.name is None:
        for name in analyses.available():
            print(f"{name:24s} {analyses.get(name).description}")
        return 0
    entry = analyses.get(args.name)
    out = Path(args.results_dir) / (args.name + ("_smoke" if args.smoke else ""))  # smoke results: never judged
    out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    written = entry.run(out, smoke=args.smoke)
    seconds = time.perf_counter() - start
    # the report and the README's run table show the wall time of the run whose results these are: an analysis
    # rewrites all of them, so its log holds its last run only
    (out / reproduction.SWEEP_LOG).unlink(missing_ok=True)
    reproduction.log_sweep(out, seconds, 0)
    print(f"{args.name}: done in {seconds:.1f} s; wrote {', '.join(map(str, written))}")
    return 0
