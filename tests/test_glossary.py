"""The README's glossary names every parameter of every registered algorithm, and nothing else."""

import re
from pathlib import Path

from dpbench import algorithms

README = Path(__file__).resolve().parents[1] / "README.md"


def glossary() -> set[str]:
    text = README.read_text().split("### Glossary of parameter names", 1)[1].split("\n\n###", 1)[0]
    rows = [line.split("|")[1] for line in text.splitlines() if line.startswith("| `")]
    return {name for cell in rows for name in re.findall(r"`(\w+)`", cell)}


def test_every_parameter_is_in_the_glossary_and_the_glossary_names_only_parameters():
    used = {p for n in algorithms.available() for p in algorithms.get_spec(n).estimator().get_params()}
    names = glossary()
    assert not used - names, f"parameters missing from the README's glossary: {sorted(used - names)}"
    assert not names - used, f"glossary names no estimator takes: {sorted(names - used)}"
