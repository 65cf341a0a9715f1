"""`python -m dpbench leaderboard`: the private leaderboard's runs (adopted where another experiment ran them, the
rest swept, resumable) and its board (ranks, tests, figures, the cost of honest tuning)."""

from __future__ import annotations

import sys
from pathlib import Path

from dpbench.cli.parsing import OneLineParser


def main(argv: list[str]) -> int:
    parser = OneLineParser(
        prog="python -m dpbench leaderboard",
        description="Run the private leaderboard's protocol (experiment/leaderboard.yaml, leaderboard_clf.yaml: "
                    "every task of the data mirror, eps 0.1/1/10, 3 seeds, in the modes fixed, private_selection "
                    "and tuned) and write its board: average ranks with the Friedman test and critical-difference "
                    "diagrams, win rates, performance profiles, and what honest tuning costs. Runs another "
                    "experiment of the reference results already ran are adopted, not re-run; an interrupted run "
                    "resumes. With --algorithm, only that algorithm runs (into RESULTS_DIR/leaderboard-NAME) and is "
                    "ranked against the reference leaderboard's entries.",
    )
    parser.add_argument("--algorithm", action="append", default=[], metavar="NAME",
                        help="a registered algorithm (yours: with --imports) to run through the protocol; "
                             "repeatable (default: every algorithm of the leaderboard)")
    parser.add_argument("--imports", action="append", default=[], metavar="MODULE",
                        help="a module of yours that registers algorithms (dpbench.extend); repeatable")
    parser.add_argument("--task", choices=["regression", "classification"], action="append", default=[],
                        help="only this task's leaderboard (default: both, or the tasks of --algorithm)")
    parser.add_argument("--results-dir", default="results", help="where the runs and the board go (default "
                                                                 "%(default)s)")
    parser.add_argument("--reference", default="results/reference",
                        help="results whose runs are adopted and whose leaderboard a --algorithm joins (default "
                             "%(default)s)")
    parser.add_argument("--smoke", action="store_true", help="the small version (two tasks, eps 1, short "
                                                             "studies): seconds to minutes")
    parser.add_argument("--dry-run", action="store_true", help="say what would run, run nothing")
    parser.add_argument("overrides", nargs="*", metavar="key=value", help="config overrides, e.g. runner.n_jobs=1")
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    import pandas as pd

    from dpbench import algorithms, results
    from dpbench import leaderboard as lb
    from dpbench.config import compose, experiment, load_user_imports, to_container

    load_user_imports(args.imports)
    specs = [algorithms.get_spec(name) for name in args.algorithm]  # an unknown name: one line naming it
    tasks = args.task or sorted({s.task for s in specs}) or list(lb.EXPERIMENTS)
    for task in tasks:
        name = lb.EXPERIMENTS[task]
        overrides = [f"experiment={'smoke/' if args.smoke else ''}{name}", f"results_dir={args.results_dir}",
                     *args.overrides]
        own = [s for s in specs if s.task == task]
        if specs and not own:
            continue
        if own:
            entries = [{"name": s.name, "modes": list(lb.modes_of(s))} for s in own]
            label = "-".join(s.name for s in own)
            overrides += [f"algorithms={_hydra(entries)}", f"name={name}-{label}"]
            if args.imports:
                overrides.append(f"imports={_hydra(args.imports)}")
        cfg = to_container(compose(overrides))
        exp = experiment(cfg)
        sweep_dir = Path(cfg["results_dir"]) / cfg["name"]
        from dpbench.runner.grid import expand

        runs = expand(exp)
        if args.dry_run:
            print(f"{cfg['name']}: {len(runs)} runs; {len(lb.adoptable(runs, sweep_dir, args.reference))} of them "
                  f"finished in {args.reference} (would be adopted); `sweep experiment={name} --dry-run` estimates "
                  "the rest")
            continue
        adopted = lb.adopt(runs, sweep_dir, args.reference)
        print(f"{cfg['name']}: adopted {adopted} finished runs from {args.reference}", file=sys.stderr)
        from dpbench.cli.sweep import cmd_sweep

        cmd_sweep(cfg)
        rows = results.load(sweep_dir)
        reference = Path(args.reference) / (name + ("_smoke" if args.smoke else ""))
        joined = bool(own) and (reference / results.PARTS).is_dir()
        if joined:  # the others' entries, from the reference board
            others = results.load(reference)
            rows = pd.concat([rows, others[~others["algorithm"].isin([s.name for s in own])]], ignore_index=True)
        written = lb.write_board(rows, sweep_dir / lb.BOARD)
        if joined:  # the sweep's summary ranked the new entries alone: the joined board
            from dpbench.plots.leaderboard import board_summary

            print(board_summary(rows))
        print(f"{cfg['name']}: board in {written[0].parent}")
    return 0


def _hydra(value) -> str:
    """A list, mapping or name as a Hydra override value ({k: v}, [a, b]: the override grammar's, unquoted)."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_hydra(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_hydra(v) for v in value) + "]"
    return str(value)
