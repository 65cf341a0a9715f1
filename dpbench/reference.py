"""The reference results and the documentation's tables made from them.

`results/reference/` holds the papers' experiments run at their full settings (default tuning, every mirror
task, 1000 trees), committed: the tidy rows (parquet parts), figures (PNG) and the reproduction report.  The
measured tables of the README and of the pages in docs/ are blocks between `<!-- reference:NAME -->` and
`<!-- /reference:NAME -->` that `python -m dpbench readme` rewrites from those results (`--check`: exit 1 if a
block differs, which a test runs), so prose and numbers cannot drift apart.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pandas as pd

from dpbench import reproduction

DIR = Path("results") / "reference"
_BLOCK = re.compile(r"(<!-- reference:(?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- /reference:(?P=name) -->)", re.S)


def documents(root: str | Path = ".") -> list[Path]:
    """The files that hold reference blocks, which `python -m dpbench readme` rewrites by default: README.md and
    the pages of docs/."""
    root = Path(root)
    return [p for p in [root / "README.md", *sorted((root / "docs").glob("*.md"))]
            if p.is_file() and _BLOCK.search(p.read_text())]


def _cell(text) -> str:
    return " ".join(str(text).split()).replace("|", "/")


def verdicts(secs: list) -> str:
    """Every claim checked on the reference results: where, verdict, what was measured."""
    rows = ["| results | claim (paper, where) | verdict | measured |", "| --- | --- | --- | --- |"]
    rows += [f"| {s.name} | {c.paper}, {_cell(c.where)} | **{reproduction.VERDICTS[v.holds]}** | {_cell(v.measured)} |"
             for s in secs if not s.smoke for c, v in s.claims]
    return "\n".join(rows)


def runs(secs: list, results_dir: Path) -> str:
    """Each results directory: rows, their statuses, study size and the wall time of the commands that made it."""
    rows = ["| results | rows | datasets | seeds | runs by status | trials per study | wall time |",
            "| --- | --- | --- | --- | --- | --- | --- |"]
    for s in secs:
        if s.smoke or s.error:
            continue
        f = s.facts
        wall = "-"
        log = results_dir / s.name / reproduction.SWEEP_LOG
        if log.exists():
            seconds = sum(json.loads(x)["seconds"] for x in log.read_text().splitlines() if x.strip())
            wall = f"{seconds / 60:.0f} min" if seconds >= 60 else f"{seconds:.0f} s"
        status = ", ".join(f"{k} {n}" for k, n in s.failures.items()) or "-"
        rows.append(f"| {s.name} | {f.get('rows', '-')} | {f.get('datasets', '-')} | {f.get('seeds', '-')} | "
                    f"{status} | {f.get('trials per study', '-')} | {wall} |")
    return "\n".join(rows)


def _mean_std(values: pd.Series) -> str:
    return f"{values.mean():.3f} +/- {values.std(ddof=1) if len(values) > 1 else 0:.3f}"


def paper001_f1(results_dir: Path, epsilons=(0.1, 1.0), rounds=(100, 1000)) -> str:
    """Paper 001: test F1 (mean +/- std over seeds; BoostedAdaSSP at its best loss) and AUROC per set."""
    from dpbench.analyses.paper001 import DPEBM_LEAVES, main_rows

    try:
        df = reproduction.load_results(results_dir, "paper001")
    except FileNotFoundError:
        return "*paper001: not run*"
    df = main_rows(df[df["status"] == "ok"])
    head = [f"| dataset | eps | rounds | BoostedAdaSSP F1 | DP-EBM ({DPEBM_LEAVES} leaves) F1 | DP-XGBoost F1 | AUROC "
            "Boosted / DP-EBM / DP-XGBoost |", "| --- | --- | --- | --- | --- | --- | --- |"]
    rows = []
    for r in rounds:
        for (dataset, eps), cell in df[df["param_n_rounds"] == r].groupby(["dataset", "epsilon"]):
            if not any(abs(eps - e) < 1e-9 for e in epsilons):
                continue
            f1, auc = [], []
            boosted = cell[cell["algorithm"] == "boosted_adassp_clf"]
            if len(boosted):
                best = boosted.groupby("param_loss")["test_f1"].mean().idxmax()
                part = boosted[boosted["param_loss"] == best]
                f1.append(f"{_mean_std(part['test_f1'])} ({best})")
                auc.append(f"{part['test_auroc'].mean():.3f}")
            else:
                f1.append("-"), auc.append("-")
            for name in ("dp_ebm_clf", "dp_xgboost"):
                part = cell[cell["algorithm"] == name]
                f1.append(_mean_std(part["test_f1"]) if len(part) else "-")
                auc.append(f"{part['test_auroc'].mean():.3f}" if len(part) else "-")
            rows.append(f"| {dataset} | {eps:g} | {r} | {' | '.join(f1)} | {' / '.join(auc)} |")
    return "\n".join(head + rows) if rows else "*paper001: no finished runs at these settings*"


LEADERBOARD_NOTE = ("rank: the average rank over tasks with private selection (1 = best), in parentheses "
                    "non-privately tuned (paper 000's protocol; paper 001 fixed its settings but DP-XGBoost's "
                    "subsample); cost: the error with private selection over the non-privately tuned one, the "
                    "median over tasks.")


def leaderboard(results_dir: Path) -> str:
    """The private leaderboard (dpbench.leaderboard), per task: what its board says, whether it is complete, and
    its ranks and costs; or that it is not run yet at the reference scale."""
    from dpbench import leaderboard as lb

    out = []
    for task, name in lb.EXPERIMENTS.items():
        board = lb.read_board(results_dir / name)
        if board is None:
            out += [f"*{task.capitalize()}: not run yet at the reference scale (no board in "
                    f"{(results_dir / name / lb.BOARD).as_posix()}/); `python -m dpbench leaderboard` runs it.*", ""]
            continue
        out += [f"**{task.capitalize()}, ranked by {board.metric}.** " + " ".join(lb.findings(board)), "",
                reproduction.markdown_table(lb.summary_table(board)), "", LEADERBOARD_NOTE, ""]
    return "\n".join(out)


def tables(results_dir: str | Path = DIR) -> dict[str, str]:
    """Every generated block, by name."""
    results_dir = Path(results_dir)
    secs = reproduction.sections(results_dir)
    from dpbench.cli.algorithms import attributes_table

    return {"verdicts": verdicts(secs), "runs": runs(secs, results_dir), "paper001-f1": paper001_f1(results_dir),
            "fitted-attributes": attributes_table(), "leaderboard": leaderboard(results_dir)}


def publish(source: str | Path, dest: str | Path = DIR) -> list[str]:
    """Copy the finished results under `source` (a results_dir the reference sweeps and analyses ran in) into
    `dest`, small: each sweep's parts as one parquet part (every attempt of the runs of its shipped grid; runs
    of an older identity, made before a change of the code's parameters, are left behind), its grid configs
    and wall-time log, every PNG and analysis table, and a leaderboard's board (its CSV tables and figures); not
    the tuning journals (_studies/) or PDFs, and not a sweep that is running (its lock is held).  Returns the
    names copied."""
    from dpbench import leaderboard as lb
    from dpbench import results
    from dpbench.reproduction import experiment_run_ids

    source, dest, names = Path(source), Path(dest), []
    for src in sorted(p for p in source.iterdir() if p.is_dir() and not p.name.startswith("_")):
        if (src / "sweep.lock").exists():
            continue
        out = dest / src.name
        if out.exists():
            shutil.rmtree(out)
        out.mkdir(parents=True)
        if (src / results.PARTS).is_dir():
            rows = results.load(src, expand_params=False, all_attempts=True)
            shipped = experiment_run_ids().get(src.name)
            rows = rows[rows["run_id"].isin(shipped)] if shipped else rows
            results.write_part(rows.to_dict("records"), out, "reference")
        for f in src.iterdir():
            if f.is_file() and (f.suffix in (".png", ".json", ".jsonl") or f.name == f"{src.name}.parquet"):
                shutil.copy2(f, out / f.name)
        if (src / lb.BOARD).is_dir():  # the leaderboard's board: its tables and figures
            shutil.copytree(src / lb.BOARD, out / lb.BOARD, ignore=lambda d, names: [
                n for n in names if not n.endswith((".csv", ".png"))])
        names.append(src.name)
    return names


def render(text: str, blocks: dict[str, str]) -> str:
    """`text` with every reference block's body replaced by blocks[name]; a block with an unknown name is an error."""

    def body(m: re.Match) -> str:
        if m["name"] not in blocks:
            raise ValueError(f"block reference:{m['name']} is not one of {', '.join(sorted(blocks))}")
        return m.group(1) + blocks[m["name"]].rstrip("\n") + "\n" + m.group(4)

    return _BLOCK.sub(body, text)
