"""Datasets: synthetic generators and the real sets (OpenML tasks, classification files).

`load_dataset(spec, split_seed)` is the single entry point the runner uses.
A spec is a dataset name (str) or a mapping {'name': ..., **options}.
"""

from __future__ import annotations

from collections.abc import Mapping

from dpbench.data.base import Dataset, MissingDataError


def _as_spec(spec) -> dict:
    if isinstance(spec, str):
        return {"name": spec}
    if isinstance(spec, Mapping) and "name" in spec:
        return dict(spec)
    raise ValueError(f"a dataset spec is a name or a mapping with a 'name' key, got {spec!r}")


def dataset_label(spec) -> str:
    """The name a spec's rows carry in results (synthetic options included)."""
    spec = _as_spec(spec)
    if spec["name"] == "synthetic":
        from dpbench.data.synthetic import synthetic_label

        return synthetic_label(**{k: v for k, v in spec.items() if k != "name"})
    options = ",".join(f"{k}={spec[k]}" for k in sorted(spec) if k != "name")
    return f"{spec['name']}[{options}]" if options else spec["name"]


def expand_dataset_specs(specs) -> list[dict]:
    """Expand group names (e.g. 'openml_all') into their members."""
    out = []
    for spec in specs:
        spec = _as_spec(spec)
        if spec["name"] == "synthetic":
            out.append(spec)
            continue
        from dpbench.data import catalog

        if spec["name"] in catalog.GROUPS:
            out.extend({"name": n} for n in catalog.GROUPS[spec["name"]])
        else:
            out.append(spec)
    return out


def dataset_task(spec) -> str:
    spec = _as_spec(spec)
    if spec["name"] == "synthetic":
        return "classification" if spec.get("task") == "classification" else "regression"
    from dpbench.data import catalog

    return catalog.task_of(spec["name"])


def load_dataset(spec, split_seed: int = 42, data_dir: str | None = None, split: str = "fixed") -> Dataset:
    """Load and preprocess one dataset split.  Raises MissingDataError if its files are absent.

    Synthetic data is drawn afresh from `split_seed`; real data is split as
    `split` says ('fixed' or 'per_seed'), unless the spec names its own split
    (e.g. {name: cod-rna, split: paper}).
    """
    spec = _as_spec(spec)
    name = spec.pop("name")
    if name == "synthetic":
        from dpbench.data.synthetic import make_synthetic

        return make_synthetic(seed=split_seed, **spec)
    from dpbench.data import catalog

    return catalog.load_real(name, split_seed=split_seed, data_dir=data_dir, **{"split": split, **spec})


__all__ = ["Dataset", "MissingDataError", "dataset_label", "dataset_task", "expand_dataset_specs", "load_dataset"]
