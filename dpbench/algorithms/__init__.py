"""The algorithms, each a scikit-learn estimator, and the registry that names them.

Every module of this package registers its algorithms (with
`dpbench.algorithms.registry.register`) when imported; importing the package
imports them all (but private `_` modules), so a new algorithm is one new module.
"""

import importlib
import pkgutil

from dpbench.algorithms.registry import AlgorithmSpec, available, get_spec, make, register

for _module in pkgutil.iter_modules(__path__):
    if not _module.name.startswith("_"):  # _interpret_patch: imported when a DP-EBM is fitted
        importlib.import_module(f"{__name__}.{_module.name}")

__all__ = ["AlgorithmSpec", "available", "get_spec", "make", "register"]
