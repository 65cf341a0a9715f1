"""Every figure's smoke variant (experiment=smoke/NAME: conf/smoke/) runs end to end from the CLI and draws PNG +
PDF (plot.formats=[png,pdf]); the claims of paper 000's comparisons are measured on them; the reproduction report
is written from them."""

import json

import pytest

from dpbench import claims, results
from dpbench.__main__ import main
from dpbench.config import options
from dpbench.reproduction import load_results, markdown, paper_rows, sections, to_html, write

SMOKE = [n for n in options("experiment") if n.startswith("smoke/")]


@pytest.fixture(scope="module")
def results_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("reproduce")


@pytest.mark.usefixtures("mirror")
@pytest.mark.parametrize("name", SMOKE)
def test_smoke_sweep_draws_png_and_pdf(name, results_dir, monkeypatch):
    monkeypatch.setenv("DPBENCH_OFFLINE", "1")
    assert main(["sweep", f"experiment={name}", f"results_dir={results_dir}", "runner.progress=false",
                 "runner.backend=sequential", "runner.n_jobs=1", "plot.formats=[png,pdf]"]) == 0
    out = results_dir / (name.removeprefix("smoke/") + "_smoke")
    df = results.load(out)
    assert results.has_metrics(df).all(), df[["algorithm", "status", "error"]]
    assert (out / f"{out.name}.png").exists() and (out / f"{out.name}.pdf").exists()
    tuned = df[df["tuning_mode"] == "tuned"]
    trials = json.loads((out / "config.json").read_text())["tuning"]["n_trials"]
    if name == "smoke/paper001":  # DP-XGBoost's subsample: each of {0.2, 0.5, 0.8} once
        trials = 3
    assert tuned["tuned_params"].notna().all() and (tuned["tuning_trials"] == trials).all()


@pytest.mark.usefixtures("mirror")
def test_paper000_claims_measure_the_smoke_results(results_dir):
    """Two datasets are too few for a verdict (undecided), but every check measures its numbers."""
    def load(name):
        return load_results(results_dir, f"{name}_smoke")

    checked = [c for c in claims.claims() if c.paper == "000" and c.figure.startswith("fig")]
    assert len(checked) >= 18
    for c in checked:
        if not (results_dir / f"{c.figure}_smoke").exists():
            continue
        v = c.check(load)
        assert v.holds is None, (c.text, v)  # 2 datasets: fewer than a sign test needs
        assert any(s in v.measured for s in ("2 datasets", "/2 (", "excluded", "one privacy level")), v.measured


@pytest.mark.usefixtures("mirror")
def test_report_writes_html_and_markdown(results_dir):
    html_path, md_path, secs = write(results_dir)
    text = html_path.read_text()
    assert "<img src='fig1_smoke/fig1_smoke.png'" in text and "not run" in text
    smoke = next(s for s in secs if s.name == "fig1_smoke")
    assert smoke.facts["trials per study"] == "4" and smoke.failures.get("ok", 0) > 0
    assert "## fig1_smoke" in md_path.read_text()


def test_report_of_an_empty_directory_lists_the_claims_as_not_run(tmp_path):
    secs = sections(tmp_path)
    assert secs and all(s.error == "not run" for s in secs)
    assert all(v.holds is None for s in secs for _, v in s.claims)
    assert "undecided" in to_html(secs)


def test_a_sweep_run_in_parts_is_read_whole(tmp_path, monkeypatch):
    """Seeds run a few at a time count together; runs of a grid that is neither the latest nor the shipped
    experiment's (here epsilon 0.7) are not read."""
    monkeypatch.setenv("DPBENCH_OFFLINE", "1")
    base = ["sweep", "experiment=quickstart", f"results_dir={tmp_path}", "runner.progress=false",
            "runner.backend=sequential", "runner.n_jobs=1"]
    for part in (["epsilons=[0.7]", "seeds=[0]"], ["epsilons=[1.0]", "seeds=[0]"], ["epsilons=[1.0]", "seeds=[1]"]):
        assert main(base + part) == 0
    df = load_results(tmp_path, "quickstart")
    private = df[df["algorithm"] != "ols"]
    assert set(private["seed"]) == {0, 1} and set(private["epsilon"]) == {1.0}
    assert len(results.load(tmp_path / "quickstart")) > len(df)  # the epsilon-0.7 runs are still on disk


def test_a_smoke_analysis_is_never_judged(tmp_path, capsys):
    """`analysis paper003 --smoke` then `report`: the smoke table sits in paper003_smoke/, shown as "smoke, not
    judged"; paper 003's claims stay "not run" (undecided)."""
    assert main(["analysis", "paper003", "--smoke", "--results-dir", str(tmp_path)]) == 0
    assert (tmp_path / "paper003_smoke" / "paper003.parquet").exists() and not (tmp_path / "paper003").exists()
    assert main(["report", f"results_dir={tmp_path}"]) == 0
    secs = {s.name: s for s in sections(tmp_path)}
    assert secs["paper003"].error == "not run" and all(v.holds is None for _, v in secs["paper003"].claims)
    assert secs["paper003_smoke"].smoke and not secs["paper003_smoke"].claims and secs["paper003_smoke"].facts
    md = (tmp_path / "report.md").read_text()
    assert "## paper003_smoke (smoke, not judged)" in md
    assert "[paper003_smoke](#paper003_smoke): smoke, not judged" in md
    assert "criterion:" in md and "<th>criterion</th>" in (tmp_path / "report.html").read_text()


