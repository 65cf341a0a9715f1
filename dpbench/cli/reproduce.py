"""`python -m dpbench reproduce [--dry-run] [--paper NNN]`: the whole reproduction, one command.

PARTS is the one list of what the papers' figures, tables, claims and diagnoses need: every sweep before the
analyses that read it, the report last.  `make reproduce-all` and `make reproduce-paperNNN` call this command, and
a test checks the list against the shipped experiments, the analyses and the claims, so a new figure cannot be
left out.  Each part runs as its own `python -m dpbench sweep|analysis` command (a sweep resumes as that command
does); an analysis already finished (its log newer than every result it reads) is skipped.

Estimates, made for every part before the first runs: a sweep's is its dry run's (`sweep --dry-run`: calibration
fits of its settings, a few seconds a sweep, then the cost model and the runner's schedule); an analysis' is the
wall time of its last reference run (results/reference/NAME/sweeps.jsonl: the same settings, measured on the 2-core
build machine), unknown without one; the report's is unknown.  Unknown parts are counted apart, not guessed.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from dpbench.cli.parsing import OneLineParser

SWEEP, ANALYSIS, REPORT = "sweep", "analysis", "report"


@dataclass(frozen=True)
class Part:
    name: str  # the experiment (sweep) or analysis
    kind: str  # SWEEP, ANALYSIS or REPORT
    paper: str  # '000' ... '004' ('' for the report)
    needs: tuple[str, ...] = ()  # the parts whose results it reads (they run first)


_P000_SWEEPS = ("fig1", "fig1_fixed", "fig1_split", "fig2", "fig3", "fig4", "fig5", "fig12",
                "robust_label", "robust_feature", "robust_model")
PARTS: tuple[Part, ...] = (
    *(Part(name, SWEEP, "000") for name in _P000_SWEEPS),  # Figs 1-5, 12 (and Fig. 1 variants), Figs 6-11
    Part("theory", ANALYSIS, "000"),
    Part("diagnose_fig2", ANALYSIS, "000", ("fig2", "fig3", "fig4", "fig5")),
    Part("diagnose_fig4", ANALYSIS, "000", ("fig4",)),
    Part("diagnose_robust", ANALYSIS, "000", ("robust_label", "robust_feature")),
    Part("clf_fig1", ANALYSIS, "001"),
    Part("paper001", SWEEP, "001"),  # Figs 2-4, 6-10 (DP-XGBoost to 1000 trees)
    Part("paper001_leaves", SWEEP, "001"),  # Fig. 5, into results/paper001
    Part("clf_timing", ANALYSIS, "001"),
    Part("paper001_figures", ANALYSIS, "001", ("paper001", "paper001_leaves")),
    Part("diagnose_dpxgb", ANALYSIS, "001", ("paper001",)),
    Part("diagnose_paper001", ANALYSIS, "001", ("paper001",)),
    Part("paper003", ANALYSIS, "003"),
    Part("paper004_fig1", ANALYSIS, "004"),
    Part("paper004_corruption", ANALYSIS, "004"),
    Part("paper004_fig1_eps0.1", ANALYSIS, "004"),
)
PAPERS = tuple(dict.fromkeys(p.paper for p in PARTS))
# shipped experiments and analyses that are not part of the reproduction, and why
LEFT_OUT = {
    "quickstart": "the offline demo",
    "zoo": "every algorithm on synthetic data: a demo",
    "leaderboard": "the private leaderboard (`python -m dpbench leaderboard`), beyond the papers",
    "leaderboard_clf": "the private leaderboard (`python -m dpbench leaderboard`), beyond the papers",
}


def parts(paper: str | None = None) -> list[Part]:
    """The parts of one paper (all: None) in order, then the report (of whatever has run: it reads no part's
    results in particular, so a failed part does not stop it)."""
    return [p for p in PARTS if paper in (None, p.paper)] + [Part("report", REPORT, "")]


@dataclass
class Step:
    """A part as this run will do it: what is left of it and its estimate (seconds; None: unknown)."""
    part: Part
    out: Path  # its results directory
    work: str  # what is left, e.g. '1188 runs to do'
    seconds: float | None
    how: str  # where the estimate comes from
    skip: bool = False  # finished: nothing to run
    busy: bool = True  # it writes new results (its dependents are then stale)


def hours(seconds: float | None) -> str:
    if seconds is None:
        return "unknown"
    return f"{seconds / 3600:.2f} h" if seconds == 0 or seconds >= 18 else "<0.01 h"


def reference_seconds(name: str) -> float | None:
    """The wall time of the analysis `name`'s last reference run (its log's last line: an analysis runs whole each
    time and logs only when it finishes), or None."""
    from dpbench import reference
    from dpbench.reproduction import SWEEP_LOG

    log = reference.DIR / name / SWEEP_LOG
    lines = log.read_text().strip().splitlines() if log.is_file() else []
    return float(json.loads(lines[-1])["seconds"]) if lines else None


def _changed(step: Step) -> float:
    """When a part's results last changed (0: none): a sweep's newest result part (its log gets a line even when
    it ran nothing), an analysis' log (a line once it has finished)."""
    from dpbench import results
    from dpbench.reproduction import SWEEP_LOG

    files = (step.out / results.PARTS).glob("part-*.parquet") if step.part.kind == SWEEP else [step.out / SWEEP_LOG]
    return max((f.stat().st_mtime for f in files if f.is_file()), default=0.0)


