"""`python -m dpbench <command>`: sweep, plot, report, data, audit."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

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
  audit   [--full] [...]      empirical privacy audit: fit each private algorithm many times on D and on D
                              plus one crafted record, lower-bound epsilon (see `audit --help`);
                              `audit --ledger`: check that each ledger composes to the requested budget
  algorithms [NAME]           the registered algorithms: task, privacy, parameters (defaults, constraints),
                              tuning ranges, what each implements
  --version                   dpbench's version
"""
HYDRA_COMMANDS = ("sweep", "plot", "report")  # composed by Hydra from conf/ (and ./conf)


def _sweep_dir(cfg) -> Path:
    return Path(cfg["results_dir"]) / cfg["name"]


def _data_dir(cfg) -> str | None:
    from dpbench.data import catalog

    d = catalog.resolve_data_dir(cfg["data"]["dir"])
    if d is not None and not d.is_dir():
        source = catalog.DATA_DIR_ENV if os.environ.get(catalog.DATA_DIR_ENV) else "data.dir"
        print(f"dpbench: warning: the data directory {d} (from {source}) does not exist: runs on real datasets will "
              "be missing_data (`python -m dpbench data list` shows what is available)", file=sys.stderr)
    return str(d) if d else None


def _missing_data(exp: dict, out: Path) -> tuple[int, int]:
    """Say on stderr which of this grid's runs could not run for missing data, and the fix (from the rows'
    error, which names the dataset and the import command).  Returns (missing runs, runs in the grid)."""
    from dpbench import results
    from dpbench.runner.grid import expand

    ids = {r.run_id for r in expand(exp)}
    df = results.load(out, expand_params=False)
    if not len(df):
        return 0, len(ids)
    missing = df[df["run_id"].isin(ids) & (df["status"] == "missing_data")]
    for dataset, rows in missing.groupby("dataset"):
        reason = " ".join(str(rows["error"].iloc[0]).split())
        print(f"dpbench sweep: warning: {len(rows)} run(s) on {dataset} did not run: {reason}", file=sys.stderr)
    return len(missing), len(ids)


def cmd_sweep(cfg: dict, dry_run: bool = False) -> int:
    from dpbench.config import experiment
    from dpbench.runner.execute import run_sweep

    exp, out = experiment(cfg), _sweep_dir(cfg)
    if dry_run:
        return _dry_run(exp, out, _data_dir(cfg), int(cfg["runner"]["n_jobs"]))
    start = time.perf_counter()
    try:
        summary = run_sweep(exp, cfg["runner"], out, data_dir=_data_dir(cfg))
    finally:
        _save_grid(exp, out)
    from dpbench.reproduction import log_sweep

    log_sweep(out, time.perf_counter() - start, summary["ran"])
    print(f"{cfg['name']}: {summary['ran']} runs done ({summary['retried']} of them retried), "
          f"{summary['skipped']} already finished; results in {out}")
    missing, total = _missing_data(exp, out)
    if total and missing == total:
        raise ValueError(f"none of the {total} runs could run: their data are missing (warnings above)")
    _plot(cfg)
    _report(cfg)
    return 0


def _save_grid(exp: dict, out: Path) -> None:
    """config-<config_hash>.json per grid ever run here (the runner's config.json is the latest): the rows'
    config_hash column names the file of the grid that made them."""
    from dpbench.runner.grid import stable_hash

    text = json.dumps(exp, indent=2, default=str)
    latest = out / "config.json"
    if latest.exists() and latest.read_text() == text:  # the runner got as far as starting this grid
        (out / f"config-{stable_hash(exp)}.json").write_text(text)


