"""The glossary (docs/algorithms.md) names every parameter of every registered algorithm, and nothing else."""

import re
from pathlib import Path

from dpbench import algorithms

PAGE = Path(__file__).resolve().parents[1] / "docs" / "algorithms.md"


def glossary() -> set[str]:
    text = PAGE.read_text().split("## Glossary of parameter names", 1)[1].split("\n\n#", 1)[0]
    rows = [line.split("|")[1] for line in text.splitlines() if line.startswith("| `")]
    return {name for cell in rows for name in re.findall(r"`(\w+)`", cell)}


def test_every_parameter_is_in_the_glossary_and_the_glossary_names_only_parameters():
    used = {p for n in algorithms.available() for p in algorithms.get_spec(n).estimator().get_params()}
    names = glossary()
    assert not used - names, f"parameters missing from the glossary: {sorted(used - names)}"
    assert not names - used, f"glossary names no estimator takes: {sorted(names - used)}"
