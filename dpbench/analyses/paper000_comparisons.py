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

from dpbench.claims import ALPHA, MIN_CELLS, Verdict, claim, majority, paired_cells, sign_test, spearman_interval
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
    df = load("fig12")
    c = cells(load, "fig12", "tukey", BOTH_FIXED)
    if c.table.empty:
        return Verdict(None, "no dataset with results of both" + c.note())
    first = df.groupby("dataset")[["n_train", "n_test", "d"]].first()
    ratio = np.log((first["n_train"] + first["n_test"]) / first["d"])
    parts, verdicts = [], []
    for e, p in c.table.groupby(level="epsilon"):
        p = p.droplevel("epsilon")
        if len(p) < MIN_CELLS:
            parts.append(f"eps {e:g}: {len(p)} datasets; {c.too_few(len(p))}")
            verdicts.append(None)
            continue
        rho, lo, hi = spearman_interval(ratio.reindex(p.index), np.log(p["partner"] / p["ours"]))
        parts.append(f"eps {e:g}: rho {rho:+.2f} [{lo:+.2f}, {hi:+.2f}] ({len(p)} datasets)")
        verdicts.append(False if lo >= RHO_BAND or hi <= -RHO_BAND else (True if lo <= 0 <= hi else None))
    holds = False if False in verdicts else (True if all(v is True for v in verdicts) else None)
    return Verdict(holds, "Spearman rho [95% interval]: " + "; ".join(parts) + c.note())
