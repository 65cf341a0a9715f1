"""The papers' claims, each next to the check that measures it on dpbench's results, and the statistical tests
the checks share.

A claim is one sentence of a paper about one figure or table, registered with
`@claim(figure, paper, where, quote, criterion)` on a function `check(load) -> Verdict`: `quote` is the paper's
sentence word for word, `where` locates it (section, figure), `criterion` is the falsifiable test dpbench applies
(the report prints it beside the verdict).  `load(name)` returns the results of the sweep or analysis `name` (a
DataFrame) and raises FileNotFoundError when it has not been run.  `holds` is True only when the test supports
the claim, False when the numbers contradict it, None when the results cannot decide (too few cells, a missing
dataset, partners that failed).

Every criterion has a stated false-positive rate `fpr`: for a claim of an effect (`effect=True`), how often it
comes out reproduced on results with no effect; for a claim of no effect (`effect=False`, e.g. "not a
controlling factor", "competitive"), how often it comes out reproduced on results with a strong effect.
`dpbench.claim_simulation` measures both, and the power at the paper's effect, on seeded synthetic results
(tests/test_claims.py checks them; the report prints them).

Shared conventions (one place, used by every check):
- a *cell* is one comparison unit (dataset x epsilon, or epsilon x p x n); a run counts with what it released:
  a trained model, or the algorithm's own fallback (TukeyEM's zero model after a failed PTR check, a status
  other than 'ok' that is not a harness failure) with its real error, as the papers count it ("produces an
  all-zero parameter vector in many scenarios"); only a run that released nothing (`NO_RELEASE`: an error,
  missing data) is left out.  `Cells.note` says how many outputs were fallbacks on each side, and the report
  re-judges every claim with fallbacks excluded (`fallbacks_excluded`: a cell with a fallback on either side is
  not compared, the rule before) and says so where that changes the verdict (the figures' win counts use the
  same `paired_cells`);
- "better on the majority" is a one-sided sign test over cells at level `ALPHA`; False when the observed share
  is at most one half; a test needs at least `MIN_CELLS` cells (the fewest for which p < ALPHA is possible).
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from dpbench.results import NO_MODEL_STATUSES

ALPHA = 0.05  # level of every one-sided test
MIN_CELLS = 5  # a sign test over fewer cells cannot reach p < ALPHA (0.5 ** 5 = 0.031)
NO_RELEASE = NO_MODEL_STATUSES  # statuses of runs that released nothing (harness failures)
_EXCLUDING = [False]  # True inside `fallbacks_excluded`


@contextlib.contextmanager
def fallbacks_excluded():
    """Within the block `paired_cells` leaves out every cell where a side returned a fallback in some run: the
    sensitivity reading the report prints beside a verdict it would change."""
    _EXCLUDING.append(True)
    try:
        yield
    finally:
        _EXCLUDING.pop()


@dataclass(frozen=True)
class Verdict:
    holds: bool | None
    measured: str  # the numbers the verdict rests on


@dataclass(frozen=True)
class Claim:
    figure: str  # the results name the claim is about, e.g. 'fig1' (results/fig1/)
    paper: str  # '000' ... '004' (../shared/papers)
    where: str  # section / figure of the paper, e.g. 'Sec. IV, Fig. 1(a)'
    quote: str  # the paper's sentence, word for word
    criterion: str  # the test dpbench applies, falsifiable, with its thresholds
    check: Callable  # check(load) -> Verdict
    effect: bool = True  # True: the sentence asserts an effect; False: it asserts no (substantial) effect
    fpr: float = ALPHA  # stated false-positive rate of the criterion (see the module docstring)

    @property
    def text(self) -> str:
        return f'{self.where}: "{self.quote}"'

    @property
    def key(self) -> str:
        """'figure:hash' of where, quote and criterion: a changed criterion gets a new key, so rates measured for the
        old one (dpbench/claim_rates.json) no longer apply to it."""
        text = "\n".join((self.where, self.quote, self.criterion))
        return f"{self.figure}:{hashlib.sha256(text.encode()).hexdigest()[:8]}"


_CLAIMS: list[Claim] = []


def claim(figure: str, paper: str, where: str, quote: str, criterion: str, effect: bool = True,
          fpr: float = ALPHA):
    """Function decorator: register `check(load) -> Verdict` as the test of a paper's sentence."""

    def decorate(fn):
        _CLAIMS.append(Claim(figure, paper, where, quote, criterion, fn, effect, fpr))
        return fn

    return decorate


def claims(figure: str | None = None) -> list[Claim]:
    """Registered claims (of one figure), in registration order."""
    _import_all()
    return [c for c in _CLAIMS if figure is None or c.figure == figure]


