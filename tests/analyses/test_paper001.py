"""Paper 001 (classification): the smoke sweep, the analyses (smoke), the figures and the claims' checks."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from dpbench import claims, reference, results
from dpbench.__main__ import main
from dpbench.plots.classification import boosting_ratio, method_of


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    out = tmp_path_factory.mktemp("paper001")
    assert main(["sweep", "experiment=smoke/paper001", f"results_dir={out}", "runner.progress=false"]) == 0
    for name in ("paper001_figures", "clf_fig1", "clf_timing"):
        assert main(["analysis", name, "--smoke", "--results-dir", str(out)]) == 0
    return out


@pytest.mark.usefixtures("mirror")
def test_smoke_runs_every_method_and_draws_every_figure(smoke):
    df = results.load(smoke / "paper001_smoke")
    assert (df["status"] == "ok").all(), df[["algorithm", "status", "error"]]
    assert set(df["algorithm"]) == {"boosted_adassp_clf", "dp_ebm_clf", "dp_xgboost", "boosted_linear_clf"}
    spent = df[df["private"]]
    assert (spent["spent_epsilon"] <= spent["epsilon"] * (1 + 1e-9)).all()
    figs = {p.stem for p in (smoke / "paper001_figures_smoke").glob("*.png")}
    assert {"fig2_f1_vs_epsilon", "fig3_f1_vs_rounds", "fig4_boosting_effect_squared", "fig6_nonprivate_f1"} <= figs
    assert all((smoke / "paper001_figures_smoke" / f"{f}.pdf").exists() for f in figs)
    assert (smoke / "clf_fig1_smoke" / "clf_fig1.png").exists()  # smoke analyses: never judged


@pytest.mark.usefixtures("mirror")
def test_claims_measure_the_smoke_results(smoke):
    def load(name):
        path = smoke / f"{name}_smoke"
        return results.load(path) if (path / "parts").exists() else pd.read_parquet(path / f"{name}.parquet")

    checked = [c for c in claims.claims() if c.paper == "001"]
    assert len(checked) >= 6
    for c in checked:  # the checks read the real columns; verdicts are tested on built cases (test_claims.py)
        v = c.check(load)
        assert any(v.holds is h for h in (True, False, None)) and v.measured, (c.text, v)  # a Python bool, not numpy
    timing = next(c for c in checked if c.figure == "clf_timing").check(load)
    assert timing.holds is None  # the smoke timing has 20 rounds, not the paper's 1000


def test_boosting_ratio_and_method_names():
    df = pd.DataFrame({"algorithm": ["boosted_adassp_clf"] * 4 + ["dp_xgboost"], "status": "ok",
                       "param_loss": ["squared"] * 4 + [None], "param_n_rounds": [1, 10, 1, 10, 10],
                       "dataset": "d", "epsilon": [1.0, 1.0, 2.0, 2.0, 1.0], "seed": 0,
                       "test_f1": [0.5, 0.6, 0.8, 0.8, 0.1]})
    assert list(method_of(df)) == ["BoostedAdaSSP (squared)"] * 4 + ["DP-XGBoost"]
    ratio = boosting_ratio(df).set_index("epsilon")["ratio"]
    assert ratio[1.0] == pytest.approx(1.2) and ratio[2.0] == pytest.approx(1.0)


def test_a_panel_without_runs_says_not_run():
    """Rounds 1 and 10 at epsilon 1 only: Fig. 2 (100 rounds) has nothing, Fig. 3 has one panel of four."""
    from dpbench import plots

    df = pd.DataFrame({"algorithm": "boosted_adassp_clf", "status": "ok", "param_loss": "squared",
                       "param_n_rounds": [1, 10], "dataset": "d", "epsilon": 1.0, "seed": 0, "test_f1": [0.5, 0.6]})
    fig2 = plots.make({"kind": "clf_vs_epsilon"}, df)
    assert "0 seeds" not in fig2._suptitle.get_text() and "not run" in fig2._suptitle.get_text()
    fig3 = plots.make({"kind": "clf_vs_rounds"}, df)
    for fig, expected in ((fig2, [False]), (fig3, [False, False, True, False])):
        axes = [ax for ax in fig.axes if ax.get_visible()]
        assert [bool(ax.lines) for ax in axes] == expected
        for ax in axes:
            said = any(t.get_text().startswith("not run") for t in ax.texts)
            assert said != bool(ax.lines), ax.get_title()


def test_main_figures_and_table_keep_dp_ebm_at_100_leaves(tmp_path, monkeypatch):
    """paper001_leaves writes DP-EBM at 1, 10 and 1000 leaves into results/paper001 for Fig. 5; the other figures
    and the README table show the paper's 100 leaves only (averaged in, they mixed four models: F1 0.25 here)."""
    from dpbench import plots

    rows = [{"run_id": f"{leaves}-{seed}", "algorithm": "dp_ebm_clf", "status": "ok", "private": True,
             "params": json.dumps({"max_leaves": leaves, "n_rounds": 100}), "dataset": "adult", "epsilon": 1.0,
             "seed": seed, "test_f1": f1, "test_auroc": 0.7}
            for leaves, f1 in ((1, 0.0), (10, 0.2), (100, 0.6), (1000, 0.2)) for seed in (0, 1)]
    results.write_part(rows, tmp_path / "paper001", "leaves")
    assert "| adult | 1 | 100 | - | 0.600 +/- 0.000 | - |" in reference.paper001_f1(tmp_path)

    drawn = {}

    def draw(plot, df, path, **kw):
        drawn[path.stem] = df
        return path

    monkeypatch.setattr(plots, "draw", draw)
    assert main(["analysis", "paper001_figures", "--results-dir", str(tmp_path)]) == 0
    assert set(drawn["fig2_f1_vs_epsilon"]["param_max_leaves"]) == {100}
    assert set(drawn["fig3_f1_vs_rounds"]["param_max_leaves"]) == {100}
    assert set(drawn["fig5_dpebm_leaves_f1"]["param_max_leaves"]) == {1, 10, 100, 1000}
