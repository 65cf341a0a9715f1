"""The CLI as documented: every `python -m dpbench` line of the README and the Makefile runs (long ones in their
dry form), --help runs nothing, errors are one line with exit code 2, sub-grids and multiruns report their own
runs, and Hydra writes nothing outside results_dir."""

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from dpbench.__main__ import main

ROOT = Path(__file__).resolve().parent.parent
TINY = "datasets=[{name: synthetic, outlier: label, fraction: 0.05, n_train: 400, n_test: 100, d: 3}]"


def documented_commands(path: Path, prefix: str) -> list[tuple[dict, list[str]]]:
    """(environment, arguments) of every `<prefix> ...` line in path's code (README: ```bash blocks)."""
    text = path.read_text()
    if path.suffix == ".md":
        text = "\n".join(re.findall(r"```bash\n(.*?)```", text, re.S))
    out = []
    for line in text.replace("\\\n", " ").splitlines():
        words = shlex.split(line, comments=True)
        env = {}
        while words and re.fullmatch(r"[A-Z_]+=\S*", words[0]):
            key, _, value = words.pop(0).partition("=")
            env[key] = value
        n = len(prefix.split())
        if words[:n] == prefix.split():
            out.append((env, [w for w in words[n:] if not re.fullmatch(r"\$\(\w+\)", w)]))  # make's $(ARGS)
    return out


def dry(args: list[str]) -> list[str]:
    """A long command's dry form: audits and sweeps of experiments other than the quickstart count their fits."""
    if {"--dry-run", "--help", "--cfg", "--ledger"} & set(args) or args[0] not in ("sweep", "audit"):
        return args
    experiment = next((a.split("=", 1)[1] for a in args if a.lstrip("+").startswith("experiment=")), "quickstart")
    return args + ["--dry-run"] if args[0] == "audit" or experiment != "quickstart" else args


README = documented_commands(ROOT / "README.md", "python -m dpbench")
MAKEFILE = documented_commands(ROOT / "Makefile", "$(PY) -m dpbench")


def test_the_documents_have_commands():
    assert len(README) >= 10 and any(a[:1] == ["sweep"] for _, a in README)
    assert [a for _, a in MAKEFILE if a[0] == "sweep"][0] == ["sweep", "experiment=quickstart"]  # make quickstart


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    """One directory for all README commands, in order: plot and report read what the sweeps wrote."""
    return tmp_path_factory.mktemp("readme")


@pytest.mark.parametrize("env, args", README, ids=[" ".join(a) for _, a in README])
def test_readme_command(env, args, workdir, monkeypatch, capsys):
    monkeypatch.chdir(workdir)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    code = main(dry(args))
    out, err = capsys.readouterr()
    assert code == 0, err
    assert out.strip()