# ---- diagnoses: why a claim does not come out --------------------------------------------------------------

CAUSES = ("data", "accounting", "set-up", "none found")  # the data differ; the paper's (or its code's) noise
# differs from a correct one; a partner's or dpbench's set-up; none found: a genuine non-reproduction


@dataclass(frozen=True)
class Diagnosis:
    """The most likely cause of a claim's disagreement, with the experiment that shows it."""
    figure: str
    where: str  # the claim's `where`
    cause: str  # one of CAUSES
    command: str  # the command that runs the experiment behind it
    explain: Callable  # explain(load) -> str: what that experiment measured
    quote: str = ""  # the start of the claim's quote, where two claims share (figure, where)

    def line(self, load) -> str:
        """'diagnosis (cause): what was measured [command]'; 'not run' when its results are missing."""
        try:
            text = self.explain(load)
        except FileNotFoundError:
            text = "its experiment has not been run"
        return f"diagnosis ({self.cause}): {text} [`{self.command}`]"


_DIAGNOSES: list[Diagnosis] = []


def diagnosis(figure: str, where: str, cause: str, command: str, quote: str = ""):
    """Function decorator: register `explain(load) -> str` as the diagnosis of the claim (figure, where) (and
    whose quote starts with `quote`: two claims of paper 001 share their `where`)."""
    if cause not in CAUSES:
        raise ValueError(f"cause must be one of {CAUSES}, got {cause!r}")

    def decorate(fn):
        _DIAGNOSES.append(Diagnosis(figure, where, cause, command, fn, quote))
        return fn

    return decorate


def diagnoses(c: Claim) -> list[Diagnosis]:
    """The diagnoses registered for claim `c`."""
    _import_all()
    return [d for d in _DIAGNOSES if (d.figure, d.where) == (c.figure, c.where) and c.quote.startswith(d.quote)]


def _import_all() -> None:
    """Claims live next to what they check (analyses, tuning experiments); import those packages."""
    import dpbench.analyses  # noqa: F401


# ---- cells and failed partners ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Cells:
    """Paired cell means of two sides (columns `ours`, `partner`) over the runs that released a model."""
    table: pd.DataFrame
    excluded: int = 0  # cells left out because a side returned a fallback (only within `fallbacks_excluded`)
    total: int = 0  # cells with results of both sides
    failed: tuple = (0, 0)  # fallback outputs of (ours, partner) over the cells with results of both
    runs: tuple = (0, 0)
    excluded_at: pd.Index | None = None  # the keys of the excluded cells

    def _failures(self, ours: str = "ours", partner: str = "partner") -> str:
        return (f"fallbacks: {partner} {self.failed[1]} of {self.runs[1]} runs, {ours} {self.failed[0]} of "
                f"{self.runs[0]}")

    def note(self, ours: str = "ours", partner: str = "partner") -> str:
        """'; fallbacks: ...' when a side returned its fallback in some run (counted with its error), and the
        excluded cells when fallbacks are excluded; '' otherwise (`ours`, `partner`: the sides' names)."""
        if not any(self.failed):
            return ""
        if not self.excluded:
            return f"; {self._failures(ours, partner)} (counted as outputs)"
        return f"; {self.excluded} of {self.total} cells excluded ({self._failures(ours, partner)})"

    def too_few(self, n: int) -> str:
        """The reason a test over n remaining cells is undecided."""
        return f"{n} comparable cells (need {MIN_CELLS})" + (f": {self._failures()}" if self.excluded else "")


def released(df: pd.DataFrame) -> pd.Series:
    """Runs that released a model (a trained one or the algorithm's own fallback): not a harness failure."""
    return ~df["status"].isin(NO_RELEASE) if "status" in df else pd.Series(True, index=df.index)


def failed(df: pd.DataFrame) -> pd.Series:
    """Runs whose output is the algorithm's fallback, among the runs that released a model: the all-zero model
    where the row says so (`zero_model`, read from the coefficients), else (rows without it: results before the
    column, models without coefficients) a status other than 'ok', which may also mean a fallback in some rounds
    only (DP-ROBGD's and DP-AMBSSGD's '..._in_some_rounds': a trained model released)."""
    if "status" not in df:
        return pd.Series(False, df.index)
    by_status = df["status"].fillna("ok") != "ok"
    zero = df["zero_model"] if "zero_model" in df else pd.Series(None, df.index, dtype=object)
    return released(df) & zero.map(lambda z: None if pd.isna(z) else bool(z)).fillna(by_status).astype(bool)