def _dry_run(exp: dict, out: Path, data_dir: str | None = None, n_jobs: int = 1) -> int:
    """What a sweep would do, reading only finished results (nothing is written): runs, fits, tuning studies,
    and a rough time from a calibration fit of each algorithm on the grid's smallest available dataset."""
    from dpbench import algorithms, results, tuning
    from dpbench.runner.grid import expand, group_units
    from dpbench.tuning.study import study_key

    runs = expand(exp)
    states = results.run_states(out)
    todo = [r for r in runs if r.run_id not in states.index or states.at[r.run_id, "status"] in
            results.RETRIED_STATUSES]
    retry = sum(r.run_id in states.index for r in todo)
    tuned = [r for r in todo if r.tuning_mode == "tuned"]
    studies = {study_key(r): r for r in tuned}
    trial_fits = sum(tuning.study_trials(algorithms.get_spec(r.algorithm), r.tuning) * r.tuning["seeds"]
                     for r in studies.values())
    print(f"{exp['name']}: {len(runs)} runs in the grid, {len(todo)} fits to do ({retry} of them retries, "
          f"{len(runs) - len(todo)} runs already finished) on {len(group_units(todo))} dataset split(s); "
          + (f"{len(studies)} tuning studies, up to {trial_fits} trial fits (finished trials are reused); "
             if studies else "") + f"results dir {out}; dry run: nothing fitted")
    if todo:
        from dpbench.runner.calibrate import estimate

        print(estimate(todo, studies.values(), data_dir, n_jobs))
    return 0


def _grid_results(cfg):
    """The results of exactly the runs of the configured grid (a directory may hold other grids' runs too)."""
    from dpbench import results
    from dpbench.config import experiment
    from dpbench.runner.grid import expand

    df = results.load(_sweep_dir(cfg))
    return df[df["run_id"].isin({r.run_id for r in expand(experiment(cfg))})]


def _plot(cfg) -> None:
    from dpbench import plots, results

    df = _grid_results(cfg)
    if results.has_metrics(df).any():
        path = plots.draw(cfg["plot"], df, _sweep_dir(cfg) / f"{cfg['name']}.png", title=cfg["name"])
        print(f"figure: {path} ({len(df)} runs)")
    else:
        print(f"no successful runs of this grid in {_sweep_dir(cfg)}: no figure drawn")


def _report(cfg) -> None:
    from dpbench.report import render

    df = _grid_results(cfg)
    if not len(df):
        print(f"no results of this grid in {_sweep_dir(cfg)} (run `sweep` with the same overrides)")
        return
    print(render(df, cfg["plot"]))


def cmd_plot(cfg: dict, dry_run: bool = False) -> int:
    _plot(cfg)
    return 0


def cmd_report(cfg: dict, dry_run: bool = False) -> int:
    _report(cfg)
    return 0


class _TaskError(BaseException):
    """Carries a command's error through Hydra, which would print a line of its own for an Exception and,
    in a multirun, go on to the next job."""


def _hydra(command: str, args: list[str]) -> int:
    """Run sweep/plot/report through Hydra's own entry point (@hydra.main), so --help, --cfg, --multirun and
    shell completion work.  Errors propagate (HYDRA_FULL_ERROR) so that main() prints them in one line."""
    import hydra
    from hydra._internal.utils import get_args_parser

    from dpbench import config
    from dpbench.config import check_syntax, compose, normalize_overrides, sweep_jobs, validate

    dry_run = "--dry-run" in args
    args = [a for a in args if a != "--dry-run"]
    if dry_run and command != "sweep":
        raise ValueError("--dry-run is an option of sweep only")
    parser = get_args_parser()
    parser.error = _OneLineParser.error.__get__(parser)  # a bad flag: one line, not Hydra's usage text
    flags, unknown = parser.parse_known_intermixed_args(args)
    if unknown:
        raise ValueError(f"unknown option(s) {' '.join(unknown)}; see `python -m dpbench {command} --help`")
    overrides = normalize_overrides(flags.overrides)
    check_syntax(overrides)
    config.check_user_configs()
    config.store()
    if flags.multirun:  # every job's config, before the first job writes anything
        for job in sweep_jobs(overrides):
            validate(compose(job))

    @hydra.main(config_path=str(config.CONF_DIR), config_name="config", version_base="1.3")
    def task(cfg) -> None:
        from hydra.core.hydra_config import HydraConfig
        from hydra.types import RunMode

        job = HydraConfig.get()
        if job.mode == RunMode.MULTIRUN:
            print(f"[multirun job {job.job.num}] {' '.join(job.overrides.task)}")
        try:
            COMMANDS[command](validate(cfg), dry_run)
        except Exception as exc:
            raise _TaskError(exc) from exc

    saved = sys.argv, os.environ.get("HYDRA_FULL_ERROR")
    options = [a for a in args if a not in flags.overrides]  # Hydra's parser wants the overrides together
    sys.argv = ["dpbench", *options, f"hydra.job.name={command}", *overrides, *config.searchpath()]
    os.environ["HYDRA_FULL_ERROR"] = "1"
    try:
        task()
    except _TaskError as err:
        raise err.args[0] from None
    except SystemExit as done:  # --help, --info, -sc: Hydra exits after printing
        return done.code if isinstance(done.code, int) else 0
    finally:
        sys.argv = saved[0]
        if saved[1] is None:
            os.environ.pop("HYDRA_FULL_ERROR")
        else:
            os.environ["HYDRA_FULL_ERROR"] = saved[1]
    return 0


