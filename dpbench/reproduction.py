"""The reproduction report: every paper figure dpbench has results for, its claims and their verdicts.

`python -m dpbench report` (no experiment) writes `<results_dir>/report.html` and `report.md`.  A section
per results directory that holds a sweep (parts/), an analysis (<name>.parquet) or figures (paper001_figures:
drawn from the paper001 sweep), and per figure that has claims but no results yet ("not run"): the paper's claims
(sentence, location, the criterion dpbench tests) beside what dpbench measured (`dpbench.claims`), the figures
(each a link to its full-size file), runs, seeds, tuning trials, wall time, failures by status and provenance.
A claim is marked reproduced only when its check says the numbers support it.  Smoke results (`<name>_smoke/`, of
sweeps and analyses alike) are listed last under "smoke, not judged": no claim is checked on them; nor on a sweep
that does not hold every run of its shipped experiment's grid (quick tuning, a sub-grid, fewer seeds: "not at the
paper's settings, not judged", with what differs), and a claim reads only the runs of that grid (`paper_rows`:
a user's extra grid values are drawn but do not decide).  Runs count with what they released (`dpbench.claims`); a
verdict that excluding the fallbacks would change carries a sensitivity line.  A sweep with a leaderboard board
(`<name>/board/`, `dpbench.leaderboard`) shows it: sentences made from its files, its ranks per epsilon, its
figures and the cost of honest tuning, and whether it holds every cell of its grid (a partial board says what
it lacks, first and in the contents).
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from urllib.parse import quote

import pandas as pd

from dpbench import claims, results
from dpbench import leaderboard as lb

VERDICTS = {True: "reproduced", False: "not reproduced", None: "undecided"}
SMOKE = "_smoke"  # suffix of the results directory of a smoke sweep or analysis: never judged
SWEEP_LOG = "sweeps.jsonl"  # one line per finished or interrupted sweep command: its wall time and runs (cmd_sweep)


@lru_cache(maxsize=1)
def experiment_run_ids() -> dict[str, frozenset]:
    """The run ids of every shipped experiment's grid, by the sweep (results directory) it writes to; several
    experiments may write to one (paper001 and paper001_leaves)."""
    from dpbench import config
    from dpbench.runner.grid import expand

    ids: dict[str, set] = {}
    for name in config.experiment_names():
        exp = config.experiment(config.validate(config.compose([f"experiment={name}"])))
        ids.setdefault(exp["name"], set()).update(r.run_id for r in expand(exp))
    return {k: frozenset(v) for k, v in ids.items()}


def load_results(results_dir: Path, name: str) -> pd.DataFrame:
    """The results of the sweep or analysis `name`: a sweep's finished runs of its latest grid (config.json)
    and of the grids of the shipped experiments that write to it (so runs made in parts, e.g. a few seeds at
    a time, count together, and runs of an older grid do not); or an analysis' table.  FileNotFoundError
    when there are none."""
    out = Path(results_dir) / name
    table = out / f"{name}.parquet"
    if not table.exists() and name.endswith(SMOKE):  # an analysis' smoke run keeps its table's name
        table = out / f"{name.removesuffix(SMOKE)}.parquet"
    if (out / results.PARTS).is_dir():
        df = results.load(out)
        grid = out / "config.json"
        if grid.exists():
            from dpbench.runner.grid import expand

            try:
                ids = {r.run_id for r in expand(json.loads(grid.read_text()))}
            except (ValueError, TypeError, KeyError):  # a grid this version cannot expand: all its rows
                return df
            df = df[df["run_id"].isin(ids | experiment_run_ids().get(name, frozenset()))]
        return df
    if table.exists():
        return pd.read_parquet(table)
    raise FileNotFoundError(f"no results for {name} under {results_dir}")


def log_sweep(sweep_dir: Path, seconds: float, ran: int | None, killed: bool = False) -> None:
    """Append a sweep command's wall time to its directory's log (the report sums them); `ran`: its runs, None
    for a command interrupted (its time is counted).  A killed sweep's line is written by the next sweep in its
    directory (`killed`: from the heartbeat of its lock, runner.lock; from its lock to its last beat, so up to
    runner.lock.HEARTBEAT seconds and its start-up short)."""
    line = {"seconds": round(seconds, 3), "ran": ran, **({"killed": True} if killed else {})}
    with open(Path(sweep_dir) / SWEEP_LOG, "a") as fh:
        fh.write(json.dumps(line) + "\n")


@dataclass
class Section:
    name: str
    claims: list = field(default_factory=list)  # (Claim, Verdict | None)
    facts: dict = field(default_factory=dict)
    failures: dict = field(default_factory=dict)
    figures: list = field(default_factory=list)  # paths relative to results_dir
    error: str | None = None
    not_judged: str | None = None  # why its claims are not judged (results not at the paper's settings)
    diagnoses: dict = field(default_factory=dict)  # Claim -> its diagnosis lines (claims not reproduced)
    board: object = None  # the leaderboard's board written in its directory (dpbench.leaderboard.Board)

    @property
    def smoke(self) -> bool:
        return self.name.endswith(SMOKE)


def _grids_run(out: Path, judged: pd.DataFrame) -> str | None:
    """Every grid ever run in a sweep directory, with its rows (the report judges the latest and the shipped
    experiments' grids; the others are listed so that no run is hidden)."""
    if not (out / results.PARTS).is_dir():
        return None
    every = results.load(out, expand_params=False)
    if "config_hash" not in every or every["config_hash"].nunique() <= 1 and len(every) == len(judged):
        return None
    counts = every["config_hash"].fillna("?").value_counts()
    return (f"{len(counts)} grid(s), {len(every)} rows in all ({len(judged)} judged: the latest grid's and the "
            "shipped experiments'): " + ", ".join(f"{h[:12]} {n} rows" for h, n in counts.items()))


def _facts(df: pd.DataFrame, out: Path) -> tuple[dict, dict]:
    facts: dict = {"rows": len(df)}
    grids = _grids_run(out, df)
    if grids:
        facts["grids run here"] = grids
    if "seed" in df:
        facts["seeds"] = int(df["seed"].nunique())
    if "dataset" in df:
        facts["datasets"] = int(df["dataset"].nunique())
    if "algorithm" in df:
        facts["algorithms"] = ", ".join(sorted(df["algorithm"].astype(str).unique()))
    if "epsilon" in df:
        facts["epsilons"] = ", ".join(f"{e:g}" for e in sorted(df["epsilon"].dropna().unique()))
    if "tuning_mode" in df:
        facts["tuning modes"] = ", ".join(sorted(df["tuning_mode"].dropna().unique()))
    if "tuning_trials" in df and df["tuning_trials"].notna().any():
        facts["trials per study"] = ", ".join(f"{t:g}" for t in sorted(df["tuning_trials"].dropna().unique()))
    if "fit_seconds" in df:
        facts["fit time (sum)"] = f"{df['fit_seconds'].sum():.0f} s"
    log = out / SWEEP_LOG
    if log.exists():
        lines = [json.loads(x) for x in log.read_text().splitlines() if x.strip()]
        wall = sum(x["seconds"] for x in lines)
        facts["sweep wall time (sum of commands)"] = f"{wall:.0f} s in {len(lines)} command(s)"
    for col, label in (("git_commit", "git commits"), ("dpbench_version", "dpbench"), ("config_hash", "grid hashes"),
                       ("numpy_version", "numpy"), ("sklearn_version", "scikit-learn")):
        if col in df and df[col].notna().any():
            facts[label] = ", ".join(str(v)[:12] for v in sorted(df[col].dropna().astype(str).unique()))
    if "git_dirty" in df and df["git_dirty"].eq(True).any():  # bool, or object / float with missing values
        dirty = df[df["git_dirty"].eq(True)]
        facts["uncommitted code"] = (f"{len(dirty)} of {len(df)} rows were made by code that differs from its "
                                     f"commit (diff {', '.join(sorted(dirty['git_diff_hash'].astype(str).unique()))}): "
                                     "the commit alone cannot reproduce them")
    failures = df["status"].value_counts().to_dict() if "status" in df else {}
    return facts, failures


def _natural(text: str) -> list:
    """Sort key that puts fig2 before fig10."""
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", text)]


def sections(results_dir: Path) -> list[Section]:
    results_dir = Path(results_dir)
    names = sorted({p.parent.name for p in results_dir.glob(f"*/{results.PARTS}")}
                   | {p.parent.name for p in results_dir.glob("*/*.parquet")
                      if p.parent.name in (p.stem, p.stem + SMOKE)}
                   | {p.parent.name for p in results_dir.glob("*/*.png")}  # figures drawn from other results
                   | {c.figure for c in claims.claims()})
    out = []
    for name in sorted(names, key=lambda n: n.endswith(SMOKE)):  # smoke sections last
        sec = Section(name)
        try:
            df = load_results(results_dir, name)
            sec.facts, sec.failures = _facts(df, results_dir / name)
        except FileNotFoundError:
            sec.error = "not run"
        except Exception as exc:  # noqa: BLE001 - one unreadable directory must not stop the report
            sec.error = f"results unreadable: {type(exc).__name__}: {exc}"
        sec.figures = sorted((str(p.relative_to(results_dir)) for p in (results_dir / name).glob("*.png")),
                             key=_natural)
        if sec.error == "not run" and sec.figures:  # e.g. paper001_figures: the figures of the paper001 sweep
            sec.error = None
        try:
            sec.board = lb.read_board(results_dir / name)
        except Exception as exc:  # noqa: BLE001 - as an unreadable results directory
            sec.error = f"board unreadable: {type(exc).__name__}: {exc}"
        if sec.board is not None:  # its figures replace the sweep's (a CD diagram of the sweep's rows alone)
            sec.figures = []
        sec.not_judged = None if sec.smoke or sec.error else paper_settings(results_dir, name)
        for c in [] if sec.smoke or sec.not_judged else claims.claims(name):
            verdict = judge(c, results_dir)
            sec.claims.append((c, verdict))
            if verdict.holds is not True:
                sec.diagnoses[c] = [d.line(lambda n: paper_rows(results_dir, n)) for d in claims.diagnoses(c)]
        out.append(sec)
    return out


def paper_rows(results_dir: Path, name: str) -> pd.DataFrame:
    """`load_results` restricted to the runs of the shipped experiment's grid when `name` has one: what a claim
    judges.  Runs of other grids (a user's extra epsilon, another tuning) are shown, but do not decide."""
    df = load_results(results_dir, name)
    shipped = experiment_run_ids().get(name)
    return df[df["run_id"].isin(shipped)] if shipped and "run_id" in df else df


def _check(c, results_dir: Path) -> claims.Verdict:
    try:
        return c.check(lambda n: paper_rows(results_dir, n))
    except FileNotFoundError as exc:
        return claims.Verdict(None, f"not run ({exc})")
    except Exception as exc:  # noqa: BLE001 - a broken check is reported, not fatal
        return claims.Verdict(None, f"check failed: {type(exc).__name__}: {exc}")


def judge(c, results_dir: Path) -> claims.Verdict:
    """The claim's verdict, every released run counted; where excluding the fallbacks (the rule before: a cell
    with a fallback on either side not compared) would change it, a sensitivity line says so."""
    verdict = _check(c, results_dir)
    with claims.fallbacks_excluded():
        other = _check(c, results_dir)
    if other.holds == verdict.holds:
        return verdict
    return claims.Verdict(verdict.holds, f"{verdict.measured} | sensitivity: with fallbacks excluded it would be "
                                         f"{VERDICTS[other.holds]} ({other.measured})")


def paper_settings(results_dir: Path, name: str) -> str | None:
    """None when the sweep `name` holds every run of its shipped experiment's grid (the paper's settings); else
    why its claims are not judged: how many of the paper's runs are there and what the latest grid changed
    (quick tuning, a sub-grid, fewer seeds).  Analyses (no grid) are judged as they are."""
    shipped = experiment_run_ids().get(name)
    out = Path(results_dir) / name
    if not shipped or not (out / results.PARTS).is_dir():
        return None
    done = shipped & set(results.load(out, expand_params=False)["run_id"])
    if len(done) == len(shipped):
        return None
    return (f"not at the paper's settings, not judged: {len(done)} of the {len(shipped)} runs of the paper's grid "
            f"(experiment {name}) are in the results{_grid_difference(out, name)}")


def _grid_difference(out: Path, name: str) -> str:
    """'; the latest grid differs in: key (paper -> run), ...' from the sweep's config.json and the experiment."""
    from dpbench import config

    grid = out / "config.json"
    if not grid.exists() or name not in config.experiment_names():
        return ""
    ran = json.loads(grid.read_text())
    paper = config.experiment(config.validate(config.compose([f"experiment={name}"])))
    keys = ("tuning", "seeds", "epsilons", "deltas", "datasets", "algorithms", "dataset_grid", "split")
    diffs = []
    for key in keys:
        a, b = paper.get(key), ran.get(key)
        if isinstance(a, dict) and isinstance(b, dict):
            diffs += [f"{key}.{k} ({a.get(k)!r} -> {b.get(k)!r})" for k in sorted(set(a) | set(b))
                      if a.get(k) != b.get(k)]
        elif a != b:
            short = (lambda v: f"{len(v)} values" if isinstance(v, list) and len(v) > 4 else repr(v))  # noqa: E731
            diffs.append(f"{key} ({short(a)} -> {short(b)})")
    return "; the latest grid differs in: " + ", ".join(diffs) if diffs else ""


def _verdict_counts(secs: list[Section]) -> str:
    if secs and all(s.smoke for s in secs):
        return "smoke, not judged"
    if secs and all(s.smoke or s.not_judged for s in secs):
        return "not at the paper's settings, not judged"
    counts = pd.Series([VERDICTS[v.holds] for s in secs for _, v in s.claims]).value_counts()
    return ", ".join(f"{n} {k}" for k, n in counts.items()) or "no claims checked"


RATES_NOTE = ("Beside each criterion, how often it comes out reproduced on seeded synthetic results with no effect "
              "(its false positives; for a claim of no effect, results with a strong one) and with an effect of the "
              "size the paper reports (its power), from dpbench/claim_rates.json (`python -m dpbench readme "
              "--claim-rates`); 'low power' below 80%.")


def rates_line(c, rates: dict) -> str:
    """'false positives: k of R (stated <= fpr); power at the paper's effect: k of R' from the committed counts
    (`dpbench.claim_simulation`), or 'rates not computed' when they lack the claim (its criterion changed)."""
    from dpbench.claim_simulation import low_power

    r = rates.get(c.key)
    if r is None:
        return "rates not computed"
    return (f"false positives: {r['false_positives']} of {r['replicates']} (stated <= {c.fpr:g}); power at the "
            f"paper's effect: {r['power']} of {r['replicates']}" + (" (low power)" if low_power(r) else ""))


def _rates() -> dict:
    from dpbench import claim_simulation

    return claim_simulation.load()


def _toc(s: Section) -> str:
    """A section's line in the contents: its verdicts (or why none), and whether its board is complete."""
    board = "" if s.board is None else "; partial board" if s.board.gaps else "; complete board"
    return (s.error or _verdict_counts([s])) + board


BOARD_NOTE = ("Average rank over the tasks every entry ran on (1 = lowest error; the mean over seeds per task); "
              "entries sharing a letter are not told apart by Nemenyi's test at alpha 0.05 (the bars of the "
              "critical-difference diagram); the last row: the tasks ranked, the Friedman (Iman-Davenport) p-value "
              "and the critical difference. Privately selected and fixed are private end to end; non-privately "
              "tuned is paper 000's protocol, its selection not charged to the budget.")
COST_NOTE = ("Each private mode's error over the same entry's non-privately tuned error on a task: the median over "
             "tasks, the geometric mean, and on how many tasks the private mode was worse (1.0x: honest tuning costs "
             "nothing).")


def board_blocks(s: Section) -> list[tuple[str, object]]:
    """The leaderboard part of a section holding a board, for both renderings: (kind, content) with kind 'h3',
    'h4', 'strong', 'p', 'table' (a DataFrame of text) or 'figure' (a path relative to results_dir)."""
    b = s.board
    if b is None:
        return []
    said = lb.findings(b)
    out = [("h3", f"Leaderboard, ranked by {b.metric}"), ("strong", said[0]), ("p", " ".join(said[1:]))]
    for eps in b.epsilons:
        out += [("h4", f"Average ranks at eps {eps:g}"), ("table", lb.rank_table(b, eps))]
    out.append(("p", BOARD_NOTE))
    out += [("figure", f"{s.name}/{lb.BOARD}/{f}") for f in b.figures]
    cost = lb.cost_table(b)
    out += [("h4", "The cost of honest tuning"), ("p", COST_NOTE) if len(cost) else
            ("p", "No entry has both a private and a non-privately tuned cell: the cost is not measured."),
            ("table", cost)]
    return out


def markdown_table(df: pd.DataFrame) -> str:
    """A DataFrame of text as a markdown table (a '|' in a cell becomes '/')."""
    cell = lambda v: " ".join(str(v).split()).replace("|", "/")
    return "\n".join(["| " + " | ".join(cell(c) for c in df.columns) + " |", "|" + " --- |" * len(df.columns)]
                     + ["| " + " | ".join(cell(v) for v in row) + " |" for row in df.itertuples(index=False)])


def _board_markdown(s: Section) -> list[str]:
    lines = []
    for kind, content in board_blocks(s):
        if kind == "figure":
            lines += [f"[![{s.name}]({quote(content)})]({quote(content)})", ""]
        elif kind == "table":
            lines += [markdown_table(content), ""] if len(content) else []
        else:
            lines += [{"h3": "### ", "h4": "#### ", "strong": "**", "p": ""}[kind] + content
                      + ("**" if kind == "strong" else ""), ""]
    return lines


def _board_html(s: Section) -> list[str]:
    e, out = html.escape, []
    for kind, content in board_blocks(s):
        if kind == "figure":
            out.append(_figure_html(content, s.name))
        elif kind == "table":
            if len(content):
                out.append("<table><tr>" + "".join(f"<th>{e(str(c))}</th>" for c in content.columns) + "</tr>"
                           + "".join("<tr>" + "".join(f"<td>{e(str(v))}</td>" for v in row) + "</tr>"
                                     for row in content.itertuples(index=False)) + "</table>")
        elif kind == "strong":
            out.append(f"<p><strong>{e(content)}</strong></p>")
        else:
            out.append(f"<{kind}>{e(content)}</{kind}>")
    return out


def _figure_html(f: str, alt: str) -> str:
    """A figure (path relative to results_dir) that links to its full-size file."""
    e = html.escape
    return (f"<figure><a href='{e(quote(f))}'><img src='{e(quote(f))}' alt='{e(alt)}'></a>"
            f"<figcaption><a href='{e(quote(f))}'>{e(f)}</a> (full size)</figcaption></figure>")


def markdown(secs: list[Section]) -> str:
    rates = _rates()
    lines = ["# dpbench reproduction report", "", f"Claims: {_verdict_counts(secs)}. {RATES_NOTE}", ""]
    lines += [f"- [{s.name}](#{s.name}): {_toc(s)}" for s in secs] + [""]
    for s in secs:
        if s.smoke and not any(t.smoke for t in secs[:secs.index(s)]):
            lines += ["# Smoke runs (smoke, not judged)", ""]
        lines += [f"## {s.name}" + (" (smoke, not judged)" if s.smoke else ""), ""]
        if s.error or s.not_judged:
            lines += [f"*{s.error or s.not_judged}*", ""]
        for c, v in s.claims:
            lines += [f"- **{VERDICTS[v.holds]}** (paper {c.paper}) {c.text}  ", f"  criterion: {c.criterion}  ",
                      f"  rates: {rates_line(c, rates)}  ",
                      f"  measured: {v.measured}" + "".join(f"  \n  {d}" for d in s.diagnoses.get(c, []))]
        if s.claims:
            lines.append("")
        for f in s.figures:
            lines += [f"[![{s.name}]({quote(f)})]({quote(f)})", ""]  # the image links to its full-size file
        lines += _board_markdown(s)
        if s.facts:
            lines += [f"- {k}: {v}" for k, v in s.facts.items()]
        if s.failures:
            lines.append("- runs by status: " + ", ".join(f"{k} {n}" for k, n in s.failures.items()))
        lines.append("")
    return "\n".join(lines)


CSS = """body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
h2{border-bottom:1px solid #ccc;padding-top:1em}table{border-collapse:collapse;margin:.5em 0}
td,th{border:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top;font-size:14px}
.reproduced{background:#e3f4e3}.not-reproduced{background:#fbe3e3}.undecided{background:#f4f4e0}
.facts td:first-child{color:#555;white-space:nowrap}
figure{width:calc(100vw - 4em);position:relative;left:50%;transform:translateX(-50%);margin:1em 0;text-align:center}
figure img{max-width:100%;height:auto;border:1px solid #eee}figcaption{font-size:13px;color:#555}"""
# figures may be wider than the text: up to the window's width (a wide figure squeezed to the text's 1100 px had
# unreadable labels), each a link to the full-size file


def to_html(secs: list[Section]) -> str:
    e = html.escape
    rates = _rates()
    body = [f"<h1>dpbench reproduction report</h1><p>Claims: {e(_verdict_counts(secs))}. A claim is "
            "<i>reproduced</i> only when the measured numbers support it; <i>undecided</i> when the results "
            f"cannot decide (not run, too few datasets). {e(RATES_NOTE)}</p>"]
    toc = "".join(f"<li><a href='#{e(s.name)}'>{e(s.name)}</a>: {e(_toc(s))}</li>"
                  for s in secs)
    body.append(f"<ul>{toc}</ul>")
    for s in secs:
        if s.smoke and not any(t.smoke for t in secs[:secs.index(s)]):
            body.append("<h1>Smoke runs (smoke, not judged)</h1>")
        body.append(f"<h2 id='{e(s.name)}'>{e(s.name)}{' (smoke, not judged)' if s.smoke else ''}</h2>")
        if s.error or s.not_judged:
            body.append(f"<p><i>{e(s.error or s.not_judged)}</i></p>")
        if s.claims:
            rows = "".join(f"<tr class='{VERDICTS[v.holds].replace(' ', '-')}'><td>{e(VERDICTS[v.holds])}</td>"
                           f"<td>paper {e(c.paper)}, {e(c.text)}</td>"
                           f"<td>{e(c.criterion)}<br><i>{e(rates_line(c, rates))}</i></td>"
                           f"<td>{e(v.measured)}{''.join(f'<br><b>{e(d)}</b>' for d in s.diagnoses.get(c, []))}"
                           "</td></tr>" for c, v in s.claims)
            body.append("<table><tr><th>verdict</th><th>claim</th><th>criterion</th><th>measured</th></tr>"
                        f"{rows}</table>")
        body += [_figure_html(f, s.name) for f in s.figures] + _board_html(s)
        facts = dict(s.facts)
        if s.failures:
            facts["runs by status"] = ", ".join(f"{k} {n}" for k, n in s.failures.items())
        if facts:
            body.append("<table class='facts'>" + "".join(f"<tr><td>{e(str(k))}</td><td>{e(str(v))}</td></tr>"
                                                          for k, v in facts.items()) + "</table>")
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>dpbench reproduction report</title>"
            f"<style>{CSS}</style></head><body>{''.join(body)}</body></html>")


def write(results_dir: str | Path = "results") -> tuple[Path, Path, list[Section]]:
    results_dir = Path(results_dir)
    results_dir.mkdir(parents=True, exist_ok=True)
    secs = sections(results_dir)
    paths = results_dir / "report.html", results_dir / "report.md"
    for path, text in zip(paths, (to_html(secs), markdown(secs)), strict=True):
        tmp = path.with_suffix(path.suffix + ".tmp")
        tmp.write_text(text)
        tmp.replace(path)
    return *paths, secs


def fraction(k: int, n: int) -> str:
    return f"{k}/{n}" + (f" ({100 * k / n:.0f}%)" if n else "")


__all__ = ["Section", "fraction", "load_results", "log_sweep", "markdown", "rates_line", "sections", "to_html",
           "write"]
