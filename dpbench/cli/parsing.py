"""The commands' argument parser: a usage error is a ValueError, which main() reports in one line (exit code 2)."""

from __future__ import annotations

import argparse


class OneLineParser(argparse.ArgumentParser):
    """argparse whose usage errors are ValueErrors, so main() reports them in one line (exit code 2)."""

    def error(self, message):
        raise ValueError(message)
