"""`python -m dpbench <command>`: the command line is dpbench.cli."""

import sys

from dpbench.cli import main

if __name__ == "__main__":
    sys.exit(main())
