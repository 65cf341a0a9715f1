"""The CLI as documented: every `python -m dpbench` line of the README, docs/*.md and the Makefile runs (long ones in
their dry form), --help runs nothing, errors are one line with exit code 2, sub-grids and multiruns report their own
runs, and Hydra writes nothing outside results_dir."""

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

import dpbench
from dpbench import algorithms, analyses, config, data, results
from dpbench.__main__ import main
from dpbench.data import catalog
from dpbench.runner.grid import expand
from dpbench.tuning.spaces import tuning_space

ROOT = Path(__file__).resolve().parents[2]
TINY = "datasets=[{name: synthetic, outlier: label, fraction: 0.05, n_train: 400, n_test: 100, d: 3}]"


def documented_commands(path: Path, prefix: str) -> list[tuple[dict, list[str]]]:
    """(environment, arguments) of every `<prefix> ...` line in path's code (Markdown: ```bash blocks)."""
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
    """A long command's dry form: audits, leaderboards and sweeps of experiments other than the quickstart count
    their fits."""
    if {"--dry-run", "--help", "--cfg", "--ledger"} & set(args) or args[0] not in ("sweep", "audit", "leaderboard"):
        return args
    if args[0] == "leaderboard":
        return args + ["--dry-run"]
    experiment = next((a.split("=", 1)[1] for a in args if a.lstrip("+").startswith("experiment=")), "quickstart")
    return args + ["--dry-run"] if args[0] == "audit" or experiment != "quickstart" else args


DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]  # the README's commands first: its tour
# sweeps the quickstart before the pages' plot and report read it; a command shown twice runs once
DOCUMENTED = []
for _path in DOCUMENTS:
    DOCUMENTED += [c for c in documented_commands(_path, "python -m dpbench") if c not in DOCUMENTED]
MAKEFILE = documented_commands(ROOT / "Makefile", "$(PY) -m dpbench")


def test_the_documents_have_commands():
    assert any(a[:1] == ["sweep"] for _, a in documented_commands(ROOT / "README.md", "python -m dpbench"))
    assert len(DOCUMENTED) >= 10 and any(a[:1] == ["sweep"] for _, a in documented_commands(
        ROOT / "docs" / "getting-started.md", "python -m dpbench"))
    assert [a for _, a in MAKEFILE if a[0] == "sweep"][0] == ["sweep", "experiment=quickstart"]  # make quickstart


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    """One directory for all documented commands, in order: plot and report read what the sweeps wrote."""
    return tmp_path_factory.mktemp("readme")


def snapshot(root: Path) -> dict:
    return {p: p.stat().st_mtime_ns for p in root.rglob("*") if p.is_file()}


def summary_table(out: str) -> dict:
    """{(dataset, algorithm, epsilon): (metric, mean, runs)} of the summary table printed in `out`."""
    rows, index = {}, ["", "", ""]
    for line in out.splitlines():
        w = line.split()
        if len(w) >= 7 and re.fullmatch(r"(test|train)_\w+", w[-6]) and all(x.isdigit() for x in w[-3:]):
            index = index[: 9 - len(w)] + w[: len(w) - 6]  # pandas leaves repeated index values blank
            rows[index[0], index[1], float(index[2])] = (w[-6], float(w[-5]), int(w[-3]))
    return rows


def grid_results(overrides: list[str]) -> pd.DataFrame:
    """The parquet rows of exactly the grid that `overrides` compose to (composed here, not by the CLI)."""
    cfg = config.validate(config.compose(overrides))
    df = results.load(Path(cfg["results_dir"]) / cfg["name"])
    return df[df["run_id"].isin({r.run_id for r in expand(config.experiment(cfg))})]


def check_table_and_figure(out: str, overrides: list[str], changed: set[Path], figure=True, table=True):
    """The table's means and counts and the figure's run count are those of the grid's rows on disk."""
    df = grid_results(overrides)
    assert len(df) and (df["status"] == "ok").all()
    assert len(re.findall(r"^figure: ", out, re.M)) == figure
    if table:
        check_table(out, df)
    for path, runs in re.findall(r"^figure: (\S+) \((\d+) runs\)$", out, re.M):
        assert int(runs) == len(df) and Path(path).resolve() in changed
        assert Path(path).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    return df


def check_table(out: str, df: pd.DataFrame) -> None:
    table = summary_table(out)
    eps = df["epsilon"].fillna(np.inf)
    groups = df.groupby(["dataset", "algorithm", eps])
    assert set(table) == set(groups.groups), (set(table), set(groups.groups))
    for key, (metric, mean, runs) in table.items():
        cell = groups.get_group(key)
        assert runs == len(cell) and mean == pytest.approx(cell[metric].mean(), rel=1e-3), key


