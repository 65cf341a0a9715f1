"""Tab completion of the `dpbench` console script."""

from __future__ import annotations

import os

from dpbench.cli.hydra import run
from dpbench.cli.sweep import TASKS


def complete(args: list[str], commands: tuple[str, ...]) -> int:
    """Tab completion: Hydra's completion script (`dpbench sweep -sc install=bash`) calls `dpbench -sc query=bash`
    with the line in COMP_LINE; complete the command here and a command's overrides with Hydra, without the
    command word (Hydra strips only the program name).  `commands`: the names main() dispatches."""
    line = os.environ.get("COMP_LINE", "")
    words = line.split()
    if len(words) < 2 or (len(words) == 2 and not line.endswith(" ")):
        prefix = words[1] if len(words) == 2 else ""
        print(" ".join(c for c in commands if c.startswith(prefix)))
        return 0
    if words[1] not in TASKS:
        return 0
    from dpbench.config import GROUPS, options

    current = "" if line.endswith(" ") else words[-1]
    group, _, prefix = current.lstrip("+").partition("=")
    if group in GROUPS and "=" in current:  # nested options (experiment=smoke/fig1) too, which Hydra omits
        print(" ".join(f"{current[: len(current) - len(prefix)]}{o}" for o in options(group) if o.startswith(prefix)))
        return 0
    os.environ["COMP_LINE"] = line.replace(f" {words[1]}", "", 1)
    return run(words[1], args)
