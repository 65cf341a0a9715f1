"""The experiment commands, composed by Hydra (cli.hydra): `sweep` (and its dry run), `plot` and `report`; and
`report` without an experiment, the reproduction report.  dpbench.cli imports this module for the command names,
so its imports are inside the functions (`--help` stays fast)."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from dpbench.cli import timing

command_started = time.perf_counter()  # dpbench.cli.main resets it: a dry run's estimate scales with its start-up


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


def _outcomes(grid) -> str:
    """'ok 10, fallback 2 (ptr_failed 2), failed 1 (error 1), missing data 4': the grid's runs by status.  A
    fallback is an algorithm's own released outcome (it has metrics, and the figures and claims count it as the
    run's result); failed: a harness failure without a model (an error, unreadable data), retried next time."""
    import pandas as pd

    from dpbench.results import NO_MODEL_STATUSES

    status = grid["status"] if "status" in grid else pd.Series([], dtype=object)

    def counted(word: str, mask) -> str:
        found = status[mask].value_counts()
        return f"{word} {found.sum()}" + (f" ({', '.join(f'{k} {n}' for k, n in found.items())})" if len(found) else "")

    failed = status.isin(NO_MODEL_STATUSES) & (status != "missing_data")
    return (f"ok {(status == 'ok').sum()}, {counted('fallback', ~status.isin(['ok', *NO_MODEL_STATUSES]))}, "
            f"{counted('failed', failed)}, missing data {(status == 'missing_data').sum()}")


def _missing_data(grid) -> int:
    """Say on stderr, in one line, which datasets of the grid (`grid`: its rows) are missing, and the first one's
    reason and fix (each row's error names them; `data list` says it for each).  Returns how many runs."""
    missing = grid[grid["status"] == "missing_data"]
    if len(missing):
        names = sorted(missing["dataset"].unique())
        reason = " ".join(str(missing.loc[missing["dataset"] == names[0], "error"].iloc[0]).split())
        print(f"dpbench sweep: warning: {len(missing)} run(s) on {len(names)} missing dataset(s) did not run "
              f"({', '.join(names)}); the first: {reason} (`python -m dpbench data list` for each)", file=sys.stderr)
    return len(missing)


def cmd_sweep(cfg: dict, dry_run: bool = False) -> int:
    from dpbench import results
    from dpbench.config import experiment
    from dpbench.runner.sweep import run_sweep

    exp, out = experiment(cfg), _sweep_dir(cfg)
    if dry_run:
        return _dry_run(exp, out, _data_dir(cfg), cfg["runner"], Path(cfg["results_dir"]) / results.STUDIES)
    from dpbench.reproduction import log_sweep

    start = time.perf_counter()
    try:
        summary = run_sweep(exp, cfg["runner"], out, data_dir=_data_dir(cfg),
                            studies_dir=Path(cfg["results_dir"]) / results.STUDIES)
    except KeyboardInterrupt:  # Ctrl-C, SIGTERM: its time counts too (a sweep resumed over several commands)
        if out.is_dir():
            log_sweep(out, time.perf_counter() - start, None)
        raise
    finally:
        _save_grid(exp, out)
    log_sweep(out, time.perf_counter() - start, summary["ran"])
    timing.mark("swept")
    grid = _grid_results(cfg)  # read once for the warnings, the figure and the summary
    timing.mark("results")
    print(f"{cfg['name']}: {len(grid)} runs in the grid: {_outcomes(grid)}; this sweep tried {summary['ran']} "
          f"({summary['retried']} of them retries), {summary['skipped']} were already finished; results in {out}")
    if len(grid) and _missing_data(grid) == len(grid):
        raise ValueError(f"none of the {len(grid)} runs could run: their data are missing (warnings above)")
    _plot(cfg, grid)
    timing.mark("figure")
    _report(cfg, grid)
    timing.mark("summary")
    return 0


def _save_grid(exp: dict, out: Path) -> None:
    """config-<config_hash>.json per grid ever run here (the runner's config.json is the latest): the rows'
    config_hash column names the file of the grid that made them."""
    from dpbench.runner.grid import stable_hash

    text = json.dumps(exp, indent=2, default=str)
    latest = out / "config.json"
    if latest.exists() and latest.read_text() == text:  # the runner got as far as starting this grid
        (out / f"config-{stable_hash(exp)}.json").write_text(text)