def check_readme_output(args: list[str], out: str, changed: set[Path]) -> None:
    """What each documented command must print or write; a broken command that still exits 0 fails here."""
    overrides = [a for a in args[1:] if "=" in a and not a.startswith("-")]
    if args[0] == "sweep" and "--multirun" in args:
        jobs = re.split(r"^\[multirun job \d+\].*$", out, flags=re.M)[1:]
        assert len(jobs) == len(config.sweep_jobs(overrides)) > 1
        for job, job_overrides in zip(jobs, config.sweep_jobs(overrides), strict=True):
            check_table_and_figure(job, job_overrides, changed)
    elif args[0] == "sweep" and not {"--help", "--cfg", "--dry-run"} & set(args):
        tried, finished = map(int, re.search(r"this sweep tried (\d+) \(\d+ of them retries\), (\d+) were already",
                                             out).groups())
        assert tried + finished == len(check_table_and_figure(out, overrides, changed))
    elif args[0] == "report" and all(a.startswith("results_dir=") for a in args[1:]):  # the reproduction report
        assert {p.name for p in changed} >= {"report.html", "report.md"}
        assert re.search(r"^report: \S+report.html and \S+report.md \(\d+ sections; \d+ claims judged.*\)$", out, re.M)
    elif args[0] in ("plot", "report") and overrides:
        plot = args[0] == "plot"
        check_table_and_figure(out, overrides, changed, figure=plot, table=not plot)
        assert bool(changed) == plot
    elif args[:1] == ["analysis"] and len(args) > 1:
        written = re.search(r": done in .* s; wrote (.*)$", out, re.M).group(1).split(", ")
        assert {Path(p).resolve() for p in written} <= changed
        assert all(len(pd.read_parquet(p)) for p in written if p.endswith(".parquet"))
    else:  # everything else only prints
        assert not changed, changed
        if args == ["--help"]:
            assert all(re.search(rf"^  {c} ", out, re.M) for c in ["sweep", "plot", "report", "data", "audit"])
        elif args == ["sweep", "--help"]:
            listed = re.search(r"^experiment: (.*)$", out, re.M).group(1).split(", ")
            assert listed == [n for n in config.experiment_names() if "/" not in n]  # smoke/ on its own line
        elif "--cfg" in args:
            assert yaml.safe_load(out)["name"] == config.compose(overrides)["name"]
        elif args[0] == "sweep":  # --dry-run
            runs, fits = map(int, re.search(r": (\d+) runs in the grid, (\d+) fits to do", out).groups())
            assert runs == fits > 0 and "nothing fitted" in out
        elif args[0] == "leaderboard":  # --dry-run: each task's grid, counted
            from dpbench.runner.grid import expand

            lines = re.findall(r"^(\S+): (\d+) runs; (\d+) of them finished", out, re.M)
            prefix = "smoke/" if "--smoke" in args else ""
            assert [n.removesuffix("_smoke") for n, *_ in lines] == ["leaderboard", "leaderboard_clf"]
            for name, runs, adopted in lines:
                cfg = config.to_container(config.compose([f"experiment={prefix}{name.removesuffix('_smoke')}"]))
                assert int(runs) == len(expand(config.experiment(cfg))) > 0 and 0 <= int(adopted) <= int(runs)
        elif args == ["analysis"]:
            assert [line.split()[0] for line in out.splitlines()] == analyses.available()
        elif args[0] == "reproduce":  # --dry-run: a line per part of the paper, then the report
            from dpbench.cli import reproduce

            paper = args[args.index("--paper") + 1] if "--paper" in args else None
            assert "--dry-run" in args and "nothing ran, nothing written" in out
            assert re.findall(r"^\[\d+/\d+\] (\S+) \(", out, re.M) == [p.name for p in reproduce.parts(paper)]
        elif args == ["data", "list"]:
            check_data_list(out)
        elif args[0] == "audit" and "--ledger" in args:
            check_ledger_table(out)
        elif args[0] == "audit":  # --dry-run: 500 fits a side, --full 2000 at 3 epsilons
            audits, pairs, n_eps, fits = map(int, re.search(r"(\d+) audits \((\d+) .* x (\d+) epsilon\(s\)\), "
                                                            r"(\d+) fits", out).groups())
            full = "--full" in args
            assert n_eps == (3 if full else 1) and audits == pairs * n_eps > 0
            assert fits == 2 * (2000 if full else 500) * audits
        elif args == ["algorithms"]:  # a line per registered algorithm: name, task, privacy
            assert [line.split()[0] for line in out.splitlines() if line and not line.startswith("`")] == \
                algorithms.available()
        elif args[0] == "algorithms":  # one in full: every parameter with its default and constraint
            spec = algorithms.get_spec(args[1])
            assert out.startswith(f"{args[1]}: ") and all(f"    {k} = " in out for k in spec.estimator().get_params())
            assert all(f"    {k}: " in out for k in tuning_space(spec.name))
        elif args == ["--version"]:
            assert out.strip() == f"dpbench {dpbench.__version__}"
        else:
            raise AssertionError(f"no check for the documented command {args}: add one to check_readme_output")


