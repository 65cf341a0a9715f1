"""`python -m dpbench reproduce`: its parts cover every experiment, analysis, claim and diagnosis of the papers
(a new one cannot be forgotten), in an order where what is read runs first; the dry run runs and writes nothing;
a run prints a progress line per part, skips finished analyses and the parts whose inputs failed.  No real part
runs here (the commands are stubbed)."""

import json
import os
import re
import time
from types import SimpleNamespace

import pytest

from dpbench import analyses, claims, config
from dpbench.__main__ import main
from dpbench.cli import reproduce, sweep
from dpbench.cli.reproduce import ANALYSIS, LEFT_OUT, PARTS, REPORT, SWEEP, Part, Step
from dpbench.runner.grid import expand
from dpbench.tuning.study import study_key

SWEEPS = [p.name for p in PARTS if p.kind == SWEEP]
ANALYSES = [p.name for p in PARTS if p.kind == ANALYSIS]


def output_name(part: Part) -> str:
    """The results directory a part writes (an experiment's `name`: paper001_leaves writes paper001)."""
    return config.compose([f"experiment={part.name}"])["name"] if part.kind == SWEEP else part.name


def test_the_parts_are_every_shipped_experiment_and_analysis_but_the_left_out():
    experiments = {n for n in config.experiment_names() if "/" not in n}  # smoke/: CI's versions
    assert set(SWEEPS) == experiments - set(LEFT_OUT)
    assert set(ANALYSES) == set(analyses.available()) - set(LEFT_OUT)
    assert set(LEFT_OUT) <= experiments | set(analyses.available())  # no stale entry
    assert len(SWEEPS + ANALYSES) == len(set(SWEEPS + ANALYSES)) == len(PARTS)


def test_every_claim_and_diagnosis_is_made_by_a_part():
    outputs = {output_name(p) for p in PARTS}
    assert {c.figure for c in claims.claims()} <= outputs
    commands = {d.command for c in claims.claims() for d in claims.diagnoses(c)}
    assert commands
    for command in commands:
        name = re.fullmatch(r"python -m dpbench (?:analysis (\S+)|sweep experiment=(\S+).*|(report))", command)
        assert next(n for n in name.groups() if n) in [*SWEEPS, *ANALYSES, "report"], command


def test_a_part_runs_after_what_it_reads_and_the_report_last():
    for paper in (None, *reproduce.PAPERS):
        todo = reproduce.parts(paper)
        names = [p.name for p in todo]
        assert todo[-1].kind == REPORT and todo[-1].name == "report"
        for i, part in enumerate(todo[:-1]):
            assert part.paper == paper or paper is None
            assert set(part.needs) <= set(names[:i]), (part, names[:i])  # a paper's parts read only its own
    assert [p.name for p in reproduce.parts()[:-1]] == [p.name for p in PARTS]


def test_the_progress_line():
    step = Step(Part("fig3", SWEEP, "000"), None, "1242 runs to do", 0.4 * 3600, "")
    line = reproduce.progress_line(3, 17, step, 1.2 * 3600, 2.9 * 3600, [])
    assert line == "[3/17] fig3: 1242 runs to do, ~0.40 h estimated (elapsed 1.20 h of ~2.90 h)"
    step.seconds = None
    assert reproduce.progress_line(17, 17, step, 0, 3600, ["report", "fig3"]).endswith(
        "estimate unknown (elapsed 0.00 h of ~1.00 h + 2 unknown)")