def _plan_sweep(part: Part, results_dir: Path, planned: dict[Path, set], studies: dict[str, int],
                startup: list[float]) -> Step:
    """The sweep's runs to do (not finished here, nor counted by an earlier part writing to the same directory)
    and its dry run's estimate, without the study trials an earlier part runs (`studies`: key -> trials, updated
    here; the parts share one studies directory, and Figs 1-5 share their BoostedAdaSSP studies)."""
    from dpbench import algorithms, config, results
    from dpbench.cli import sweep
    from dpbench.runner.grid import expand
    from dpbench.tuning import study_trials
    from dpbench.tuning.study import study_key

    cfg = config.validate(config.compose([f"experiment={part.name}", f"results_dir={results_dir}"]))
    out = results_dir / cfg["name"]
    seen = planned.setdefault(out, set())
    todo = [r for r in sweep.runs_to_do(expand(config.experiment(cfg)), results.run_states(out))
            if r.run_id not in seen]
    seen.update(r.run_id for r in todo)
    if not startup:  # a sweep command's start-up, taken as this process's to its first sweep's estimate
        startup.append(time.perf_counter() - sweep.command_started)
    if not todo:
        return Step(part, out, "0 runs to do (figure and summary only)", startup[0], "its start-up", busy=False)
    est = sweep.time_estimate(todo, cfg["runner"], sweep._data_dir(cfg), results_dir / results.STUDIES, startup[0],
                              dict(studies))
    for r in todo:
        if r.tuning_mode == "tuned":
            key, trials = study_key(r), study_trials(algorithms.get_spec(r.algorithm), r.tuning)
            studies[key] = max(studies.get(key, 0), trials)
    if est.parts is None:
        return Step(part, out, f"{len(todo)} runs to do", None, "no dataset of it loads here")
    return Step(part, out, f"{len(todo)} runs to do", est.seconds, f"calibrated on {est.calibrated_on}")


def _plan_analysis(part: Part, results_dir: Path, steps: dict[str, Step]) -> Step:
    """Skipped when finished: its log newer than every result it reads, none of which this run changes."""
    from dpbench.reproduction import SWEEP_LOG

    step = Step(part, results_dir / part.name, "to run", None, "")
    needs = [steps[n] for n in part.needs]
    if (step.out / SWEEP_LOG).is_file() and not any(s.busy for s in needs) and all(
            _changed(s) <= _changed(step) for s in needs):
        return Step(part, step.out, "finished", 0.0, "skipped", skip=True, busy=False)
    step.seconds = reference_seconds(part.name)
    step.how = "no reference run" if step.seconds is None else "its reference run's wall time"
    return step


def plan(todo: list[Part], results_dir: Path) -> list[Step]:
    """Every part's step, in order (the sweeps' estimates calibrate: seconds each)."""
    steps: dict[str, Step] = {}
    planned: dict[Path, set] = {}
    studies: dict[str, int] = {}
    startup: list[float] = []
    for part in todo:
        if part.kind == SWEEP:
            steps[part.name] = _plan_sweep(part, results_dir, planned, studies, startup)
        elif part.kind == ANALYSIS:
            steps[part.name] = _plan_analysis(part, results_dir, steps)
        else:
            steps[part.name] = Step(part, results_dir, "the reproduction report", None, "not measured")
    return list(steps.values())


def _total(steps: list[Step], planning: float) -> tuple[float, list[str]]:
    """The known estimates' sum with the planning's time, and the parts without one."""
    return (planning + sum(s.seconds for s in steps if s.seconds is not None),
            [s.part.name for s in steps if s.seconds is None])


def _of(total: float, unknown: list[str]) -> str:
    return f"~{hours(total)}" + (f" + {len(unknown)} unknown" if unknown else "")


