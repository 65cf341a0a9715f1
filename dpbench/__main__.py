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
  audit                       fit every registered private algorithm on a small synthetic set and check
                              that its privacy ledger composes to the requested budget
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


def cmd_audit(argv: list[str]) -> int:
    from dpbench.report import audit_ledgers

    table = audit_ledgers()
    print(table.to_string(index=False))
    return 0 if table["ok"].all() else 1


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
