"""`python -m dpbench --version`."""

from __future__ import annotations


def main(argv: list[str]) -> int:
    from dpbench import __version__

    print(f"dpbench {__version__}")
    return 0