def check_data_list(out: str) -> None:
    """Every dataset, once, in the configured data directory; 'mirror' where its file is there, 'MISSING' not."""
    root = catalog.resolve_data_dir(None)
    assert out.startswith(f"data directory: {root}\n")
    lines = [ln.split() for ln in out.splitlines()[2:-1]]
    assert [w[0] for w in lines] == data.available()
    for w in lines:
        assert w[4] in ("mirror", "MISSING", "openml_cache", "generated"), w
        mirrored = catalog.mirror_path(w[0], root)
        assert (w[4] == "mirror") == bool(mirrored and mirrored.is_file()), w


def check_ledger_table(out: str) -> None:
    """One row per private algorithm, each ok, none spending more than the epsilon 1 asked for."""
    rows = [ln.split() for ln in out.splitlines()[1:] if ln.strip()]
    private = [n for n in algorithms.available() if algorithms.get_spec(n).private]
    assert [r[0] for r in rows] == private
    for r in rows:
        assert r[-1] == "True" and float(r[2]) <= 1 + 1e-9, r


@pytest.mark.parametrize("env, args", DOCUMENTED, ids=[" ".join(a) for _, a in DOCUMENTED])
def test_documented_command(env, args, workdir, monkeypatch, capsys):
    monkeypatch.chdir(workdir)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    before = snapshot(workdir)
    code = main(dry(args))
    out, err = capsys.readouterr()
    assert code == 0, err
    after = snapshot(workdir)
    check_readme_output(dry(args), out, {p.resolve() for p, t in after.items() if before.get(p) != t})


@pytest.mark.parametrize("env, args", MAKEFILE, ids=[" ".join(a) for _, a in MAKEFILE])
def test_makefile_command_dry(env, args, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    if args[0] == "analysis":  # its --smoke run is its own module's test; here: the name and options parse
        from dpbench import analyses

        analyses.get(args[1])
        assert not set(args[2:]) - {"--smoke"}, args
        return
    if args[0] == "reproduce":  # its dry run is tests/cli/test_reproduce_command.py's; here: the options parse
        from dpbench.cli import reproduce

        reproduce.parser().parse_args(args[1:])
        return
    args = args + ["--dry-run"] if args[0] in ("sweep", "audit") else args
    assert main(args) == 0, capsys.readouterr().err
    check_readme_output(args, capsys.readouterr().out, {p.resolve() for p in snapshot(tmp_path)})


@pytest.mark.parametrize("command", ["sweep", "plot", "report", "data", "audit", "reproduce"])
def test_help_runs_nothing(command, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main([command, "--help"]) == 0
    assert "usage" in capsys.readouterr().out
    assert not list(tmp_path.iterdir())


def test_help_and_dash_v_are_accepted(tmp_path, monkeypatch, capsys):
    """`help`, `help COMMAND` (that command's --help) and `-V` (the version), which users type."""
    from dpbench.cli import USAGE

    monkeypatch.chdir(tmp_path)
    assert main(["help"]) == 0 and capsys.readouterr().out.strip() == USAGE.strip()
    assert main(["help", "audit"]) == 0 and "usage: python -m dpbench audit" in capsys.readouterr().out
    assert main(["sweep", "help"]) == 0 and "usage: python -m dpbench sweep" in capsys.readouterr().out
    assert main(["data", "help"]) == 0 and "usage: python -m dpbench data" in capsys.readouterr().out
    assert main(["-V"]) == 0
    version = capsys.readouterr().out
    assert main(["--version"]) == 0 and capsys.readouterr().out == version and version.strip()
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


def test_help_imports_neither_hydra_nor_the_fitting_stack(tmp_path):
    """`--help` and `sweep --help` print at once: no Hydra, scikit-learn, pandas or matplotlib is imported."""
    code = ("import sys; from dpbench.cli import main; main(sys.argv[1:]); "
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'hydra', 'sklearn', 'pandas', 'matplotlib'}))")
    for args in (["--help"], ["sweep", "--help"], ["plot", "-h"]):
        p = subprocess.run([sys.executable, "-c", code, *args], cwd=tmp_path, capture_output=True, text=True,
                           timeout=120)
        assert p.returncode == 0 and "python -m dpbench" in p.stdout and p.stdout.splitlines()[-1] == "[]", args


