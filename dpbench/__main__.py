"""`python -m dpbench <command>`: sweep, plot, report, data, audit."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

USAGE = """python -m dpbench <command> [args]

commands:
  sweep   [hydra overrides]   run an experiment grid, e.g. `sweep +experiment=quickstart runner.n_jobs=2`
                              (no experiment given: the offline quickstart); writes parquet + a figure
  plot    [hydra overrides]   re-draw an experiment's figure from its parquet results
  report  [hydra overrides]   print a summary table (mean +/- std over seeds) of an experiment's results
  data    list|verify|import  the real datasets: what is available, check the mirror, build a mirror
  audit   [--full] [...]      empirical privacy audit: fit each private algorithm many times on D and on D
                              plus one crafted record, lower-bound epsilon (see `audit --help`);
                              `audit --ledger`: check that each ledger composes to the requested budget
"""


def _compose(overrides: list[str]):
    from dpbench.config import compose, to_container

    cfg = to_container(compose(overrides))
    if not cfg.get("name"):
        raise ValueError("the config has no experiment name; pass +experiment=<name>")
    return cfg


def _sweep_dir(cfg) -> Path:
    return Path(cfg["results_dir"]) / cfg["name"]


def _data_dir(cfg) -> str | None:
    from dpbench.data import catalog

    d = catalog.resolve_data_dir(cfg["data"]["dir"])
    return str(d) if d else None


EXPERIMENT_KEYS = ("name", "algorithms", "datasets", "epsilons", "deltas", "seeds", "tuning_mode", "split")


def cmd_sweep(overrides: list[str]) -> int:
    from dpbench.runner.execute import run_sweep

    cfg = _compose(overrides)
    exp = {k: cfg[k] for k in EXPERIMENT_KEYS}
    out = _sweep_dir(cfg)
    summary = run_sweep(exp, cfg["runner"], out, data_dir=_data_dir(cfg))
    print(f"{cfg['name']}: {summary['ran']} runs done, {summary['skipped']} already finished; results in {out}")
    _plot(cfg)
    _report(cfg)
    return 0


def _plot(cfg) -> None:
    from dpbench import plots, results

    df = results.load(_sweep_dir(cfg))
    if results.has_metrics(df).any():
        path = plots.draw(cfg["plot"], df, _sweep_dir(cfg) / f"{cfg['name']}.png", title=cfg["name"])
        print(f"figure: {path}")
    else:
        print("no successful runs: no figure drawn")


def _report(cfg) -> None:
    from dpbench import results
    from dpbench.report import summary_table

    df = results.load(_sweep_dir(cfg))
    print(summary_table(df, metric=cfg["plot"]["metric"]).to_string())
    plot = cfg["plot"]
    if plot["kind"] == "scatter" and plot["x"] and plot["y"]:
        from dpbench.plots.scatter import paired_means, win_counts

        metric = plot["metric"] or "test_mse"
        print(f"\ndatasets where {plot['y']} has lower {metric} than {plot['x']} (y_better), per epsilon:")
        print(win_counts(paired_means(df, plot["x"], plot["y"], metric), plot["x"], plot["y"]).to_string())


def cmd_plot(overrides: list[str]) -> int:
    _plot(_compose(overrides))
    return 0


def cmd_report(overrides: list[str]) -> int:
    _report(_compose(overrides))
    return 0


def cmd_data(argv: list[str]) -> int:
    from dpbench.data.cli import main

    return main(argv)


def _floats(text: str) -> list[float]:
    try:
        return [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise ValueError(f"expected comma-separated numbers, got {text!r}") from None


def _names(text: str) -> list[str]:
    return [v.strip() for v in text.split(",") if v.strip()]


class _OneLineParser(argparse.ArgumentParser):
    """argparse whose usage errors are ValueErrors, so main() reports them in one line (exit code 2)."""

    def error(self, message):
        raise ValueError(message)


AUDIT_COLUMNS = ["algorithm", "design", "epsilon", "eps_lb", "mu", "mu_lb", "runs", "failures", "verdict", "seconds"]


def cmd_audit(argv: list[str]) -> int:
    from dpbench.privacy.audit import DEFAULT_DELTA, DESIGNS

    parser = _OneLineParser(
        prog="python -m dpbench audit",
        description="Empirical privacy audit: fit every private algorithm RUNS times on a small dataset D and "
                    "RUNS times on D plus one crafted record (per design), choose a distinguishing test on half "
                    "of the fits and lower-bound epsilon (and mu for GDP algorithms) on the other half with "
                    "95% Clopper-Pearson intervals. Exit code 1 if a lower bound exceeds the budget asked for.",
    )
    parser.add_argument("--ledger", action="store_true",
                        help="only check that each algorithm's ledger composes to the budget (no empirical audit)")
    parser.add_argument("--algorithms", type=_names, help="comma-separated names (default: every private one)")
    parser.add_argument("--epsilons", type=str, help="comma-separated budgets (default 1; --full: 0.1,1,10)")
    parser.add_argument("--delta", type=float, default=DEFAULT_DELTA, help="delta of every fit (default %(default)g)")
    parser.add_argument("--runs", type=int, help="fits per side, D and D' (default 500; --full: 2000)")
    parser.add_argument("--designs", type=_names, help=f"comma-separated, from {', '.join(DESIGNS)} (default all)")
    parser.add_argument("--n-jobs", type=int, default=2, help="joblib workers (default %(default)s)")
    parser.add_argument("--seed", type=int, default=0, help="root of every fit's SeedSequence (default 0)")
    parser.add_argument("--out", default="results/audit", help="directory for audit.parquet / audit.png")
    parser.add_argument("--full", action="store_true", help="the `make audit` version: eps 0.1,1,10 and 2000 runs")
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help: nothing is run
        return int(exc.code or 0)
    if args.ledger:
        from dpbench.report import audit_ledgers

        table = audit_ledgers()
        print(table.to_string(index=False))
        return 0 if table["ok"].all() else 1

    import pandas as pd

    from dpbench.plots.audit import plot_audit
    from dpbench.privacy.audit import run_audit

    epsilons = _floats(args.epsilons) if args.epsilons is not None else ([0.1, 1.0, 10.0] if args.full else [1.0])
    runs = args.runs if args.runs is not None else (2000 if args.full else 500)
    if args.n_jobs < 1:
        raise ValueError(f"--n-jobs must be >= 1, got {args.n_jobs}")
    table = run_audit(args.algorithms, epsilons, args.designs, runs=runs, delta=args.delta, n_jobs=args.n_jobs,
                      seed=args.seed)
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


COMMANDS = {"sweep": cmd_sweep, "plot": cmd_plot, "report": cmd_report, "data": cmd_data, "audit": cmd_audit}


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(prog="python -m dpbench", usage=USAGE, add_help=False)
    parser.add_argument("command", nargs="?")
    parser.add_argument("-h", "--help", action="store_true")
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE)
        return 0
    command, rest = argv[0], argv[1:]
    if command not in COMMANDS:
        print(f"unknown command {command!r}; commands: {', '.join(COMMANDS)}", file=sys.stderr)
        return 2
    from dpbench.config import ConfigError
    from dpbench.data import MissingDataError

    try:
        return COMMANDS[command](rest)
    except (ConfigError, ValueError, FileNotFoundError, MissingDataError) as exc:
        print(f"dpbench {command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted; finished runs are saved, re-run the same command to resume", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
