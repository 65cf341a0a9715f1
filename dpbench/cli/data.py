"""`python -m dpbench data list|verify|import`: what real data is available, check a mirror, build one.

The data directory is `--data-dir`, else the one a sweep would use
(`catalog.resolve_data_dir`: $DPBENCH_DATA_DIR, else ../shared/data beside the
repository if it exists).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from dpbench.data import available, catalog, expand_dataset_specs, get_spec, mirror


def _root(args) -> Path | None:
    return Path(args.data_dir).expanduser() if args.data_dir else catalog.resolve_data_dir()


def _names(requested: list[str] | None, default: str) -> list[str]:
    return [s["name"] for s in expand_dataset_specs(requested or [default])]  # ValueError naming the valid ones


def _width(names) -> int:
    """The name column's width: the longest name, at least 16."""
    return max([16, *map(len, names)])


def _size(spec) -> tuple[str, str]:
    """n and d as the paper reports them ('-' when it does not)."""
    p = spec.paper
    n = p.get("n", p["train"] + p["test"] if "train" in p and "test" in p else None)
    return ("-" if n is None else str(n)), str(p.get("d", "-"))


def cmd_list(args) -> int:
    root = _root(args)
    print(f"data directory: {root if root else 'none (set --data-dir or DPBENCH_DATA_DIR)'}")
    w = _width(available())
    print(f"{'name':<{w}} {'task':<14} {'n':>7} {'d':>4}  {'availability':<13} {'title':<36} location / reason")
    counts: dict[str, int] = {}
    for name in available():
        spec = get_spec(name)
        status, where = catalog.availability(name, root)
        counts[status] = counts.get(status, 0) + 1
        shown = "MISSING" if status == "missing" else status
        n, d = _size(spec)
        print(f"{name:<{w}} {spec.task:<14} {n:>7} {d:>4}  {shown:<13} {spec.title or name:<36} {where}")
    print(
        ", ".join(f"{v} {k}" for k, v in counts.items()) + f" of {len(available())}; n and d as in the papers "
        "(d after one-hot); missing sets: `python -m dpbench data import --help`"
    )
    return 0


def cmd_verify(args) -> int:
    root = _root(args)
    if root is None or not root.is_dir():
        print(f"no data directory to verify ({root or 'set --data-dir or DPBENCH_DATA_DIR'})")
        return 2
    checks = mirror.verify(root)
    w = _width(c.name for c in checks)
    for c in checks:
        print(f"{c.status.upper():<8} {c.name:<{w}} {c.detail}")
    bad = [c.name for c in checks if c.status == "mismatch"]
    n_ok = sum(c.status == "ok" for c in checks)
    print(f"{n_ok} ok, {len(bad)} mismatched, {len(checks) - n_ok - len(bad)} missing in {root}")
    return 1 if bad else 0


def cmd_import(args) -> int:
    out = Path(args.out).expanduser()
    if args.from_openml:
        names = _names(args.datasets, "openml_all")
        results = [(n, *mirror.import_openml(n, out)) for n in names]
    else:
        raw = Path(args.from_raw).expanduser()
        if not raw.is_dir():
            print(f"--from-raw: {raw} is not a directory")
            return 2
        names = _names(args.datasets, "classification_all")
        results = [(n, *mirror.import_raw(n, raw, out)) for n in names]
    for name, ok, msg in results:
        print(f"{'wrote' if ok else 'skipped':<8} {name:<16} {msg}")
    n_ok = sum(ok for _, ok, _ in results)
    print(f"{n_ok} of {len(results)} imported into {out}" + (f"; use it with DPBENCH_DATA_DIR={out}" if n_ok else ""))
    # named datasets must all be imported; by default, whatever the source has is enough
    return 0 if (n_ok == len(results) if args.datasets else n_ok > 0) else 1


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m dpbench data", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    data_dir_help = "mirror directory (default: $DPBENCH_DATA_DIR, else ../shared/data beside the repository)"
    p = sub.add_parser("list", help="every known dataset, where it is (mirror / openml cache / missing), n, d")
    p.add_argument("--data-dir", help=data_dir_help)
    p.set_defaults(func=cmd_list)
    p = sub.add_parser("verify", help="check mirror files against MANIFEST.csv and the papers' tables")
    p.add_argument("--data-dir", help=data_dir_help)
    p.set_defaults(func=cmd_verify)
    p = sub.add_parser(
        "import",
        help="write a mirror (parquet + MANIFEST.csv) from the openml cache or raw files",
        description="Build a mirror for an offline machine. --from-openml reads openml's cache "
        "(downloading what is not cached unless DPBENCH_OFFLINE=1); --from-raw DIR reads LIBSVM "
        "cod-rna + cod-rna.t, a9a + a9a.t and the Kaggle creditcard.csv, "
        "WA_Fn-UseC_-Telco-Customer-Churn.csv, cardio_train.csv found in DIR.",
    )
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--from-openml", action="store_true", help="regression tasks from openml")
    src.add_argument("--from-raw", metavar="DIR", help="classification sets from raw LIBSVM / Kaggle files in DIR")
    p.add_argument("--datasets", nargs="+", metavar="NAME", help="names or groups (default: all of the source's)")
    p.add_argument("--out", required=True, help="mirror directory to write (created; MANIFEST.csv rows are merged)")
    p.set_defaults(func=cmd_import)
    return parser


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)
