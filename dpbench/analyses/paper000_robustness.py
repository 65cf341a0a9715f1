"""Paper 000 Sec. V's claims about Figs. 6-11, measured on the sweeps `robust_label` (Figs. 6-7),
`robust_feature` (Figs. 8-9) and `robust_model` (Figs. 10-11).

A *cell* is one (epsilon, p, n); "wins" compares mean test MSE over the trials of the sweep (TukeyEM's
ptr_failed zero models count in its mean, as in the figures).  Readings of the paper's words:
- "outperforms AdaSSP regardless of ..." : BoostedAdaSSP's mean is lower in every cell;
- "small / little corruption" : the smallest p of the grid (1%); "few corrupted samples": p <= the second
  smallest p (5%); "many / large n" : n >= the median n of the grid; "few / small n" : n <= the median;
- "epsilon larger" : TukeyEM wins at least once at the largest epsilon, and not more often at the smallest.
TukeyEM runs with several numbers of models (1000, the registry's fixed value, and 10,000; see the configs):
a TukeyEM claim holds if it holds for every setting, fails if it fails for every setting, and is undecided
(None) when the settings disagree; the measurement names each.
"""

from __future__ import annotations

import pandas as pd

from dpbench.claims import Verdict, claim
from dpbench.plots.common import usable
from dpbench.plots.robustness import comparison, settings, variants

OURS = "boosted_adassp"


def _comparisons(df: pd.DataFrame, partner: str) -> dict[str, pd.DataFrame]:
    """variant label -> the cell comparison of BoostedAdaSSP with that variant of `partner`."""
    ok = variants(settings(usable(df)))
    out = {}
    for variant, label in dict(zip(ok["variant"], ok["variant_label"], strict=True)).items():
        if variant.split("[")[0] == partner:
            out[label] = comparison(df, OURS, variant)
    return out


def _cells(c: pd.DataFrame) -> str:
    return ", ".join(f"(eps {r.epsilon:g}, p {r.fraction:g}, n {r.n_train:,})" for r in c.itertuples()) or "none"


def _trials(c: pd.DataFrame) -> str:
    lo, hi = int(c["count_ours"].min()), int(c["count_ours"].max())
    return f"{lo}" if lo == hi else f"{lo}-{hi}"


def beats_everywhere(load, figure: str, partner: str) -> Verdict:
    """BoostedAdaSSP's mean test MSE below the partner's in every cell (each partner setting)."""
    verdicts = []
    for label, c in _comparisons(load(figure), partner).items():
        if c.empty:
            continue
        ratio = c["mean_ours"] / c["mean_partner"]
        lost = c[~c["ours_better"]]
        failed = f"; {int(c['failed'].sum())} of {int(c['count_partner'].sum())} {label} runs failed" if c[
            "failed"].any() else ""
        verdicts.append((lost.empty, f"vs {label}: BoostedAdaSSP lower in {int(c['ours_better'].sum())} of {len(c)} "
                                     f"cells ({_trials(c)} trials), MSE ratio median {ratio.median():.3g}, "
                                     f"max {ratio.max():.3g}; lost: {_cells(lost)}{failed}"))
    return _combine(verdicts)


def _combine(verdicts: list[tuple[bool, str]]) -> Verdict:
    if not verdicts:
        return Verdict(None, "no cell with results of both algorithms")
    held = {h for h, _ in verdicts}
    return Verdict(held.pop() if len(held) == 1 else None, "; ".join(m for _, m in verdicts))


def tukey_wins_only_where(load, figure: str, where, describe: str, eps_larger: bool = False) -> Verdict:
    """TukeyEM wins somewhere, and every win is in the region `where(cells, grid)` (a boolean per cell)."""
    verdicts = []
    for label, c in _comparisons(load(figure), "tukey").items():
        if c.empty:
            continue
        wins = c[~c["ours_better"]]
        inside = where(wins, c)
        holds = len(wins) > 0 and bool(inside.all())
        extra = ""
        if eps_larger:
            hi, lo = c["epsilon"].max(), c["epsilon"].min()
            at_hi, at_lo = int((wins["epsilon"] == hi).sum()), int((wins["epsilon"] == lo).sum())
            holds = holds and at_hi >= 1 and at_hi >= at_lo
            extra = f"; wins at eps {hi:g}: {at_hi}, at eps {lo:g}: {at_lo}"
        failed = int(c["failed"].sum())
        verdicts.append((holds, f"vs {label}: TukeyEM lower in {len(wins)} of {len(c)} cells ({_trials(c)} trials; "
                                f"{failed} of {int(c['count_partner'].sum())} TukeyEM runs ptr_failed): "
                                f"{_cells(wins)}; outside {describe}: {int((~inside).sum())}{extra}"))
    return _combine(verdicts)


def _small_p_large_n(wins: pd.DataFrame, c: pd.DataFrame) -> pd.Series:
    return (wins["fraction"] == c["fraction"].min()) & (wins["n_train"] >= c["n_train"].median())


def _few_samples_few_corrupted(wins: pd.DataFrame, c: pd.DataFrame) -> pd.Series:
    ps = sorted(c["fraction"].unique())
    return (wins["n_train"] <= c["n_train"].median()) & (wins["fraction"] <= ps[min(1, len(ps) - 1)])


@claim("robust_label", "000", "Sec. V-A, Fig. 6: BoostedAdaSSP consistently outperforms AdaSSP under label "
       "corruption regardless of the privacy level, the number of training samples and the portion of outliers")
def _label_vs_adassp(load) -> Verdict:
    return beats_everywhere(load, "robust_label", "adassp")


@claim("robust_label", "000", "Sec. V-A, Fig. 7: under label corruption TukeyEM outperforms BoostedAdaSSP only "
       "when the corrupted portion is small (1%) and the number of samples is large; otherwise BoostedAdaSSP wins")
def _label_vs_tukey(load) -> Verdict:
    return tukey_wins_only_where(load, "robust_label", _small_p_large_n, "(smallest p, n >= median n)")


@claim("robust_feature", "000", "Sec. V-B, Fig. 8: BoostedAdaSSP improves on AdaSSP when the features of a small "
       "portion of samples are corrupted")
def _feature_vs_adassp(load) -> Verdict:
    return beats_everywhere(load, "robust_feature", "adassp")


@claim("robust_feature", "000", "Sec. V-B, Fig. 9: under feature corruption TukeyEM outperforms when the number of "
       "samples and of corrupted samples are small, and more so at the larger epsilon; otherwise BoostedAdaSSP "
       "dominates")
def _feature_vs_tukey(load) -> Verdict:
    return tukey_wins_only_where(load, "robust_feature", _few_samples_few_corrupted,
                                 "(n <= median n, p <= 5%)", eps_larger=True)


@claim("robust_model", "000", "Sec. V-C, Fig. 10: with a portion of samples from a different linear model, "
       "BoostedAdaSSP outperforms AdaSSP")
def _model_vs_adassp(load) -> Verdict:
    return beats_everywhere(load, "robust_model", "adassp")


@claim("robust_model", "000", "Sec. V-C, Fig. 11: with a portion of samples from a different linear model, "
       "BoostedAdaSSP is more robust than TukeyEM")
def _model_vs_tukey(load) -> Verdict:
    return beats_everywhere(load, "robust_model", "tukey")
