"""`python -m dpbench algorithms [NAME]`: the registered algorithms, what a user needs to run each."""

from __future__ import annotations

import argparse


def _constraint_text(constraints) -> str:
    from sklearn.utils._param_validation import make_constraint

    if constraints == "no_validation":
        return "any"
    return " or ".join(str(make_constraint(c)) for c in constraints)


def _range_text(space: dict) -> str:
    if space["type"] == "categorical":
        return "one of " + ", ".join(map(str, space["choices"]))
    return f"{space['type']} in [{space['low']:g}, {space['high']:g}]" + (", log scale" if space.get("log") else "")


def main(argv: list[str]) -> int:
    """Every registered algorithm (or one, NAME) with what a user needs to run it."""
    from dpbench import algorithms

    parser = argparse.ArgumentParser(prog="python -m dpbench algorithms",
                                     description="The registered algorithms; with NAME, one in full.")
    parser.add_argument("name", nargs="?", help="an algorithm name (default: a line each)")
    parser.add_argument("--imports", type=lambda t: [m for m in t.split(",") if m],
                        help="comma-separated modules registering algorithms (default: the `imports:` of the "
                             "experiments in ./conf)")
    args = parser.parse_args(argv)
    from dpbench.config import load_user_imports

    load_user_imports(args.imports)
    if args.name is None:
        for name in algorithms.available():
            spec = algorithms.get_spec(name)
            print(f"{name:24s} {spec.task:15s} {_privacy_text(spec):14s} {spec.description}")
        print("\n`python -m dpbench algorithms NAME` for parameters and tuning ranges")
        return 0
    spec = algorithms.get_spec(args.name)  # ValueError naming the valid ones
    est = spec.estimator
    from dpbench.plots.styles import LABELS
    from dpbench.tuning.spaces import tuning_space

    print(f"{spec.name}: {LABELS.get(spec.name) or spec.name} ({spec.task}; privacy: {_privacy_text(spec)})")
    print(f"  {spec.description}")
    print(f"  class {est.__module__}.{est.__name__} (its docstring gives the argument and the sources)")
    print("  parameters (default; constraint):")
    defaults = est().get_params()
    for key, value in defaults.items():
        print(f"    {key} = {value!r}; {_constraint_text(est._parameter_constraints.get(key, 'no_validation'))}")
    if spec.private:
        print("  fitted attributes (each private: a release or post-processing of releases, or public):")
        for kind, names in _attributes_by_kind(est).items():
            print(f"    {kind}: {', '.join(names)}")
    if tuning_space(spec.name):
        print("  tuned (paper 000 Table I ranges):")
        for key, space in tuning_space(spec.name).items():
            print(f"    {key}: {_range_text(space)}")
    return 0


def _privacy_text(spec) -> str:
    if not spec.private:
        return "none"
    return "mu-GDP" if getattr(spec.estimator, "composes_in_gdp", True) else "(eps, delta)"


def _attributes_by_kind(estimator) -> dict[str, list[str]]:
    from dpbench.algorithms.base import PUBLIC, RELEASE, declared_attributes

    declared = declared_attributes(estimator)
    return {kind: sorted(a for a, k in declared.items() if k == kind) for kind in (RELEASE, PUBLIC)}


def attributes_table() -> str:
    """The table of every private algorithm's fitted attributes (docs/privacy.md), from the classes' declarations."""
    from dpbench import algorithms

    lines = ["| algorithm | releases (or post-processing of releases) | public |", "| --- | --- | --- |"]
    for name in algorithms.available():
        spec = algorithms.get_spec(name)
        if spec.private:
            kinds = _attributes_by_kind(spec.estimator)
            lines.append(f"| {name} | " + " | ".join(", ".join(f"`{a}`" for a in names) for names in kinds.values())
                         + " |")
    return "\n".join(lines) + "\n"
