"""`python -m dpbench readme`: rewrite the measured tables of the README and docs/ from the reference results
(dpbench.reference);
`--claim-rates`: re-measure the claims' false-positive rates and powers (dpbench/claim_rates.json)."""

from __future__ import annotations

from pathlib import Path

from dpbench.cli.parsing import OneLineParser


def main(argv: list[str]) -> int:
    from dpbench import reference

    parser = OneLineParser(prog="python -m dpbench readme",
                           description="Rewrite the <!-- reference:NAME --> blocks of the README and docs/*.md from "
                                       "the committed reference results (--check: change nothing, exit 1 if a block "
                                       "differs).")
    parser.add_argument("--results-dir", default=str(reference.DIR), help="default %(default)s")
    parser.add_argument("--file", action="append", help="a file whose blocks are rewritten (repeatable; default: "
                        "README.md and the pages of docs/ that hold a block)")
    parser.add_argument("--check", action="store_true", help="exit 1 if a block is not what the results give")
    parser.add_argument("--publish", metavar="SOURCE", help="first copy the finished results under SOURCE (where the "
                        "reference sweeps ran) into --results-dir, small, and write its report")
    parser.add_argument("--claim-rates", action="store_true", help="only re-measure every claim's false-positive "
                        "rate and power on seeded synthetic results into dpbench/claim_rates.json (minutes)")
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    if args.claim_rates:  # what the report prints beside each criterion; measured here, not at report time
        import time

        from dpbench import claim_simulation

        start = time.perf_counter()
        path = claim_simulation.write()
        print(f"{path}: every claim's false positives and power measured in {time.perf_counter() - start:.0f} s")
        return 0
    if args.publish:
        from dpbench import reproduction

        names = reference.publish(args.publish, args.results_dir)
        html_path, _, _ = reproduction.write(args.results_dir)
        print(f"published {', '.join(names)} into {args.results_dir}; report {html_path}")
    paths = [Path(f) for f in args.file] if args.file else reference.documents()
    for path in paths:
        if not path.is_file():
            raise FileNotFoundError(f"{path}: no such file")
    tables, code = reference.tables(args.results_dir), 0
    for path in paths:
        text = path.read_text()
        new = reference.render(text, tables)
        if args.check:
            if new != text:
                print(f"{path}: the reference blocks differ from {args.results_dir}: run `python -m dpbench readme`")
                code = 1
            else:
                print(f"{path}: the reference blocks agree with {args.results_dir}")
            continue
        if new != text:
            tmp = path.with_suffix(path.suffix + ".tmp")
            tmp.write_text(new)
            tmp.replace(path)
        print(f"{path}: reference blocks {'rewritten' if new != text else 'already up to date'} from "
              f"{args.results_dir}")
    return code
