"""dpbench: benchmark and reproduction harness for differentially private linear models."""

__version__ = "0.1.0"
