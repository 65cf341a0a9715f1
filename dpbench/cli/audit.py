"""`python -m dpbench audit`: the empirical privacy audit (and `--ledger`, the ledgers' composition), its table
written atomically and its figure."""

from __future__ import annotations

import sys
from pathlib import Path

from dpbench import audit
from dpbench.cli.parsing import OneLineParser


def _floats(text: str) -> list[float]:
    try:
        return [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise ValueError(f"expected comma-separated numbers, got {text!r}") from None


def _names(text: str) -> list[str]:
    return [v.strip() for v in text.split(",") if v.strip()]


AUDIT_COLUMNS = ["algorithm", "design", "epsilon", "eps_lb", "mu", "mu_lb", "runs", "failures", "verdict", "seconds"]


def main(argv: list[str]) -> int:
    parser = OneLineParser(
        prog="python -m dpbench audit",
        description="Empirical privacy audit: fit every private algorithm RUNS times on a small dataset D and "
                    "RUNS times on D plus one crafted record (per design), choose a distinguishing test on half "
                    "of the fits and lower-bound epsilon (and mu for GDP algorithms) on the other half with "
                    "95% Clopper-Pearson intervals. Exit code 1 if a lower bound exceeds the budget asked for.",
    )
    parser.add_argument("--ledger", action="store_true",
                        help="only check that each algorithm's ledger composes to the budget (no empirical audit)")
    parser.add_argument("--algorithms", type=_names, help="comma-separated names (default: every private one)")
    parser.add_argument("--imports", type=_names, help="comma-separated modules registering algorithms (default: "
                                                       "the `imports:` of the experiments in ./conf)")
    parser.add_argument("--epsilons", type=str, help="comma-separated budgets (default 1; --full: 0.1,1,10)")
    parser.add_argument("--delta", type=float, default=audit.DEFAULT_DELTA,
                        help="delta of every fit (default %(default)g)")
    parser.add_argument("--runs", type=int, help="fits per side, D and D' (default 500; --full: 2000)")
    parser.add_argument("--designs", type=_names,
                        help=f"comma-separated, from {', '.join(audit.DESIGNS)} (default all)")
    parser.add_argument("--n-jobs", type=int, default=2, help="joblib workers (default %(default)s)")
    parser.add_argument("--seed", type=int, default=0, help="root of every fit's SeedSequence (default 0)")
    parser.add_argument("--out", default="results/audit", help="directory for audit.parquet / audit.png")
    parser.add_argument("--full", action="store_true", help="the `make audit` version: eps 0.1,1,10 and 2000 runs")
    parser.add_argument("--dry-run", action="store_true", help="print the number of audits and fits, fit nothing")
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help: nothing is run
        return int(exc.code or 0)
    from dpbench.config import load_user_imports

    load_user_imports(args.imports)
    if args.ledger:
        from dpbench.summary import audit_ledgers

        table = audit_ledgers(names=args.algorithms)
        print(table.to_string(index=False))
        return 0 if table["ok"].all() else 1

    import pandas as pd

    from dpbench.plots.audit import plot_audit

    epsilons = _floats(args.epsilons) if args.epsilons is not None else ([0.1, 1.0, 10.0] if args.full else [1.0])
    runs = args.runs if args.runs is not None else (2000 if args.full else 500)
    if args.n_jobs < 1:
        raise ValueError(f"--n-jobs must be >= 1, got {args.n_jobs}")
    if args.dry_run:
        from dpbench import algorithms

        names, designs = audit.check_request(args.algorithms, epsilons, args.designs, runs, args.delta)
        pairs = sum(audit.DESIGNS[d](algorithms.get_spec(n)) is not None for n in names for d in designs)
        print(f"{pairs * len(epsilons)} audits ({pairs} algorithm x design pairs x {len(epsilons)} epsilon(s)), "
              f"{2 * runs * pairs * len(epsilons)} fits; dry run: nothing fitted")
        return 0
    table = audit.run_audit(args.algorithms, epsilons, args.designs, runs=runs, delta=args.delta,
                            n_jobs=args.n_jobs, seed=args.seed, progress=_progress_line)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    tmp = out / ".audit.parquet.tmp"
    table.to_parquet(tmp, index=False)
    tmp.replace(out / "audit.parquet")
    with pd.option_context("display.width", 200, "display.max_rows", 500):
        print(table[AUDIT_COLUMNS].to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    figure = plot_audit(table, out / "audit.png") if len(table) else None
    bad = table[table["verdict"] == "violation"]
    print(f"\n{len(bad)} violation(s) in {len(table)} audits; table: {out / 'audit.parquet'}"
          + (f", figure: {figure}" if figure else ""))
    return 1 if len(bad) else 0


def _progress_line(done: int, total: int, seconds: float) -> None:
    """One updating line on stderr: fit chunks done, elapsed time and a linear estimate of what is left."""
    left = seconds / done * (total - done) if done else float("nan")
    end = "\n" if done == total else ""
    print(f"\raudit: {done}/{total} chunks of fits, {seconds / 60:.1f} min, ~{left / 60:.1f} min left",
          end=end, file=sys.stderr, flush=True)