def _complete(args: list[str]) -> int:
    """Tab completion: Hydra's completion script (`dpbench sweep -sc install=bash`) calls `dpbench -sc query=bash`
    with the line in COMP_LINE; complete the command here and a command's overrides with Hydra, without the
    command word (Hydra strips only the program name)."""
    line = os.environ.get("COMP_LINE", "")
    words = line.split()
    if len(words) < 2 or (len(words) == 2 and not line.endswith(" ")):
        prefix = words[1] if len(words) == 2 else ""
        print(" ".join(c for c in COMMANDS if c.startswith(prefix)))
        return 0
    if words[1] not in HYDRA_COMMANDS:
        return 0
    from dpbench.config import GROUPS, options

    current = "" if line.endswith(" ") else words[-1]
    group, _, prefix = current.lstrip("+").partition("=")
    if group in GROUPS and "=" in current:  # nested options (experiment=smoke/fig1) too, which Hydra omits
        print(" ".join(f"{current[: len(current) - len(prefix)]}{o}" for o in options(group) if o.startswith(prefix)))
        return 0
    os.environ["COMP_LINE"] = line.replace(f" {words[1]}", "", 1)
    return _hydra(words[1], args)


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
    parser.add_argument("--dry-run", action="store_true", help="print the number of audits and fits, fit nothing")
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help: nothing is run
        return int(exc.code or 0)
    if args.ledger:
        from dpbench.report import audit_ledgers

        table = audit_ledgers(names=args.algorithms)
        print(table.to_string(index=False))
        return 0 if table["ok"].all() else 1

    import pandas as pd

    from dpbench.plots.audit import plot_audit
    from dpbench.privacy.audit import run_audit

    epsilons = _floats(args.epsilons) if args.epsilons is not None else ([0.1, 1.0, 10.0] if args.full else [1.0])
    runs = args.runs if args.runs is not None else (2000 if args.full else 500)
    if args.n_jobs < 1:
        raise ValueError(f"--n-jobs must be >= 1, got {args.n_jobs}")
    if args.dry_run:
        from dpbench import algorithms
        from dpbench.privacy.audit import check_request

        names, designs = check_request(args.algorithms, epsilons, args.designs, runs, args.delta)
        pairs = sum(DESIGNS[d](algorithms.get_spec(n)) is not None for n in names for d in designs)
        print(f"{pairs * len(epsilons)} audits ({pairs} algorithm x design pairs x {len(epsilons)} epsilon(s)), "
              f"{2 * runs * pairs * len(epsilons)} fits; dry run: nothing fitted")
        return 0
    table = run_audit(args.algorithms, epsilons, args.designs, runs=runs, delta=args.delta, n_jobs=args.n_jobs,
                      seed=args.seed, progress=_progress_line)
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


def cmd_reproduction_report(argv: list[str]) -> int:
    """`report` without an experiment: the reproduction report of everything under results_dir."""
    from dpbench.reproduction import VERDICTS, write

    results_dir = argv[-1].split("=", 1)[1] if argv else "results"
    html_path, md_path, secs = write(results_dir)
    for s in secs:
        for c, v in s.claims:
            print(f"[{VERDICTS[v.holds]:>14}] {s.name}: {c.text} -- {v.measured}")
    print(f"report: {html_path} and {md_path} ({len(secs)} sections)")
    return 0


