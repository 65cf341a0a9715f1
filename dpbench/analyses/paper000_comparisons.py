"""Paper 000 Sec. IV's claims about Figs 1-5 and 12, measured on the sweeps `fig1` ... `fig5`, `fig12`
(and `fig1_fixed`, `fig1_split` for setting (c)).

A cell is one (dataset, epsilon): the mean test MSE over seeds of each algorithm, every released run counted
(`claims.paired_cells`: TukeyEM's zero model after a failed PTR check is its output).  The readings (`claims.majority`):
- "lower error on the majority of datasets" / "outperforms": at every epsilon a one-sided sign test over
  datasets that BoostedAdaSSP's MSE is lower, p < 0.05;
- "substantially": the same, and the median over datasets of MSE_BoostedAdaSSP / MSE_partner at most 0.9;
- "competitive" (non-inferiority): at every epsilon BoostedAdaSSP's MSE at most 1.1 x the partner's on
  significantly more than half of the datasets (sign test, p < 0.05).
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from dpbench import claims
from dpbench.claims import ALPHA, MIN_CELLS, Verdict, claim, majority, paired_cells, sign_test, spearman_interval
from dpbench.data import groups
from dpbench.plots.scatter import setting_rows

Y = "boosted_adassp"
BOTH_TUNED, Y_FIXED, BOTH_FIXED = ("tuned", "tuned"), ("tuned", "fixed"), ("fixed", "fixed")
SUBSTANTIAL = 0.9  # "substantially lower": median MSE ratio (BoostedAdaSSP / partner) at most this
COMPETITIVE = 1.1  # "competitive": BoostedAdaSSP's MSE at most this times the partner's
# "not a controlling factor": reproduced when the 95% interval of Spearman rho contains 0 at every epsilon (with no
# link, ~0.95^3 = 86% of the time; the earlier reading, the interval inside +-0.5, came out 33% of the time at 23
# datasets and 0% at 8), not reproduced when it lies beyond +-RHO_BAND somewhere (an obvious link)
RHO_BAND = 0.5

MAJORITY = ("at every epsilon, a one-sided sign test over datasets (cell: mean test MSE over seeds; "
            "every released run counted, a fallback with its error) that BoostedAdaSSP's MSE is lower, p < 0.05 "
            "(needs 5 "
            "datasets); not reproduced when BoostedAdaSSP is better on at most half of them at some epsilon")
SUBSTANTIALLY = (MAJORITY + f"; and 'substantially': the median over datasets of MSE_BoostedAdaSSP / MSE_partner "
                 f"at most {SUBSTANTIAL} at every epsilon (not reproduced above it)")


def cells(load, figure: str, x: str, setting):
    """BoostedAdaSSP (ours) and x (partner) per (epsilon, dataset); setting None: every run of both."""
    return paired_cells(setting_rows(load(figure), x, Y, setting), ["epsilon", "dataset"], "algorithm", Y, x,
                        "test_mse")


def outperforms(load, figure: str, x: str, setting, substantially: bool = False) -> Verdict:
    c = cells(load, figure, x, setting)
    t = c.table
    if t.empty:
        return Verdict(None, "no dataset with results of both in this setting" + c.note())
    holds, text = majority(t["ours"] < t["partner"], t["ours"] > t["partner"], "epsilon", t["ours"] / t["partner"],
                           SUBSTANTIAL if substantially else None)
    return Verdict(holds, "BoostedAdaSSP lower MSE on " + text + c.note())


def competitive(load, figure: str, x: str, setting) -> Verdict:
    c = cells(load, figure, x, setting)
    t = c.table
    if t.empty:
        return Verdict(None, "no dataset with results of both in this setting" + c.note())
    holds, text = majority(t["ours"] <= COMPETITIVE * t["partner"], t["ours"] > COMPETITIVE * t["partner"], "epsilon")
    return Verdict(holds, f"BoostedAdaSSP's MSE at most {COMPETITIVE} x the partner's on " + text + c.note())


def _register(figure, x, setting, where, quote, substantially=False):
    claim(figure, "000", where, quote, SUBSTANTIALLY if substantially else MAJORITY)(
        lambda load: outperforms(load, figure, x, setting, substantially))


FIG1_A = ("When hyperparameters are non-privately tuned for both methods, [...] our method (BoostedAdaSSP) obtains "
          "lower error on the majority of datasets at all tested privacy levels.")
FIG1_C = ("Finally, when both methods use fixed hyperparameters, BoostedAdaSSP has substantially improved error "
          "across a majority of datasets at all privacy levels.")
_register("fig1", "adassp", BOTH_TUNED, "Sec. IV, Fig. 1 (both tuned)", FIG1_A)
claim("fig1", "000", "Sec. IV, Fig. 1 (BoostedAdaSSP fixed, AdaSSP tuned)",
      "When BoostedAdaSSP uses fixed hyperparameters, it remains competitive with AdaSSP even when AdaSSP is "
      "non-privately tuned on each dataset.",
      f"non-inferiority: at every epsilon, BoostedAdaSSP's MSE at most {COMPETITIVE} x AdaSSP's on significantly "
      "more than half of the datasets (one-sided sign test, p < 0.05; fallbacks counted); not reproduced when "
      "that holds on at most half at some epsilon", effect=False)(
    lambda load: competitive(load, "fig1", "adassp", Y_FIXED))
for _fig in ("fig1", "fig1_fixed"):
    _register(_fig, "adassp", BOTH_FIXED, "Sec. IV, Fig. 1 (both fixed)", FIG1_C, substantially=True)

PARTNERS = {"fig2": ("dpgd", "Sec. IV, Fig. 2", "But in all comparison settings (including when the hyper-parameters "
                     "of gradient descent are non-privately optimized on individual datasets, and BoostedAdaSSP "
                     "uses fixed hyperparameters across all datasets), BoostedAdaSSP substantially outperforms.", True),
            "fig3": ("tukey", "Sec. IV, Fig. 3", "BoostedAdaSSP also outperforms TukeyEM in all experimental regimes",
                     False),
            "fig4": ("dp_ebm", "Sec. IV, Fig. 4 (caption)", "Our method outperforms in all experimental regimes.",
                     False)}
for _fig, (_x, _where, _quote, _subst) in PARTNERS.items():
    for _setting, _label in ((BOTH_TUNED, "both tuned"), (Y_FIXED, "BoostedAdaSSP fixed, partner tuned"),
                             (BOTH_FIXED, "both fixed")):
        _register(_fig, _x, _setting, f"{_where} ({_label})", _quote, _subst)
_register("fig5", "ambssgd", BOTH_TUNED, "Sec. IV, Fig. 5 (caption; both tuned)",
          "our algorithm BoostedAdaSSP with optimally tuned hyperparameters outperforms optimally tuned DP-AMBSSGD")
_register("fig5", "ambssgd", Y_FIXED, "Sec. IV, Fig. 5 (caption; BoostedAdaSSP fixed)",
          "and even with fixed hyperparameters, our algorithm still achieves lower MSE values on a majority of "
          "datasets.")
def sign_test_power(n: int, share: float) -> float:
    """Probability that the one-sided sign test over `n` datasets gives p < ALPHA when each is won with
    probability `share`."""
    need = next((k for k in range(n + 1) if sign_test(k, n) < ALPHA), n + 1)
    return float(stats.binom.sf(need - 1, n, share))


def power_limit(load, figure: str, x: str, setting, competitive: bool = False) -> str:
    """The 'undecided' of a majority reading (a win: BoostedAdaSSP's MSE lower, or at most COMPETITIVE x the
    partner's) read as power: at each epsilon with a majority that is not significant, the test's power at the
    measured share on the datasets with results and on paper 000's 33 tasks (Table III), and the p the same share
    would give there."""
    t = cells(load, figure, x, setting).table
    margin = COMPETITIVE if competitive else 1.0
    paper = len(groups()["openml_all"])
    parts = []
    for e, g in t.groupby(level="epsilon"):
        better = g["ours"] <= margin * g["partner"] if competitive else g["ours"] < g["partner"]
        wins, n = int(better.sum()), int((better | (g["ours"] > margin * g["partner"])).sum())
        p = sign_test(wins, n)
        if n < MIN_CELLS or p < ALPHA or wins <= n / 2:
            continue
        share = wins / n
        parts.append(f"eps {e:g}: {wins}/{n} ({share:.0%}, p = {p:.2g}), power at that share "
                     f"{sign_test_power(n, share):.0%}; on the paper's {paper} the same share gives "
                     f"p = {sign_test(round(share * paper), paper):.2g}, power {sign_test_power(paper, share):.0%}")
    if not parts:
        return "no epsilon with a majority that is not significant"
    missing = paper - len(t.index.unique("dataset"))
    return (f"undecided, not contradicted: a majority too small for the test on the datasets at hand ({missing} of "
            f"the paper's {paper} tasks are not in the data mirror): " + "; ".join(parts))


def _power(figure, x, setting, where, competitive=False):
    claims.diagnosis(figure, where, "data", "python -m dpbench report")(
        lambda load: power_limit(load, figure, x, setting, competitive))


_power("fig1", "adassp", Y_FIXED, "Sec. IV, Fig. 1 (BoostedAdaSSP fixed, AdaSSP tuned)", competitive=True)
for _setting, _label in ((Y_FIXED, "BoostedAdaSSP fixed, partner tuned"), (BOTH_FIXED, "both fixed")):
    _power("fig3", "tukey", _setting, f"{PARTNERS['fig3'][1]} ({_label})")
_power("fig5", "ambssgd", Y_FIXED, "Sec. IV, Fig. 5 (caption; BoostedAdaSSP fixed)")

_register("fig1_split", "adassp", None, "dpbench's check, not a paper sentence (Fig. 1 (c) under the 1:sqrt(T):1 "
          "budget split)", "fixed BoostedAdaSSP beats fixed AdaSSP on a majority of datasets", substantially=False)


@claim("fig3", "000", "Sec. IV, Fig. 3 (both tuned)",
       "we can see that the advantage that BoostedAdaSSP enjoys diminishes as the privacy parameter increases",
       "one-sided sign test over datasets (results at both the smallest and the largest epsilon, "
       "fallbacks counted) that log(MSE_TukeyEM / MSE_BoostedAdaSSP) is larger at the smallest epsilon than at the "
       "largest, "
       "p < 0.05 (needs 5 datasets); not reproduced when it is larger on at most half of them")
def _tukey_gap(load) -> Verdict:
    c = cells(load, "fig3", "tukey", BOTH_TUNED)
    if c.table.empty:
        return Verdict(None, "no dataset with results of both" + c.note())
    gap = np.log(c.table["partner"] / c.table["ours"]).unstack("epsilon")
    if gap.shape[1] < 2:
        return Verdict(None, "one privacy level" + c.note())
    lo, hi = gap.columns.min(), gap.columns.max()
    both = gap[[lo, hi]].dropna()
    shrinks, grows = int((both[lo] > both[hi]).sum()), int((both[lo] < both[hi]).sum())
    n = shrinks + grows
    p = sign_test(shrinks, n)
    measured = ("median log MSE ratio: " + ", ".join(f"eps {e:g}: {g:.2f} ({gap[e].notna().sum()} datasets)"
                                                      for e, g in gap.median().items())
                + f"; advantage smaller at eps {hi:g} than at {lo:g} on {shrinks}/{n} datasets (p = {p:.3g})"
                + c.note())
    if n < MIN_CELLS:
        return Verdict(None, measured + "; " + c.too_few(n))
    return Verdict(True if p < ALPHA else (False if shrinks <= n / 2 else None), measured)


@claim("fig12", "000", "App. D, Fig. 12 (caption; both fixed)",
       "It doesn't seem obvious that the ratio N/d is a controlling factor for the success of an algorithm.",
       f"'not obvious': at every epsilon the 95% bootstrap interval (2000 resamples of datasets) of Spearman rho "
       f"between log(n/d) and log(MSE_TukeyEM / MSE_BoostedAdaSSP) contains 0 (no evident link; needs 5 datasets; "
       f"fallbacks counted); not reproduced when at some epsilon it lies beyond +-{RHO_BAND} (|rho| significantly "
       f">= {RHO_BAND}: an obvious controlling factor); undecided otherwise (a link that is evident but not strong)",
       effect=False)
def _n_over_d(load) -> Verdict:
    c = cells(load, "fig12", "tukey", BOTH_FIXED)
    if c.table.empty:
        return Verdict(None, "no dataset with results of both" + c.note())
    parts, verdicts = [], []
    for e, (n, rho, lo, hi) in _rho_by_epsilon(load, c.table).items():
        if n < MIN_CELLS:
            parts.append(f"eps {e:g}: {n} datasets; {c.too_few(n)}")
            verdicts.append(None)
            continue
        parts.append(f"eps {e:g}: rho {rho:+.2f} [{lo:+.2f}, {hi:+.2f}] ({n} datasets)")
        verdicts.append(False if lo >= RHO_BAND or hi <= -RHO_BAND else (True if lo <= 0 <= hi else None))
    holds = False if False in verdicts else (True if all(v is True for v in verdicts) else None)
    return Verdict(holds, "Spearman rho [95% interval]: " + "; ".join(parts) + c.note())


def _rho_by_epsilon(load, table) -> dict:
    """epsilon -> (datasets, Spearman rho, its 95% interval) of log(n/d) against log(MSE_TukeyEM /
    MSE_BoostedAdaSSP) over the cells of `table` (rho and interval NaN below MIN_CELLS datasets)."""
    first = load("fig12").groupby("dataset")[["n_train", "n_test", "d"]].first()
    ratio = np.log((first["n_train"] + first["n_test"]) / first["d"])
    out = {}
    for e, p in table.groupby(level="epsilon"):
        p = p.droplevel("epsilon")
        out[e] = (len(p), *(spearman_interval(ratio.reindex(p.index), np.log(p["partner"] / p["ours"]))
                            if len(p) >= MIN_CELLS else (np.nan,) * 3))
    return out


# none found: the link at eps 0.1 is TukeyEM's zero model (its PTR check fails on every dataset there), so the ratio
# is BoostedAdaSSP against predicting 0; where TukeyEM released trained models the intervals contain 0
@claims.diagnosis("fig12", "App. D, Fig. 12 (caption; both fixed)", "none found", "python -m dpbench report")
def explain_n_over_d(load) -> str:
    """Per epsilon whose interval does not contain 0: how many TukeyEM runs returned the zero model, and rho over
    the cells where TukeyEM released trained models only."""
    c = cells(load, "fig12", "tukey", BOTH_FIXED)
    rows = setting_rows(load("fig12"), "tukey", Y, BOTH_FIXED)
    tukey = rows[(rows["algorithm"] == "tukey") & claims.released(rows)]
    zero = claims.failed(tukey).groupby(tukey["epsilon"]).agg(["sum", "size"])
    with claims.fallbacks_excluded():
        trained = _rho_by_epsilon(load, cells(load, "fig12", "tukey", BOTH_FIXED).table)
    parts = []
    for e, (n, rho, lo, hi) in _rho_by_epsilon(load, c.table).items():
        if n < MIN_CELLS or lo <= 0 <= hi:
            continue
        k, runs = (int(v) for v in zero.loc[e])
        m, rho_t, lo_t, hi_t = trained.get(e, (0, np.nan, np.nan, np.nan))
        parts.append(f"eps {e:g} (rho {rho:+.2f} [{lo:+.2f}, {hi:+.2f}]): TukeyEM returned its zero model in {k} of "
                     f"{runs} runs, so there the ratio is {'' if k == runs else 'mostly '}BoostedAdaSSP's gain over "
                     f"predicting 0, which grows with n/d; over the cells where TukeyEM released trained models only: "
                     + (f"rho {rho_t:+.2f} [{lo_t:+.2f}, {hi_t:+.2f}] ({m} datasets)" if m >= MIN_CELLS else
                        f"{m} datasets, too few"))
    others = "; ".join(f"eps {e:g}: rho {r:+.2f} [{lo:+.2f}, {hi:+.2f}] ({n} datasets)"
                       for e, (n, r, lo, hi) in trained.items() if n >= MIN_CELLS)
    return ("; ".join(parts) or "every interval contains 0") + (
        f"; trained TukeyEM models only, every epsilon: {others}" if others else "") + (
        "; paper 000 reports TukeyEM's all-zero output in many scenarios too, so nothing found to differ from the "
        "paper's set-up")
