"""Diagnosis of paper 000 Fig. 2 (BoostedAdaSSP vs DP gradient descent, in its three settings): is the paper's
result explained by the noise calibration of the authors' public code?

The authors' BoostedAdaSSP code converts (eps, delta) to the total GDP mu (Cor. II.5) and draws every Gaussian
release -- lambda_min(X^T X), X^T X and each round's X^T g -- with std = sensitivity x mu: mu multiplied instead of
divided, and not split across the three releases or the T rounds (Cor. II.4). Its ridge lambda is computed from
that same std. This analysis refits every BoostedAdaSSP run (tuned and fixed) of the sweep `fig2` (same parameters,
split, epsilon, delta and seed) inside `privacy.mechanisms.authors_noise`, which makes each release draw that std
(and AdaSSP's lambda follow it); nothing else changes (dpbench's lambda formula, clipping, the 1:1:1 split of the
correct fit). Those rows are not private (`private` False) and no algorithm of the registry can reach the hook.
Each run is also refitted with dpbench's correct noise, a check that the refit reproduces the sweep.

Judgment reads DP-GD from the `fig2` results at that time (`comparison`): per epsilon, the datasets on which
BoostedAdaSSP's mean test MSE over seeds is lower than DP-GD's in the claim's setting, with its cells
(`paper000_comparisons.cells`), once with the authors' noise and once with the sweep's correct runs.
`smoke=True`: the two cheapest datasets at epsilon 1, in seconds.

The refits serve Figs 3, 4 and 5 as well (`DIAGNOSED`): every paper 000 figure's BoostedAdaSSP runs are fig2's
(the same run ids), so the same rows are judged against TukeyEM, DP-EBM and DP-AMBSSGD read from those figures.
Those partners keep dpbench's correct noise: they come from other authors' code (DP-EBM from `interpret`), whose
calibration this analysis does not model.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pandas as pd

from dpbench import algorithms, reference, results
from dpbench.algorithms.shared_data import SharedData
from dpbench.analyses import analysis
from dpbench.analyses.paper000_comparisons import BOTH_FIXED, BOTH_TUNED, PARTNERS, SUBSTANTIAL, Y_FIXED, Y, cells
from dpbench.claims import ALPHA, MIN_CELLS, diagnosis, released, sign_test
from dpbench.data import MissingDataError, load_dataset, resolve_data_dir
from dpbench.privacy import mu_from_epsilon_delta
from dpbench.privacy.mechanisms import authors_noise
from dpbench.reproduction import paper_rows
from dpbench.runner.scoring import evaluate

NAME, FIGURE, PARTNER = "diagnose_fig2", "fig2", "dpgd"
METHOD = "BoostedAdaSSP, authors' code's noise calibration (not private)"
KINDS = {"lambda_min(X^T X)": "lambda_min", "X^T X": "gram", "X^T clip(g_t)": "xtg"}  # ledger name -> column
SMOKE_DATASETS, SMOKE_EPSILONS = 2, (1.0,)
SETTINGS = {BOTH_TUNED: "both tuned", Y_FIXED: "BoostedAdaSSP fixed, partner tuned", BOTH_FIXED: "both fixed"}
# figure -> (partner, its name, the claims' `where` per setting, whether the claim says "substantially")
DIAGNOSED = {fig: (PARTNERS[fig][0], name, {s: f"{PARTNERS[fig][1]} ({label})" for s, label in SETTINGS.items()},
                   PARTNERS[fig][3]) for fig, name in (("fig2", "DP-GD"), ("fig3", "TukeyEM"), ("fig4", "DP-EBM"))}
DIAGNOSED["fig5"] = ("ambssgd", "DP-AMBSSGD", {Y_FIXED: "Sec. IV, Fig. 5 (caption; BoostedAdaSSP fixed)"}, False)


def source_dir(out: Path, figure: str = FIGURE) -> Path:
    """The results directory whose `figure` is diagnosed: the output's own if it has one, else the reference."""
    return out.parent if (out.parent / figure).is_dir() else reference.DIR


def runs_to_refit(fig2: pd.DataFrame) -> pd.DataFrame:
    """BoostedAdaSSP's runs of the sweep that released a model, tuned (with their tuned settings) and fixed."""
    rows = fig2[(fig2["algorithm"] == Y) & released(fig2)]
    return rows[(rows["tuning_mode"] == "fixed") | rows["tuned_params"].notna()]


