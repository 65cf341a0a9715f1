"""`python -m dpbench <command>`: the command line is dpbench.cli (`run`: its main, then a quick exit)."""

from dpbench.cli import main, run

if __name__ == "__main__":
    run()

__all__ = ["main"]
