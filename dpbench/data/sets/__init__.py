"""The datasets, one module per family; each registers its datasets when imported (see data/registry.py).

The package imports every module here, so a new dataset is one new module.
"""

import importlib
import pkgutil

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")