def snapshot(root):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def test_the_dry_run_prints_every_estimate_and_runs_and_writes_nothing(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # no results/reference here: every analysis' estimate is unknown
    (tmp_path / "results").mkdir()
    monkeypatch.setattr(reproduce, "_call", lambda cmd: pytest.fail(f"ran {cmd}"))
    estimated, given, tuned = [], [], []

    def fake_estimate(todo, runner, data_dir, studies_dir, startup, done_studies):  # calibration: the next test's
        estimated.append(len(todo))
        given.append(set(done_studies))
        tuned.append({study_key(r) for r in todo if r.tuning_mode == "tuned"})
        return SimpleNamespace(seconds=len(todo) * 1.0, parts={}, calibrated_on="a dataset")

    monkeypatch.setattr(sweep, "time_estimate", fake_estimate)
    before = snapshot(tmp_path)
    assert main(["reproduce", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert snapshot(tmp_path) == before
    lines = re.findall(r"^\[(\d+)/(\d+)\] (\S+) \((\w+)\): (.*)$", out, re.M)
    assert [name for *_, name, _, _ in lines] == [p.name for p in reproduce.parts()]
    assert all(int(i) == k and int(n) == len(lines) for k, (i, n, *_) in enumerate(lines, 1))
    assert len(estimated) == len(SWEEPS) and all(estimated)
    # paper001_leaves shares its 100-leaf runs with paper001's directory: counted once
    leaves = config.experiment(config.validate(config.compose(["experiment=paper001_leaves"])))
    assert estimated[SWEEPS.index("paper001_leaves")] < len(expand(leaves))
    # a study is counted in the first part that runs it: fig2's estimate is told of fig1's (BoostedAdaSSP's)
    assert given[0] == set() and all(given[i] == set().union(*tuned[:i]) for i in range(len(given)))
    fig1, fig2 = SWEEPS.index("fig1"), SWEEPS.index("fig2")
    assert tuned[fig1] and tuned[fig1] & tuned[fig2] <= given[fig2] and tuned[fig1] & tuned[fig2]
    total = re.search(r"^total: ~(\d+\.\d\d) h estimated for (\d+) part\(s\) .*; unknown: (\d+) \((.*)\); .*nothing "
                      r"ran, nothing written$", out, re.M)
    assert total and float(total[1]) >= sum(estimated) / 3600 - 0.01
    assert total[4].split(", ") == [*ANALYSES, "report"]


def test_a_sweeps_estimate_is_its_dry_runs_calibrated_estimate(tmp_path):
    """The real estimate (calibration on the grid's own data, here synthetic) and nothing written."""
    steps = reproduce.plan([Part("smoke/robust_label", SWEEP, "000")], tmp_path)
    assert steps[0].seconds > 0 and steps[0].how.startswith("calibrated on synthetic")
    assert re.fullmatch(r"\d+ runs to do", steps[0].work) and not any(tmp_path.iterdir())


def finish(out, at: float) -> None:
    """An analysis that finished at `at` (its log line, as `analysis` writes it)."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "sweeps.jsonl").write_text(json.dumps({"seconds": 1.0, "ran": 0}) + "\n")
    os.utime(out / "sweeps.jsonl", (at, at))


def test_a_finished_analysis_is_skipped_unless_what_it_reads_changed(tmp_path):
    part = Part("diagnose_dpxgb", ANALYSIS, "001", ("paper001",))
    source = Step(Part("paper001", SWEEP, "001"), tmp_path / "paper001", "0 runs to do", 1.0, "", busy=False)
    (source.out / "parts").mkdir(parents=True)
    (source.out / "parts" / "part-0.parquet").write_bytes(b"")
    now = time.time()
    os.utime(source.out / "parts" / "part-0.parquet", (now - 100, now - 100))
    assert not reproduce._plan_analysis(part, tmp_path, {"paper001": source}).skip  # never run
    finish(tmp_path / part.name, now - 200)
    assert not reproduce._plan_analysis(part, tmp_path, {"paper001": source}).skip  # older than its input
    finish(tmp_path / part.name, now)
    assert reproduce._plan_analysis(part, tmp_path, {"paper001": source}).skip
    source.busy = True  # the sweep has runs to do: its results will change
    assert not reproduce._plan_analysis(part, tmp_path, {"paper001": source}).skip


def test_a_run_prints_a_line_per_part_and_skips_what_reads_a_failed_part(tmp_path, monkeypatch, capsys):
    todo = [Part("fig2", SWEEP, "000"), Part("theory", ANALYSIS, "000"),
            Part("diagnose_fig2", ANALYSIS, "000", ("fig2",)), Part("report", REPORT, "")]
    steps = [Step(todo[0], tmp_path / "fig2", "5 runs to do", 1800.0, ""),
             Step(todo[1], tmp_path / "theory", "finished", 0.0, "", skip=True),
             Step(todo[2], tmp_path / "diagnose_fig2", "to run", 60.0, ""),
             Step(todo[3], tmp_path, "the reproduction report", None, "")]
    ran = []
    monkeypatch.setattr(reproduce, "_call", lambda cmd: ran.append(cmd[3:]) or (2 if "experiment=fig2" in cmd
                                                                                 else 0))
    assert reproduce.run(steps, tmp_path, time.perf_counter()) == 1
    out = capsys.readouterr().out
    assert ran == [["sweep", "experiment=fig2", f"results_dir={tmp_path}"], ["report", f"results_dir={tmp_path}"]]
    assert re.search(r"^\[1/4\] fig2: 5 runs to do, ~0\.50 h estimated \(elapsed <0\.01 h of ~0\.52 h \+ 1 "
                     r"unknown\)$", out, re.M)
    assert re.search(r"^\[1/4\] fig2: failed \(exit code 2\) in <0\.01 h \(estimated 0\.50 h\)$", out, re.M)
    assert "[2/4] theory: finished, skipped" in out
    assert "[3/4] diagnose_fig2: skipped, it reads fig2, which failed" in out
    assert re.search(r"^\[4/4\] report: done in", out, re.M) and "failed: fig2, diagnose_fig2" in out


def test_an_interrupted_part_stops_the_run(tmp_path, monkeypatch, capsys):
    steps = [Step(Part(n, SWEEP, "000"), tmp_path / n, "1 runs to do", 1.0, "") for n in ("fig1", "fig2")]
    ran = []
    monkeypatch.setattr(reproduce, "_call", lambda cmd: ran.append(cmd) or 130)
    assert reproduce.run(steps, tmp_path, time.perf_counter()) == 130
    assert len(ran) == 1 and "fig1: interrupted" in capsys.readouterr().err


def test_an_analysis_estimate_is_its_last_reference_run(tmp_path, monkeypatch):
    from dpbench import reference

    monkeypatch.setattr(reference, "DIR", tmp_path)
    assert reproduce.reference_seconds("theory") is None  # no reference run: unknown
    (tmp_path / "theory").mkdir()
    (tmp_path / "theory" / "sweeps.jsonl").write_text('{"seconds": 134.6, "ran": 0}\n{"seconds": 63.9, "ran": 0}\n')
    assert reproduce.reference_seconds("theory") == 63.9  # each run is whole: the last, not the sum
    step = reproduce.plan([Part("theory", ANALYSIS, "000")], tmp_path / "results")[0]
    assert (step.seconds, step.how, step.skip) == (63.9, "its reference run's wall time", False)