ERRORS = [
    (["swep"], "unknown command 'swep'; commands: sweep, plot, report, data, audit"),
    (["sweep", "epsilons=[1"], "bad override 'epsilons=[1'"),
    (["sweep", "experiment=nope"], "unknown experiment 'nope'; available: "),
    (["sweep", "epsilon=[1]"], "unknown config key 'epsilon' (did you mean epsilons?)"),
    (["sweep", "+epsilon=[1]"], "unknown config key 'epsilon' (did you mean epsilons?)"),
    (["sweep", "epsilons=1"], "epsilons must be a list"),
    (["sweep", "datasets=[{name: synthetic, outlier: lable}]"], "outlier must be one of"),
    (["sweep", "runner.foo=1"], "unknown config key 'runner.foo'"),
    (["sweep", "plot.formats=[pdf]"], "plot.formats must be a list of png, pdf with png in it"),
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


def test_a_config_file_of_yours_that_is_not_yaml_or_has_no_header_is_named(tmp_path, monkeypatch, capsys):
    """Each fails, in one line naming the file, only when it is used: the other experiments of ./conf still run."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "conf" / "experiment").mkdir(parents=True)
    mine = f"# @package _global_\nname: mine\nalgorithms: [ols]\nepsilons: [1]\n{TINY.replace('=', ': ')}\n"
    for name, text in [("mine", mine),
                       ("broken", "# @package _global_\nname: broken\nalgorithms: [ols\ndatasets: [synthetic]\n"),
                       ("headless", "name: headless\nalgorithms: [ols]\n")]:
        (tmp_path / "conf" / "experiment" / f"{name}.yaml").write_text(text)
    assert main(["sweep", "experiment=mine", "--dry-run"]) == 0
    assert "mine: 1 runs in the grid" in capsys.readouterr().out
    broken = ("dpbench sweep: error: conf/experiment/broken.yaml, line 4, column 9: not valid YAML: expected ',' or "
              "']', but got ':' (while parsing a flow sequence at line 3, column 13)\n")
    for args in (["experiment=broken"], ["experiment=broken", "--cfg", "job"], ["-m", "experiment=mine,broken"]):
        assert main(["sweep", *args]) == 2
        assert capsys.readouterr().err == broken, args
    assert main(["report", "experiment=headless"]) == 2
    assert capsys.readouterr().err == ("dpbench report: error: conf/experiment/headless.yaml has no `# @package "
                                       "_global_` header, so its keys are read under 'experiment': add that line "
                                       "at its top\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["conf"]


@pytest.fixture
def holey():
    """A dataset of yours that leaves no row to fit: n=0 rows, or column `hole` all NaN."""
    @data.dataset("holey", task="regression")
    def holey(seed=0, n=50, hole=""):
        frame = pd.DataFrame({"x": np.arange(n, dtype=float), "y": np.ones(n)})
        return frame.assign(**{hole: np.nan}) if hole else frame

    yield "holey"
    data.unregister("holey")


@pytest.mark.parametrize("options, message", [
    ("n: 0", "dataset 'holey[n=0]' has no rows"),
    ("hole: x", "dataset 'holey[hole=x]' has no complete row of its 50: column(s) x all NaN (rows with a missing "
               "value are dropped)"),
    ("hole: y", "dataset 'holey[hole=y]' has no complete row of its 50: column(s) y all NaN")])
def test_a_dataset_with_no_row_to_fit_stops_the_sweep_before_any_fit(holey, options, message, tmp_path,
                                                                      monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    spec = yaml.safe_load(f"{{name: holey, {options}}}")
    assert main(["sweep", f"datasets=[{{name: holey, {options}}}]", "algorithms=[adassp,ols]", "runner.n_jobs=1",
                 "runner.progress=false"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"dpbench sweep: error: {message}") and err.count("\n") == 1, err
    assert not list(tmp_path.rglob("*.parquet"))
    with pytest.raises(data.EmptyDataError, match=re.escape(message)):
        data.load_dataset(spec)
    # the harness refuses the dataset; a private fit on 0 rows (n is not public) still returns a model
    est = algorithms.make("adassp", epsilon=1.0, random_state=0).fit(np.zeros((0, 2)), np.zeros(0))
    assert est.coef_.shape == (2,) and np.isfinite(est.coef_).all()


def test_the_summary_counts_ok_fallbacks_failed_and_missing_apart():
    from dpbench.cli.sweep import _outcomes

    grid = pd.DataFrame({"status": ["ok"] * 3 + ["ptr_failed"] * 2 + ["label_range_not_found", "error", "data_error"]
                         + ["missing_data"] * 4})
    assert _outcomes(grid) == ("ok 3, fallback 3 (ptr_failed 2, label_range_not_found 1), failed 2 (error 1, "
                               "data_error 1), missing data 4")
    assert _outcomes(pd.DataFrame()) == "ok 0, fallback 0, failed 0, missing data 0"


def _sweep(capsys, *args):
    assert main(["sweep", TINY, "runner.progress=false", "runner.n_jobs=1", *args]) == 0
    return capsys.readouterr().out


def test_a_sub_grid_shows_its_own_runs_and_keeps_each_grid_config(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    out = _sweep(capsys, "epsilons=[0.5,1,2]", "seeds=[0,1]")  # 2 private x 3 eps x 2 seeds + 2 ols
    assert ("quickstart: 14 runs in the grid: ok 14, fallback 0, failed 0, missing data 0; this sweep tried 14 "
            "(0 of them retries), 0 were already finished") in out
    assert "(14 runs)" in out
    out = _sweep(capsys, "epsilons=[0.5,1]", "seeds=[0,1]")
    assert "this sweep tried 0 (0 of them retries), 10 were already finished" in out and "(10 runs)" in out
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
    # each grid its own figure, named by the grid's hash beside its config (none is quickstart's as shipped)
    figures = sorted(p.stem.removeprefix("quickstart-") for p in sweep_dir.glob("quickstart-*.png"))
    assert figures == sorted(p.stem.removeprefix("config-") for p in grids)
    assert not (sweep_dir / "quickstart.png").exists()


def test_the_shipped_grid_keeps_its_figure_name_and_a_multirun_draws_one_per_job(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["sweep", "runner.progress=false", "runner.n_jobs=1", "seeds=[0]", "-m", "epsilons=[0.5],[2]"]) == 0
    assert "figure: results/quickstart/quickstart.png" not in capsys.readouterr().out
    sweep_dir = tmp_path / "results" / "quickstart"
    assert len(list(sweep_dir.glob("quickstart-*.png"))) == 2  # one per job: the second does not replace the first
    from dpbench import config
    from dpbench.cli.sweep import figure_path

    assert figure_path(config.validate(config.compose([]))) == Path("results/quickstart/quickstart.png")


def test_retried_runs_are_counted(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DPBENCH_DATA_DIR", str(tmp_path / "no_mirror"))
    args = ["sweep", "datasets=[creditcard]", "algorithms=[logreg]", "seeds=[0]", "runner.progress=false",
            "runner.n_jobs=1"]
    # missing data: the run is tried (and retried next time), and a grid where nothing could run is an error
    assert main(args) == 2
    assert ("1 runs in the grid: ok 0, fallback 0, failed 0, missing data 1; this sweep tried 1 (0 of them retries), "
            "0 were already finished") in capsys.readouterr().out
    assert main(args) == 2
    out, err = capsys.readouterr()
    assert "this sweep tried 1 (1 of them retries)" in out and "none of the 1 runs could run" in err
    assert " done" not in out  # not for runs that did not run


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
    """The configs are the package's (conf/, installed as dpbench.conf), not files beside the working directory."""
    p = subprocess.run([sys.executable, "-m", "dpbench", "sweep", "experiment=fig1_fixed", "--dry-run"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": ""})
    assert p.returncode == 0 and "fig1_fixed: 1188 runs in the grid" in p.stdout, p.stderr


def test_report_prints_only_judged_verdicts_and_counts_the_rest(tmp_path, monkeypatch, capsys):
    """With nothing run, `report` prints no verdict line, only how many claims were not run."""
    from dpbench import claims

    monkeypatch.chdir(tmp_path)
    assert main(["report"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert out == [f"report: results/report.html and results/report.md ({out[0].split('(')[1].split(' ')[0]} "
                   f"sections; 0 claims judged; not judged: not run {len(claims.claims())})"]


def test_missing_data_is_one_warning_line(capsys):
    from dpbench.cli.sweep import _missing_data

    grid = pd.DataFrame({"status": ["ok", "missing_data", "missing_data", "missing_data"],
                         "dataset": ["a", "b", "b", "c"], "error": [None, "dataset b is missing: no b.parquet",
                                                                      "same", "dataset c is missing"]})
    assert _missing_data(grid) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "3 run(s) on 2 missing dataset(s) did not run (b, c)" in err
    assert "the first: dataset b is missing: no b.parquet" in err
