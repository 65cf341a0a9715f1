"""Datasets: one registry of descriptions (data/registry.py), one module per family of datasets (data/sets/).

`load_dataset(spec, split_seed, data_dir, split)` is the single entry point the
runner uses.  A spec is a dataset name (str) or a mapping {'name': ..., **options}
(a generator's options, or `split` for a real set, e.g. {name: cod-rna, split: paper}).
`data_dir` is the mirror directory the entry point resolved (`resolve_data_dir`);
it is used as given.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from pathlib import Path

from dpbench.data.base import Dataset, EmptyDataError, MissingDataError
from dpbench.data.catalog import SPLIT_MODES, SPLIT_OPTIONS, load, resolve_data_dir
from dpbench.data.preprocess import FIXED_SPLIT_SEED
from dpbench.data.registry import DatasetSpec, available, dataset, get_spec, groups, label_options, register, unregister


def _as_spec(spec) -> dict:
    if isinstance(spec, str):
        return {"name": spec}
    if isinstance(spec, Mapping) and "name" in spec:
        return dict(spec)
    raise ValueError(f"a dataset spec is a name or a mapping with a 'name' key, got {spec!r}")


def _options(spec: dict) -> dict:
    return {k: v for k, v in spec.items() if k != "name"}


def dataset_label(spec) -> str:
    """The name a spec's rows carry in results (a generator's options included)."""
    spec = _as_spec(spec)
    return get_spec(spec["name"]).label_for(_options(spec))


def cross_dataset_grid(specs, grid: Mapping | None) -> list:
    """Each spec crossed with the options of `grid` ({option: [values]}, the config's `dataset_grid`): a grid
    over datasets written as templates and the values that vary (e.g. corruption fraction x n_train)."""
    if not grid:
        return list(specs)
    bad = [k for k, v in grid.items() if not isinstance(v, (list, tuple)) or not v]
    if bad:
        raise ValueError(f"dataset_grid.{bad[0]} must be a non-empty list of values")
    out = []
    for spec in map(_as_spec, specs):
        if spec["name"] in groups():
            raise ValueError(f"dataset_grid cannot cross the group {spec['name']!r}: list its datasets")
        out.extend({**spec, **dict(zip(grid, values, strict=True))} for values in itertools.product(*grid.values()))
    return out


def expand_dataset_specs(specs) -> list[dict]:
    """Expand group names (e.g. 'openml_all') into their members; unknown names are a ValueError."""
    out, named = [], groups()
    for spec in map(_as_spec, specs):
        if spec["name"] in named:
            out.extend({"name": n} for n in named[spec["name"]])
        else:
            get_spec(spec["name"])
            out.append(spec)
    return out


def dataset_task(spec) -> str:
    spec = _as_spec(spec)
    return get_spec(spec["name"]).task_for(spec)


def check_spec(spec) -> None:
    """A ValueError naming the problem if a spec's name or options are wrong (nothing is loaded or drawn)."""
    spec = _as_spec(spec)
    described, options = get_spec(spec["name"]), _options(spec)
    valid = described.source.options() if described.generated else {"split": "fixed"}
    unknown = sorted(set(options) - set(valid))
    if unknown:
        raise ValueError(f"unknown option(s) {unknown} for dataset {spec['name']!r}; valid: {', '.join(valid)}")
    if described.generated and described.source.check is not None:
        described.source.check(**{**valid, **options})
    if "split" in options and options["split"] not in SPLIT_OPTIONS:
        raise ValueError(f"dataset {spec['name']!r}: split must be one of {SPLIT_OPTIONS}, got {options['split']!r}")


def data_seed(spec, seed: int, split: str = "fixed") -> int:
    """Seed of a run's data: generated data is drawn afresh per seed; real data is split per seed or fixed."""
    if get_spec(_as_spec(spec)["name"]).generated or split == "per_seed":
        return seed
    return FIXED_SPLIT_SEED


def load_dataset(spec, split_seed: int = FIXED_SPLIT_SEED, data_dir=None, split: str = "fixed") -> Dataset:
    """Load and preprocess one dataset split from the mirror `data_dir` (None: no mirror).

    Raises MissingDataError if its files are absent.  Generated data is drawn from `split_seed`; real data is
    split as `split` says ('fixed' or 'per_seed'), unless the spec names its own split.
    """
    spec = _as_spec(spec)
    name, options = spec["name"], _options(spec)
    root = Path(data_dir).expanduser() if data_dir else None
    if get_spec(name).generated:
        return load(name, root, split_seed, **options)
    return load(name, root, split_seed, **{"split": split, **options})


from dpbench.data import sets  # noqa: E402,F401 - registers every dataset

__all__ = ["Dataset", "DatasetSpec", "EmptyDataError", "MissingDataError", "available", "check_spec",
           "cross_dataset_grid", "data_seed", "dataset", "dataset_label", "dataset_task", "expand_dataset_specs",
           "get_spec", "groups", "label_options", "load_dataset", "register", "resolve_data_dir", "unregister",
           "SPLIT_MODES", "SPLIT_OPTIONS"]