def progress_line(i: int, n: int, step: Step, elapsed: float, total: float, unknown: list[str]) -> str:
    """The line printed before a part runs, e.g. '[3/17] fig3: 1242 runs to do, ~0.40 h estimated (elapsed 1.20 h
    of ~2.90 h)'."""
    est = "estimate unknown" if step.seconds is None else f"~{hours(step.seconds)} estimated"
    return f"[{i}/{n}] {step.part.name}: {step.work}, {est} (elapsed {hours(elapsed)} of {_of(total, unknown)})"


def command(step: Step, results_dir: Path) -> list[str]:
    """The dpbench command that runs a part."""
    base = [sys.executable, "-m", "dpbench"]
    if step.part.kind == SWEEP:
        return [*base, "sweep", f"experiment={step.part.name}", f"results_dir={results_dir}"]
    if step.part.kind == ANALYSIS:
        return [*base, "analysis", step.part.name, "--results-dir", str(results_dir)]
    return [*base, "report", f"results_dir={results_dir}"]


def _call(cmd: list[str]) -> int:
    """Run a part's command; interrupted (Ctrl-C reaches it too; SIGTERM only this process), it gets 10 s to stop
    as it does on Ctrl-C, then SIGTERM (it saves its finished runs either way): never killed outright."""
    sys.stdout.flush()
    child = subprocess.Popen(cmd)
    try:
        return child.wait()
    except KeyboardInterrupt:
        try:
            child.wait(timeout=10)
        except subprocess.TimeoutExpired:
            child.terminate()
            child.wait()
        return 130


def dry_run(steps: list[Step], results_dir: Path, seconds: float) -> int:
    """Print each step's estimate and the total (`seconds`: the planning's, which a real run spends too)."""
    for i, s in enumerate(steps, 1):
        est = "skipped" if s.skip else ("estimate unknown" if s.seconds is None else f"~{hours(s.seconds)}")
        print(f"[{i}/{len(steps)}] {s.part.name} ({s.part.kind}): {s.work}, {est} ({s.how})")
    total, unknown = _total(steps, seconds)
    print(f"total: ~{hours(total)} estimated for {len(steps) - len(unknown)} part(s) (and {seconds:.0f} s of this "
          "planning)" + (f"; unknown: {len(unknown)} ({', '.join(unknown)})" if unknown else "")
          + f"; into {results_dir}/; dry run: nothing ran, nothing written")
    return 0


def run(steps: list[Step], results_dir: Path, started: float) -> int:
    """Run the steps in order: a progress line before each, its wall time after; a part whose needs failed is
    skipped.  Exit code 0, 1 when a part failed, 130 interrupted."""
    total, unknown = _total(steps, time.perf_counter() - started)
    failed: list[str] = []
    n = len(steps)
    for i, s in enumerate(steps, 1):
        name = s.part.name
        if s.skip:
            print(f"[{i}/{n}] {name}: finished, skipped")
            continue
        broken = [need for need in s.part.needs if need in failed]
        if broken:
            print(f"[{i}/{n}] {name}: skipped, it reads {', '.join(broken)}, which failed")
            failed.append(name)
            continue
        print(progress_line(i, n, s, time.perf_counter() - started, total, unknown))
        start = time.perf_counter()
        code = _call(command(s, results_dir))
        took = time.perf_counter() - start
        if code == 130:
            print(f"[{i}/{n}] {name}: interrupted after {hours(took)}; re-run to resume", file=sys.stderr)
            return 130
        outcome = "done" if code == 0 else f"failed (exit code {code})"
        print(f"[{i}/{n}] {name}: {outcome} in {hours(took)} (estimated {hours(s.seconds)})")
        if code:
            failed.append(name)
    print(f"reproduce: {n} parts in {hours(time.perf_counter() - started)} (estimated {_of(total, unknown)})"
          + (f"; failed: {', '.join(failed)}" if failed else f"; report: {results_dir}/report.html"))
    return 1 if failed else 0


def parser() -> OneLineParser:
    found = OneLineParser(prog="python -m dpbench reproduce",
                          description="Every sweep and analysis of the papers in order, then the report "
                                      "(resumable: finished runs and analyses are skipped).")
    found.add_argument("--dry-run", action="store_true",
                       help="print each part's estimate and the total in hours; run and write nothing")
    found.add_argument("--paper", choices=PAPERS, help="only this paper's parts (then the report)")
    found.add_argument("--results-dir", default="results", help="where the results go (default %(default)s)")
    return found


def main(argv: list[str]) -> int:
    from dpbench.cli import sweep

    try:
        args = parser().parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    results_dir = Path(args.results_dir)
    print("reproduce: estimating each part (a sweep's estimate calibrates on its data: a few seconds each)")
    steps = plan(parts(args.paper), results_dir)
    if args.dry_run:
        return dry_run(steps, results_dir, time.perf_counter() - sweep.command_started)
    return run(steps, results_dir, sweep.command_started)