def _estimator(run):
    tuned = json.loads(run.tuned_params) if isinstance(run.tuned_params, str) else {}
    params = {**json.loads(run.params), **tuned}
    return algorithms.make(Y, random_state=int(run.random_state), epsilon=float(run.epsilon),
                           delta=float(run.delta), **params), params


def under_noised(est) -> dict:
    """Per release kind: the correct std (sensitivity / its mu) over the std the fit drew (from its ledger)."""
    return {f"under_noised_{KINDS[e.name]}": e.sensitivity / e.mu / e.noise_scale
            for e in est.privacy_ledger_.gaussian_entries}


REFIT_KEYS = ("algorithm", "dataset", "epsilon", "delta", "tuning_mode", "seed", "split", "data_seed", "random_state")


def refit_units(runs: pd.DataFrame, load_data, extra: dict, out: list):
    """Per data split of `runs` (the runner's units): (its runs, a base row for each: `extra`, the source run's
    id, identity and test MSE; its data, loaded once).  A split the mirror lacks (`load_data` raises
    MissingDataError) adds its base rows to `out` as missing_data instead."""
    for _, unit in runs.groupby(["dataset", "data_seed", "split"], sort=True):
        base = [{**extra, "source_run_id": r.run_id, **{k: getattr(r, k) for k in REFIT_KEYS},
                 "test_mse_reference": r.test_mse} for r in unit.itertuples()]
        try:
            data = load_data(unit.iloc[0])
        except MissingDataError as exc:
            out += [{**b, "status": "missing_data", "error": str(exc)} for b in base]
            continue
        yield unit, base, data


def win_table(frames: dict, figure: str, partner: str, setting, keys, substantially: bool = False) -> pd.DataFrame:
    """Per epsilon, for each frame (name -> rows of `figure`): BoostedAdaSSP's wins over `partner` in `setting`
    (the claim's cells: mean test MSE over seeds per dataset) on the (epsilon, dataset) cells `keys`, the sign
    test's p, the median MSE ratio and whether the claim's test holds (`substantially`: also a median ratio <=
    SUBSTANTIAL); columns '<statistic>_<name>'."""
    rows = []
    for name, frame in frames.items():
        t = cells(lambda _: frame, figure, partner, setting).table  # noqa: B023 - called at once
        t = t[t.index.isin(keys)]
        for eps, g in t.groupby(level="epsilon"):
            wins, n = int((g["ours"] < g["partner"]).sum()), int((g["ours"] != g["partner"]).sum())
            p, ratio = sign_test(wins, n), float((g["ours"] / g["partner"]).median())
            rows.append({"frame": name, "epsilon": eps, "wins": wins, "n": n, "p": p, "median_ratio": ratio,
                         "claim_holds": n >= MIN_CELLS and p < ALPHA and (ratio <= SUBSTANTIAL or not substantially)})
    table = pd.DataFrame(rows)
    if table.empty:
        return table
    table = table.pivot(index="epsilon", columns="frame")
    table.columns = [f"{a}_{b}" for a, b in table.columns]
    return table


def refit(runs: pd.DataFrame, load_data) -> list[dict]:
    """One row per run: its refit with the authors' noise and with dpbench's; `load_data(run)` -> Dataset (raises
    MissingDataError when the mirror lacks it).  Runs of one (dataset, epsilon) are fitted as one batch, as the
    runner does, the data loaded once per dataset."""
    out = []
    for unit, base, data in refit_units(runs, load_data, {"experiment": NAME, "method": METHOD, "private": False},
                                        out):
        shared = SharedData(data.X_train, data.y_train)
        for eps, group in unit.groupby("epsilon", sort=True):
            idx = [unit.index.get_loc(i) for i in group.index]
            made = [_estimator(r) for r in group.itertuples()]
            authors, correct = [m[0] for m in made], [_estimator(r)[0] for r in group.itertuples()]
            mu = mu_from_epsilon_delta(float(eps), float(group["delta"].iloc[0]))
            start = time.perf_counter()
            with authors_noise(mu):
                type(authors[0]).fit_batch(authors, data.X_train, data.y_train, shared)
            seconds = (time.perf_counter() - start) / len(authors)
            type(correct[0]).fit_batch(correct, data.X_train, data.y_train, shared)
            for i, a, c, (_, params) in zip(idx, authors, correct, made, strict=True):
                score = evaluate(a, data)
                out.append({**base[i], "task": data.task, "n_train": data.n_train, "n_test": data.n_test,
                            "d": data.d, "params": json.dumps(params, sort_keys=True),
                            "n_rounds": int(params["n_rounds"]), "mu_total": mu,
                            "status": getattr(a, "fit_status_", "ok"), "test_mse": score["test_mse"],
                            "train_mse": score["train_mse"], "test_mse_dpbench": evaluate(c, data)["test_mse"],
                            "fit_seconds": seconds, **under_noised(a)})
    return out