def _dry_run(exp: dict, out: Path, data_dir: str | None, runner: dict, studies_dir: Path) -> int:
    """What a sweep would do, reading only finished results and studies (nothing is written): runs, fits, tuning
    studies and their trials still to run, and its time (runner.estimate: calibration fits of each setting on
    one dataset of the grid, a cost model, the runner's schedule)."""
    from dpbench import algorithms, results, tuning
    from dpbench.runner.cost_model import loads_here, trials_left
    from dpbench.runner.grid import expand, group_units
    from dpbench.tuning.study import study_key

    runs = expand(exp)
    states = results.run_states(out)
    todo = runs_to_do(runs, states)
    retry = sum(r.run_id in states.index for r in todo)
    tuned = [r for r in todo if r.tuning_mode == "tuned"]
    studies = {study_key(r): r for r in tuned}
    trial_fits = {k: tuning.study_trials(algorithms.get_spec(r.algorithm), r.tuning) * r.tuning["seeds"]
                  for k, r in studies.items()}
    left = sum(round(n * trials_left(studies[k], studies_dir)) for k, n in trial_fits.items()
               if loads_here(studies[k], data_dir))
    print(f"{exp['name']}: {len(runs)} runs in the grid, {len(todo)} fits to do ({retry} of them retries, "
          f"{len(runs) - len(todo)} runs already finished) on {len(group_units(todo))} dataset split(s); "
          + (f"{len(studies)} tuning studies, {left} of their {sum(trial_fits.values())} trial fits to run "
             "(finished trials are reused; none on missing data); " if studies else "")
          + f"results dir {out}; dry run: nothing fitted")
    if todo:
        print(time_estimate(todo, runner, data_dir, studies_dir, time.perf_counter() - command_started).describe())
    return 0


def runs_to_do(runs: list, states) -> list:
    """The runs a sweep would fit: those with no row in `states` (results.run_states) or a harness failure."""
    from dpbench import results

    return [r for r in runs if r.run_id not in states.index or states.at[r.run_id, "status"] in
            results.RETRIED_STATUSES]


def time_estimate(todo: list, runner: dict, data_dir: str | None, studies_dir: Path, startup: float,
                  done_studies: dict[str, int] | None = None):
    """The dry run's estimate (runner.estimate.Estimate) of sweeping `todo`; it calibrates (seconds).
    `startup`: seconds the sweep command takes to start; `done_studies`: see runner.estimate.estimate."""
    from dpbench.runner.estimate import estimate
    from dpbench.runner.grid import chunk_units, group_units
    from dpbench.runner.sweep import settings

    runner = settings(runner)
    return estimate(todo, chunk_units(group_units(todo), runner.chunk_runs), runner, data_dir, studies_dir,
                    startup=startup, done_studies=done_studies)


def _grid_results(cfg):
    """The results of exactly the runs of the configured grid (a directory may hold other grids' runs too)."""
    from dpbench import results
    from dpbench.config import experiment
    from dpbench.runner.grid import expand

    df = results.load(_sweep_dir(cfg))
    return df[df["run_id"].isin({r.run_id for r in expand(experiment(cfg))})]


def figure_path(cfg) -> Path:
    """`<name>.png` for the grid of `experiment=<name>` as it ships (or a name no experiment has);
    `<name>-<grid hash>.png` for another grid written to that directory (overrides such as dataset=, epsilons=,
    a multirun's jobs), beside its `config-<grid hash>.json`: a sub-grid's figure never replaces another's."""
    from dpbench import config
    from dpbench.runner.grid import stable_hash

    grid, name = stable_hash(config.experiment(cfg)), cfg["name"]
    if name in config.experiment_names():
        shipped = config.experiment(config.validate(config.compose([f"experiment={name}"])))
        if stable_hash(shipped) != grid:
            return _sweep_dir(cfg) / f"{name}-{grid}.png"
    return _sweep_dir(cfg) / f"{name}.png"


def _plot(cfg, df=None) -> None:
    """The grid's figure from its rows (`df`, read if not given)."""
    from dpbench import plots, results

    df = _grid_results(cfg) if df is None else df
    if results.has_metrics(df).any():
        path = plots.draw(cfg["plot"], df, figure_path(cfg), title=cfg["name"])
        print(f"figure: {path} ({len(df)} runs)")
    else:
        print(f"no successful runs of this grid in {_sweep_dir(cfg)}: no figure drawn")


def _report(cfg, df=None) -> None:
    from dpbench.summary import render

    df = _grid_results(cfg) if df is None else df
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


TASKS = {"sweep": cmd_sweep, "plot": cmd_plot, "report": cmd_report}  # cli.hydra runs them on the composed config


def reproduction_report(argv: list[str]) -> int:
    """`report` without an experiment: the reproduction report of everything under results_dir."""
    from dpbench.claims import claims
    from dpbench.reproduction import SMOKE, VERDICTS, write

    results_dir = argv[-1].split("=", 1)[1] if argv else "results"
    html_path, md_path, secs = write(results_dir)
    judged = [s for s in secs if s.claims and not s.error]
    for s in judged:
        for c, v in s.claims:
            print(f"[{VERDICTS[v.holds]:>14}] {s.name}: {c.text} -- {v.measured}")
    rest = {"not run": sum(len(s.claims) for s in secs if s.error == "not run"),
            "not at the paper's settings": sum(len(claims(s.name)) for s in secs if s.not_judged),
            "smoke": sum(len(claims(s.name.removesuffix(SMOKE))) for s in secs if s.smoke)}
    counts = ", ".join(f"{k} {n}" for k, n in rest.items() if n)
    print(f"report: {html_path} and {md_path} ({len(secs)} sections; "
          f"{sum(len(s.claims) for s in judged)} claims judged" + (f"; not judged: {counts}" if counts else "") + ")")
    return 0