def test_an_analysis_logs_the_wall_time_of_its_last_run_only(tmp_path):
    """An analysis rewrites all its results, so the run table and reproduce's estimate read its last run's time
    (a log of every run would add up the runs whose results are gone)."""
    import json

    from dpbench.reproduction import SWEEP_LOG

    for _ in range(2):
        assert main(["analysis", "theory", "--smoke", "--results-dir", str(tmp_path)]) == 0
    (line,) = (tmp_path / "theory_smoke" / SWEEP_LOG).read_text().splitlines()
    assert json.loads(line)["seconds"] > 0


def test_results_not_at_the_papers_settings_are_not_judged(tmp_path):
    """`make reproduce-fig1 SWEEP_ARGS=tuning=quick` writes fig1 runs of another grid (8 trials, not the paper's 50):
    the report gives fig1 no verdict and says why and what differs; with the paper grid's runs all there, fig1 is
    judged again."""
    from dpbench import config
    from dpbench.reproduction import experiment_run_ids
    from dpbench.runner.grid import expand

    quick = config.experiment(config.validate(config.compose(["experiment=fig1", "tuning=quick"])))
    out = tmp_path / "fig1"
    out.mkdir()
    (out / "config.json").write_text(json.dumps(quick, default=str))
    runs = [r for r in expand(quick) if r.run_id not in experiment_run_ids()["fig1"]]  # the tuned runs
    assert runs and all(r.tuning_mode == "tuned" for r in runs)
    results.write_part([{"run_id": r.run_id, "experiment": "fig1", "algorithm": r.algorithm, "status": "ok",
                         "dataset": "openml_361072", "epsilon": r.epsilon, "seed": r.seed, "test_mse": 1.0,
                         "params": json.dumps(r.params), "tuning_mode": r.tuning_mode, "config_hash": "q"}
                        for r in runs[:40]], out, "quick")
    sec = {s.name: s for s in sections(tmp_path)}["fig1"]
    assert sec.claims == [] and sec.not_judged.startswith("not at the paper's settings, not judged: 0 of the 1188")
    assert "tuning.n_trials (50 -> 8)" in sec.not_judged and "tuning.seeds" in sec.not_judged
    assert "[fig1](#fig1): not at the paper's settings, not judged" in markdown(list(sections(tmp_path)))
    paper = config.experiment(config.validate(config.compose(["experiment=fig1"])))
    results.write_part([{"run_id": r.run_id, "experiment": "fig1", "algorithm": r.algorithm, "status": "ok",
                         "dataset": "openml_361072", "epsilon": r.epsilon, "seed": r.seed, "test_mse": 1.0,
                         "params": json.dumps(r.params), "tuning_mode": r.tuning_mode, "config_hash": "q"}
                        for r in expand(paper)], out, "paper")
    sec = {s.name: s for s in sections(tmp_path)}["fig1"]
    assert sec.not_judged is None and sec.claims
    # the quick grid is still the latest (its runs are read for the figures), but a claim reads the paper's only
    assert len(load_results(tmp_path, "fig1")) > len(paper_rows(tmp_path, "fig1")) == len(expand(paper))


def test_a_claim_not_reproduced_carries_its_diagnosis(tmp_path, monkeypatch):
    """A diagnosis registered for a claim is printed beside it (cause, what its experiment measured, the command)
    when the claim is not reproduced or undecided; an experiment not run says so; a reproduced claim has none;
    an unknown cause is an error."""
    c = claims.claims("theory")[0]
    monkeypatch.setattr(claims, "_DIAGNOSES", [])
    claims.diagnosis("theory", c.where, "set-up", "python -m dpbench analysis x")(lambda load: load("x") and "")
    claims.diagnosis("theory", c.where, "data", "python -m dpbench analysis y")(lambda load: "copies differ: 0.1")
    sec = {s.name: s for s in sections(tmp_path)}["theory"]  # not run: every claim undecided
    assert sec.diagnoses[c] == ["diagnosis (set-up): its experiment has not been run [`python -m dpbench analysis x`]",
                                "diagnosis (data): copies differ: 0.1 [`python -m dpbench analysis y`]"]
    assert all(not v for k, v in sec.diagnoses.items() if k != c)
    assert "  \n  diagnosis (data): copies differ: 0.1" in markdown([sec])
    assert "<b>diagnosis (data): copies differ: 0.1" in to_html([sec])
    with pytest.raises(ValueError, match="cause must be one of"):
        claims.diagnosis("theory", c.where, "bad luck", "cmd")