@pytest.mark.parametrize("env, args", MAKEFILE, ids=[" ".join(a) for _, a in MAKEFILE])
def test_makefile_command_dry(env, args, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    if args[0] == "analysis":  # its --smoke run is its own module's test; here: the name and options parse
        from dpbench import analyses

        analyses.get(args[1])
        assert not set(args[2:]) - {"--smoke"}, args
        return
    args = args + ["--dry-run"] if args[0] in ("sweep", "audit") else args
    assert main(args) == 0, capsys.readouterr().err
    assert capsys.readouterr().out.strip()


@pytest.mark.parametrize("command", ["sweep", "plot", "report", "data", "audit"])
def test_help_runs_nothing(command, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main([command, "--help"]) == 0
    assert "usage" in capsys.readouterr().out
    assert not list(tmp_path.iterdir())


def test_sweep_help_and_errors_through_python_m(tmp_path):
    """The real entry point: `sweep --help` (it crashed on the override parser) and an exit code of 2."""
    run = lambda *a: subprocess.run([sys.executable, "-m", "dpbench", *a], cwd=tmp_path, capture_output=True,
                                    text=True, timeout=120)
    p = run("sweep", "--help")
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("experiment: ")]
    listed = lines[0].split(": ", 1)[1].split(", ") if lines else []
    assert p.returncode == 0 and {"fig1_fixed", "quickstart", "zoo"} <= set(listed), p.stderr
    p = run("sweep", "+epsilon=[1]")
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "'epsilon' (did you mean epsilons?)" in p.stderr
    assert not list(tmp_path.iterdir())


ERRORS = [
    (["swep"], "unknown command 'swep'; commands: sweep, plot, report, data, audit"),
    (["sweep", "epsilons=[1"], "bad override 'epsilons=[1'"),
    (["sweep", "experiment=nope"], "unknown experiment 'nope'; available: "),
    (["sweep", "epsilon=[1]"], "unknown config key 'epsilon' (did you mean epsilons?)"),
    (["sweep", "+epsilon=[1]"], "unknown config key 'epsilon' (did you mean epsilons?)"),
    (["sweep", "epsilons=1"], "epsilons must be a list"),
    (["sweep", "datasets=[{name: synthetic, outlier: lable}]"], "outlier must be one of"),
    (["sweep", "runner.foo=1"], "unknown config key 'runner.foo'"),
    (["sweep", "--frobnicate"], "unknown option(s) --frobnicate"),
    (["plot", "--dry-run"], "--dry-run is an option of sweep only"),
    (["report", "algorithms=[nope]"], "unknown algorithm 'nope'"),
    (["sweep", "-m", "epsilons=[1],[-2]", "results_dir=out"], "epsilons must be numbers in (0, inf)"),
]


@pytest.mark.parametrize("args, message", ERRORS, ids=[" ".join(a) for a, _ in ERRORS])
def test_errors_are_one_line_exit_2_and_write_nothing(args, message, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(args) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err
    assert not (tmp_path / "results").exists() and not (tmp_path / "out" / "quickstart").exists()


def _sweep(capsys, *args):
    assert main(["sweep", TINY, "runner.progress=false", "runner.n_jobs=1", *args]) == 0
    return capsys.readouterr().out


def test_a_sub_grid_shows_its_own_runs_and_keeps_each_grid_config(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    out = _sweep(capsys, "epsilons=[0.5,1,2]", "seeds=[0,1]")  # 2 private x 3 eps x 2 seeds + 2 ols
    assert "quickstart: 14 runs done (0 of them retried), 0 already finished" in out and "(14 runs)" in out
    out = _sweep(capsys, "epsilons=[0.5,1]", "seeds=[0,1]")
    assert "0 runs done (0 of them retried), 10 already finished" in out and "(10 runs)" in out
    assert " 2.0 " not in out  # the table: only the epsilons asked for
    sweep_dir = tmp_path / "results" / "quickstart"
    grids = sorted(sweep_dir.glob("config-*.json"))
    assert len(grids) == 2
    latest = json.loads((sweep_dir / "config.json").read_text())
    assert latest["epsilons"] == [0.5, 1.0] and latest in [json.loads(p.read_text()) for p in grids]
    assert main(["report", TINY, "epsilons=[2]", "seeds=[0,1]"]) == 0  # 2 private x 1 eps x 2 seeds + 2 ols
    assert capsys.readouterr().out.count("synthetic_label") == 1
    out = _sweep(capsys, "epsilons=[0.5,1]", "seeds=[0,1]", "--dry-run")
    assert "10 runs in the grid, 0 fits to do (0 of them retries, 10 runs already finished)" in out


def test_retried_runs_are_counted(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DPBENCH_DATA_DIR", str(tmp_path / "no_mirror"))
    args = ["sweep", "datasets=[creditcard]", "algorithms=[logreg]", "seeds=[0]", "runner.progress=false",
            "runner.n_jobs=1"]
    assert main(args) == 0 and "1 runs done (0 of them retried)" in capsys.readouterr().out  # missing_data
    assert main(args) == 0 and "1 runs done (1 of them retried)" in capsys.readouterr().out


def test_multirun_runs_a_sweep_per_value_and_hydra_writes_nothing_else(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    out = _sweep(capsys, "--multirun", "epsilons=[1],[2]", "seeds=[0]")
    jobs = [line for line in out.splitlines() if line.startswith("[multirun job")]
    assert len(jobs) == 2 and "epsilons=[1]" in jobs[0] and "epsilons=[2]" in jobs[1]
    assert out.count("(3 runs)") == 2  # each job's figure: its own grid (2 private + ols)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results"]  # no outputs/, .hydra/, multirun/, logs
    assert sorted(p.name for p in (tmp_path / "results").iterdir()) == ["multirun.yaml", "quickstart"]
    assert len(list((tmp_path / "results" / "quickstart").glob("config-*.json"))) == 2


def test_config_printing_and_tab_completion(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["sweep", "experiment=zoo", "--cfg", "job"]) == 0
    assert "name: zoo" in capsys.readouterr().out
    assert main(["sweep", "-sc", "install=bash"]) == 0
    assert "complete -o nospace -o default -F hydra_bash_completion dpbench" in capsys.readouterr().out
    for line, expected in [("dpbench sw", "sweep"), ("dpbench sweep experiment=z", "experiment=zoo"),
                           ("dpbench report runner.n_j", "runner.n_jobs=")]:
        monkeypatch.setenv("COMP_LINE", line)
        monkeypatch.setenv("COMP_POINT", str(len(line)))
        assert main(["-sc", "query=bash"]) == 0
        assert capsys.readouterr().out.split() == [expected]
    assert not list(tmp_path.iterdir())


def test_the_packaged_configs_are_found_from_any_directory(tmp_path):
    """The configs are package data (pkg://dpbench.conf), not files beside the working directory."""
    p = subprocess.run([sys.executable, "-m", "dpbench", "sweep", "experiment=fig1_fixed", "--dry-run"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": ""})
    assert p.returncode == 0 and "fig1_fixed: 1188 runs in the grid" in p.stdout, p.stderr