def paired_cells(df: pd.DataFrame, keys: list[str], side: str, ours: str, partner: str, metric: str) -> Cells:
    """Mean `metric` over the released runs per cell (`keys`) of the rows whose `side` is `ours` / `partner`,
    side by side.  A fallback's metric (e.g. the zero model's MSE) counts in its mean; within
    `fallbacks_excluded` a cell where either side returned a fallback is left out."""
    rows = df[df[side].isin([ours, partner])]
    rows = rows[released(rows) & rows[metric].notna()]
    rows = rows.assign(_failed=failed(rows))
    g = rows.groupby([*keys, side])
    wide = lambda s: s.unstack(side).reindex(columns=[ours, partner])  # noqa: E731
    mean, nfail, runs = wide(g[metric].mean()), wide(g["_failed"].sum()), wide(g.size())
    both = mean.dropna()
    bad = (nfail.reindex(both.index) > 0).any(axis=1) & _EXCLUDING[-1]
    table = both[~bad].set_axis(["ours", "partner"], axis=1)
    total = lambda t: tuple(int(v) for v in t.reindex(both.index).sum())  # noqa: E731 - (ours, partner)
    return Cells(table, int(bad.sum()), len(both), total(nfail), total(runs), both.index[bad.to_numpy()])


# ---- tests --------------------------------------------------------------------------------------------------

def sign_test(wins: int, n: int) -> float:
    """One-sided p-value of `wins` successes in `n` untied comparisons when each is a fair coin."""
    return float(stats.binomtest(int(wins), int(n), 0.5, alternative="greater").pvalue) if n else 1.0


def majority(better: pd.Series, worse: pd.Series, by=None, ratio: pd.Series | None = None,
             max_median_ratio: float | None = None) -> tuple[bool | None, str]:
    """Sign test over cells that `better` wins (ties dropped), per group of `by` (e.g. epsilon), all groups.

    True: p < ALPHA in every group (and, with `max_median_ratio`, the median `ratio` at most that in every
    group); False: in some group of at least MIN_CELLS cells the share of wins is at most 1/2 (or the median
    ratio above the bound); None otherwise (too few cells, a majority that is not significant)."""
    keys = better.index.get_level_values(by) if by is not None else np.zeros(len(better))
    parts, holds = [], True
    frame = pd.DataFrame({"win": better.to_numpy(), "loss": worse.to_numpy(), "key": keys,
                          "ratio": ratio.to_numpy() if ratio is not None else np.nan})
    if frame.empty:
        return None, "no comparable cells"
    for key, g in frame.groupby("key", sort=True):
        wins, n = int(g["win"].sum()), int((g["win"] | g["loss"]).sum())
        p = sign_test(wins, n)
        text = (f"{by} {key:g}: " if by is not None else "") + f"{wins}/{n} (p = {p:.3g})"
        ok = n >= MIN_CELLS and p < ALPHA
        if max_median_ratio is not None:
            med = float(g["ratio"].median())
            text += f", median ratio {med:.3g}"
            if n >= MIN_CELLS and med > max_median_ratio:
                holds = False
            ok = ok and med <= max_median_ratio
        if n >= MIN_CELLS and wins <= n / 2:
            holds = False
        elif holds is not False and not ok:
            holds = None
        if n < MIN_CELLS:
            text += f" (fewer than {MIN_CELLS} cells)"
        parts.append(text)
    return holds, "; ".join(parts)


def spearman_interval(x, y, level: float = 0.95, resamples: int = 2000, seed: int = 0) -> tuple[float, float, float]:
    """Spearman rho of (x, y) and its percentile bootstrap interval over the pairs (seeded: reproducible)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    rho = float(stats.spearmanr(x, y).statistic)
    idx = np.random.default_rng(seed).integers(0, len(x), size=(resamples, len(x)))
    rx, ry = stats.rankdata(x[idx], axis=1), stats.rankdata(y[idx], axis=1)
    rx, ry = rx - rx.mean(axis=1, keepdims=True), ry - ry.mean(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        boot = (rx * ry).sum(axis=1) / np.sqrt((rx**2).sum(axis=1) * (ry**2).sum(axis=1))
    boot = np.nan_to_num(boot, nan=0.0)  # a resample with one distinct value: no rank association
    lo, hi = np.quantile(boot, [(1 - level) / 2, (1 + level) / 2])
    return rho, float(lo), float(hi)


def within(value: float, paper: float, tolerance: float, relative: bool = False) -> bool:
    """The paper's number reproduced: |value - paper| <= tolerance (relative: a factor 1 + tolerance either way)."""
    if relative:
        return bool(paper / (1 + tolerance) <= value <= paper * (1 + tolerance))
    return bool(abs(value - paper) <= tolerance)