def comparison(diag: pd.DataFrame, fig2: pd.DataFrame, setting=BOTH_TUNED, figure: str = FIGURE,
               partner: str = PARTNER, substantially: bool = True) -> pd.DataFrame:
    """Per epsilon: BoostedAdaSSP's wins over `partner` in `setting` (the claim's (partner's mode, BoostedAdaSSP's
    mode) and cells: mean test MSE over seeds per dataset) with the authors' noise and with the correct runs of
    `figure` (rows `fig2`), on the (dataset, epsilon) cells the diagnosis refitted; the sign test's p, the median MSE
    ratio, and the median under-noising per release.  The refits serve every paper 000 figure: its BoostedAdaSSP
    runs are fig2's (the same run ids); `substantially`: the claim also asks a median ratio <= SUBSTANTIAL."""
    diag = diag[diag["tuning_mode"] == setting[1]]
    done = diag[released(diag) & diag["test_mse"].notna()]
    mse, status = done.set_index("source_run_id")["test_mse"], done.set_index("source_run_id")["status"]
    keys = pd.MultiIndex.from_frame(done[["epsilon", "dataset"]]).unique()
    ours = (fig2["algorithm"] == Y) & (fig2["tuning_mode"] == setting[1])
    authors = fig2.assign(test_mse=fig2["test_mse"].where(~ours, fig2["run_id"].map(mse)),
                          status=fig2["status"].where(~ours, fig2["run_id"].map(status).fillna("missing_data")))
    if "zero_model" in authors:  # the refit's own output decides (by its status)
        authors["zero_model"] = authors["zero_model"].where(~ours, None)
    table = win_table({"authors": authors, "dpbench": fig2}, figure, partner, setting, keys, substantially)
    if table.empty:
        return table
    ratios = done.groupby("epsilon")[[c for c in done if c.startswith("under_noised_")]].median()
    return table.join(ratios)


def _x(v: float) -> str:
    """'2.3e4x', '309x', '5.1x'."""
    if v >= 1e4:
        m, e = f"{v:.1e}".split("e")
        return f"{m}e{int(e)}x"
    return f"{v:.0f}x" if v >= 10 else f"{v:.2g}x"


def diagnosis_text(table: pd.DataFrame, setting=BOTH_TUNED, figure: str = FIGURE) -> str:
    """The one-line diagnosis of `comparison`'s table for `setting` of `figure`."""
    x, name, _, substantially = DIAGNOSED[figure]
    partner, ours = f"{setting[0]} {name}", f"{setting[1]} BoostedAdaSSP"
    if table.empty:
        return f"no dataset with both a refitted {ours} run and {partner} runs of {figure} to compare"
    eps = list(table.index)
    per = lambda col: "/".join(f"{int(v)}" for v in table[col])  # noqa: E731
    of = lambda col: "/".join(dict.fromkeys(f"{int(v)}" for v in table[col]))  # noqa: E731 - "23" when all equal
    explained = [e for e in eps if table.at[e, "claim_holds_authors"] and not table.at[e, "claim_holds_dpbench"]]
    either = [e for e in eps if table.at[e, "claim_holds_dpbench"]]
    neither = [e for e in eps if e not in explained and e not in either]
    g = lambda es: ", ".join(f"{e:g}" for e in es)  # noqa: E731
    verdict = "; ".join(part for part in (
        f"the paper's result is explained at eps {g(explained)}" if explained else "",
        f"holds with the correct noise at eps {g(either)}" if either else "",
        f"not explained at eps {g(neither)}" if neither else "") if part)
    xtg = " / ".join(_x(v) for v in table["under_noised_xtg"])
    return (f"with the authors' code's noise (std = sensitivity x mu, not split across releases or rounds; X^T g "
            f"under-noised ~{xtg} at eps {'/'.join(f'{e:g}' for e in eps)}, median over runs) {ours} has "
            f"the lower mean test MSE than {partner} on {per('wins_authors')} "
            f"of {of('n_authors')} datasets (correct accounting: {per('wins_dpbench')} of {of('n_dpbench')}; claim's "
            f"test: sign test p < {ALPHA:g}" + (f" and median MSE ratio <= {SUBSTANTIAL:g}" if substantially else "")
            + f"): {verdict}")


