"""One place that knows every dataset: what it is, where its rows come from, how they become X, y and a split,
and the numbers its paper reports.

A dataset is declared once, in a module of `dpbench/data/sets/` (imported with
the package, like `dpbench/algorithms/`): `register(DatasetSpec(...))` for
data read from files, or the `@dataset(...)` decorator on a generator
function, which draws a raw frame from a seed and options.  Every source
yields a raw frame; the spec's `schema` and `split` policy turn it into a
`Dataset`, so real and generated data take the same path.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from dpbench.data.preprocess import Schema
from dpbench.data.sources import Generator

TASKS = ("regression", "classification")
SPLIT_POLICIES = ("random", "official", "all")


@dataclass(frozen=True)
class DatasetSpec:
    """A dataset's description.

    source: where the raw frame comes from (`dpbench.data.sources`: OpenMLTask, RawFiles, PaperCopy, Generator;
        Unavailable for none).
    split: 'random' (train_test_split 80/20, the authors' fixed seed or per seed, stratified for
        classification), 'official' (the frame's `split` column marks the test rows) or 'all' (every row is a
        training row and the test part is empty: for a paper that fits and scores on all rows, paper 003).
    paper: the numbers the paper reports, which `data verify` checks (keys: n, columns, d, true_bound,
        train, test, positive_pct; see mirror.measure); paper_table names the table, paper_split the split
        under which they hold ('paper': trained and tested on the official test rows, cod-rna only).
    group: a name that selects several datasets at once (e.g. openml_all); slug: the Hydra shorthand
        `dataset=<group without _all>/<slug or name>` (dpbench.config.shorthands).
    label: for generators, the name a spec's rows carry in results, from its options; options_of: its inverse,
        the options behind such a name (None for another name), so that figures read a setting's options (e.g.
        the corruption and its fraction) from the registry, not with a format of their own.
    prepare: raw frame -> raw frame before the schema, for a paper's own reading of a shared file (e.g. paper 003's
        ordinal codes and untransformed labels of an OpenML task).  A generator may put what it knows beyond the
        rows (true coefficients, ...) in its frame's `attrs['extra']`; loading hands it on as `Dataset.extra`.
    """

    name: str
    task: str
    source: Any
    schema: Schema = Schema()
    split: str = "random"
    title: str = ""
    url: str = ""
    group: str | None = None
    slug: str | None = None
    paper: Mapping[str, float] = field(default_factory=dict)
    paper_table: str = ""
    paper_split: str = "fixed"
    label: Callable[..., str] | None = None
    options_of: Callable[[str], Mapping | None] | None = None
    prepare: Callable[[Any], Any] | None = None

    def __post_init__(self):
        if self.task not in TASKS:
            raise ValueError(f"dataset {self.name!r}: task must be one of {TASKS}, got {self.task!r}")
        if self.split not in SPLIT_POLICIES:
            raise ValueError(f"dataset {self.name!r}: split must be one of {SPLIT_POLICIES}, got {self.split!r}")

    @property
    def generated(self) -> bool:
        return hasattr(self.source, "make")

    def label_for(self, options: Mapping) -> str:
        """The name rows of this dataset with these options carry in results: name[k=v,...] unless `label`."""
        if self.label is not None:
            return self.label(**options)
        text = ",".join(f"{k}={options[k]}" for k in sorted(options))
        return f"{self.name}[{text}]" if text else self.name

    def task_for(self, options: Mapping) -> str:
        """The task of a spec with these options: a generator's `task` option overrides the declared one."""
        return options.get("task", self.task) if self.generated else self.task


_REGISTRY: dict[str, DatasetSpec] = {}


def register(spec: DatasetSpec) -> DatasetSpec:
    """Add the dataset `spec` to the registry (ValueError if its name, or a group's, is taken); returns it."""
    if spec.name in _REGISTRY or spec.name in groups():
        raise ValueError(f"dataset {spec.name!r} is already registered")
    _REGISTRY[spec.name] = spec
    return spec


def dataset(name: str, task: str = "regression", check=None, **declaration):
    """Function decorator: register a generator `fn(seed, **options) -> raw frame` as the dataset `name`
    (`check(**options)`: see sources.Generator)."""

    def decorate(fn):
        register(DatasetSpec(name, task, Generator(fn, check), **declaration))
        return fn

    return decorate


def unregister(name: str) -> None:
    """Remove a dataset (tests that register a toy one clean up with this)."""
    _REGISTRY.pop(name, None)


def label_options(label: str) -> dict:
    """The options behind a results name (`label_for`'s inverse): a generator's, where it declares `options_of`;
    {} for a registered dataset's own name; a ValueError for another name."""
    for spec in _REGISTRY.values():
        options = spec.options_of(label) if spec.options_of else None
        if options is not None:
            return {"name": spec.name, **options}
    if label in _REGISTRY:
        return {"name": label}
    raise ValueError(f"{label!r} is not the results name of a registered dataset with readable options")


def groups() -> dict[str, list[str]]:
    """Group name -> its datasets, in registration order."""
    out: dict[str, list[str]] = {}
    for spec in _REGISTRY.values():
        if spec.group:
            out.setdefault(spec.group, []).append(spec.name)
    return out


def available(task: str | None = None) -> list[str]:
    """Names of the registered datasets (optionally only those for `task`), in registration order."""
    return [n for n, s in _REGISTRY.items() if task is None or s.task == task]


def get_spec(name: str) -> DatasetSpec:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ValueError(
            f"unknown dataset {name!r}; datasets: {', '.join(available())}; groups: {', '.join(groups())}"
        ) from None