def cmd_analysis(argv: list[str]) -> int:
    import time

    from dpbench import analyses

    parser = _OneLineParser(prog="python -m dpbench analysis",
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
    print(f"{args.name}: done in {time.perf_counter() - start:.1f} s; wrote {', '.join(map(str, written))}")
    return 0


def _constraint_text(constraints) -> str:
    from sklearn.utils._param_validation import make_constraint

    if constraints == "no_validation":
        return "any"
    return " or ".join(str(make_constraint(c)) for c in constraints)


def _range_text(space: dict) -> str:
    if space["type"] == "categorical":
        return "one of " + ", ".join(map(str, space["choices"]))
    return f"{space['type']} in [{space['low']:g}, {space['high']:g}]" + (", log scale" if space.get("log") else "")


def cmd_algorithms(argv: list[str]) -> int:
    """Every registered algorithm (or one, NAME) with what a user needs to run it."""
    from dpbench import algorithms

    parser = argparse.ArgumentParser(prog="python -m dpbench algorithms",
                                     description="The registered algorithms; with NAME, one in full.")
    parser.add_argument("name", nargs="?", help="an algorithm name (default: a line each)")
    args = parser.parse_args(argv)
    if args.name is None:
        for name in algorithms.available():
            spec = algorithms.get_spec(name)
            print(f"{name:24s} {spec.task:15s} {_privacy_text(spec):14s} {spec.description}")
        print("\n`python -m dpbench algorithms NAME` for parameters and tuning ranges")
        return 0
    spec = algorithms.get_spec(args.name)  # ValueError naming the valid ones
    est = spec.estimator
    print(f"{spec.name}: {spec.label or spec.name} ({spec.task}; privacy: {_privacy_text(spec)})")
    print(f"  {spec.description}")
    print(f"  class {est.__module__}.{est.__name__} (its docstring gives the argument and the sources)")
    print("  parameters (default; constraint):")
    defaults = est().get_params()
    for key, value in defaults.items():
        print(f"    {key} = {value!r}; {_constraint_text(est._parameter_constraints.get(key, 'no_validation'))}")
    if spec.tuning_space:
        print("  tuned (paper 000 Table I ranges):")
        for key, space in spec.tuning_space.items():
            print(f"    {key}: {_range_text(space)}")
    return 0


def _privacy_text(spec) -> str:
    if not spec.private:
        return "none"
    return "mu-GDP" if getattr(spec.estimator, "composes_in_gdp", True) else "(eps, delta)"


def cmd_version(argv: list[str]) -> int:
    from dpbench import __version__

    print(f"dpbench {__version__}")
    return 0


COMMANDS = {"sweep": cmd_sweep, "plot": cmd_plot, "report": cmd_report, "data": cmd_data, "audit": cmd_audit,
            "analysis": cmd_analysis, "algorithms": cmd_algorithms, "--version": cmd_version}


def _terminated(signum, frame):
    """SIGTERM (a job scheduler, `kill`) ends a command like Ctrl-C: workers stopped, finished runs kept."""
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    """Exit codes: 0 done, 1 an audit violation, 2 a usage or config error (one line on stderr), 130 interrupted
    (Ctrl-C or SIGTERM)."""
    import signal
    import threading

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _terminated)
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE)
        return 0
    if argv[0] in ("-sc", "--shell-completion"):
        return _complete(argv)
    command, rest = argv[0], argv[1:]
    if command not in COMMANDS:
        print(f"dpbench: error: unknown command {command!r}; commands: {', '.join(COMMANDS)}", file=sys.stderr)
        return 2
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    from dpbench.config import one_line
    from dpbench.data import MissingDataError

    try:
        if command == "report" and all(a.startswith("results_dir=") for a in rest):
            return cmd_reproduction_report(rest)
        return _hydra(command, rest) if command in HYDRA_COMMANDS else COMMANDS[command](rest)
    except SystemExit as done:  # e.g. `data --help`: argparse exits after printing
        return done.code if isinstance(done.code, int) else 0
    except (ValueError, FileNotFoundError, MissingDataError) as exc:
        print(f"dpbench {command}: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    except (HydraException, OmegaConfBaseException) as exc:
        print(f"dpbench {command}: error: {one_line(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted; finished runs are saved, re-run the same command to resume", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