def explain(load, setting=BOTH_TUNED, figure: str = FIGURE) -> str:
    """The diagnosis line from the results `load(name)` returns (the report's loader): the refits of this
    analysis and, read now, the `figure` sweep's partner and BoostedAdaSSP runs."""
    x, _, _, substantially = DIAGNOSED[figure]
    return diagnosis_text(comparison(load(NAME), load(figure), setting, figure, x, substantially), setting, figure)


for _fig, (_, _, _wheres, _) in DIAGNOSED.items():
    for _setting, _where in _wheres.items():
        diagnosis(_fig, _where, "accounting", f"python -m dpbench analysis {NAME}")(
            lambda load, s=_setting, f=_fig: explain(load, s, f))


def _load_data(data_dir):
    return lambda run: load_dataset(run["dataset"], split_seed=int(run["data_seed"]), data_dir=data_dir,
                                    split=run["split"])


@analysis(NAME, "paper 000 Fig. 2 refitted with the noise of the authors' public code (not private): does it "
                "explain the paper's wins over DP-GD?")
def run(out: Path, smoke: bool = False) -> list[Path]:
    src = source_dir(out)
    fig2 = paper_rows(src, FIGURE)
    runs = runs_to_refit(fig2)
    if not ((fig2["algorithm"] == PARTNER) & (fig2["tuning_mode"] == "tuned")).any():
        every = results.load(src / FIGURE)  # e.g. while DP-GD's grid is being re-run: its rows of an older grid
        print(f"no tuned DP-GD runs of the shipped grid in {src / FIGURE}; the summary compares with every DP-GD "
              f"row there (grids {', '.join(every['config_hash'].dropna().unique())})")
        fig2 = pd.concat([fig2, every[every["algorithm"] == PARTNER]])
    if smoke:
        cost = runs.groupby("dataset")["n_train"].first() * runs.groupby("dataset")["d"].first()
        runs = runs[runs["dataset"].isin(cost.nsmallest(SMOKE_DATASETS).index) & runs["epsilon"].isin(SMOKE_EPSILONS)]
    print(f"{NAME}: refitting {len(runs)} BoostedAdaSSP runs of {src / FIGURE}")
    diag = pd.DataFrame(refit(runs, _load_data(resolve_data_dir())))
    diag["source"] = str(src / FIGURE)
    path = out / f"{NAME}.parquet"
    diag.to_parquet(path, index=False)
    missing = diag.loc[diag["status"] == "missing_data", "dataset"].unique()
    if len(missing):
        print(f"skipped (not in the mirror): {', '.join(missing)}")
    ok = diag[diag["test_mse_dpbench"].notna()]
    gap = (ok["test_mse_dpbench"] / ok["test_mse_reference"] - 1).abs()
    print(f"refit with dpbench's noise vs the sweep's test MSE: max relative difference {gap.max():.2g} "
          f"over {len(ok)} runs")
    for figure, (x, _, wheres, substantially) in DIAGNOSED.items():
        rows = fig2 if figure == FIGURE else paper_rows(src, figure)
        for setting in wheres:
            table = comparison(diag, rows, setting, figure, x, substantially)
            with pd.option_context("display.width", 200, "display.max_columns", 30):
                print(f"{figure}, {SETTINGS[setting]}:\n" + table.to_string(float_format=lambda v: f"{v:.4g}"))
            print(diagnosis_text(table, setting, figure))
    return [path]
