"""The real datasets: what they are (paper 000 Table II, paper 001 Table 2), where they are, and loading them.

Names: the 33 OpenML regression tasks are `openml_<task_id>` (361072..361104);
the 5 classification sets are cod-rna, adult, creditcard, telco, cardio.

Where data comes from, in this order:
1. a mirror directory (layout of ../shared/data: openml/<task_id>.parquet,
   classification/<name>.parquet), read in place.  It is named by the
   environment variable DPBENCH_DATA_DIR, which overrides the config key
   `data.dir` (see `resolve_data_dir`);
2. for regression tasks, the `openml` package and its own cache (downloads
   unless DPBENCH_OFFLINE=1, see openml_source);
3. classification raw files (LIBSVM / Kaggle) only through a mirror built with
   `python -m dpbench data import --from-raw DIR --out MIRROR`.
Otherwise `load_real` raises MissingDataError with one line saying which
dataset, where it looked and the command that fetches it.

Splits (`split`): 'fixed' is the authors' train_test_split(test_size=0.2,
random_state=42) for every seed; 'per_seed' uses random_state=split_seed;
both are stratified for the Kaggle classification sets.  The LIBSVM sets
(adult = a9a, cod-rna) always use their official train/test files.
cod-rna: paper 001 Table 2 reports 271,617 train and 271,617 test rows with
8 features and 33.33% positives.  LIBSVM's cod-rna has 59,535 training rows
(cod-rna) and 271,617 test rows (cod-rna.t), both 1/3 positive; no
combination of the published files other than using cod-rna.t as both train
and test gives 271,617 and 271,617 (the unused cod-rna.r has 157,413).  So
the paper trained and tested on cod-rna.t.  The default here is LIBSVM's
official split (train 59,535 / test 271,617); split='paper' reproduces
Table 2 (train = test = cod-rna.t; test metrics are then training metrics).
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from dpbench.data import openml_source
from dpbench.data.base import Dataset, MissingDataError
from dpbench.data.preprocess import (
    CLASSIFICATION_SCHEMAS,
    FIXED_SPLIT_SEED,
    Encoded,
    encode_classification,
    encode_regression,
    split_indices,
)

DATA_DIR_ENV = "DPBENCH_DATA_DIR"
REPO_MIRROR = Path(__file__).resolve().parents[2].parent / "shared" / "data"  # ../shared/data beside the repo
SPLITS = ("fixed", "per_seed", "paper")


@dataclass(frozen=True)
class DatasetInfo:
    """One real dataset and the numbers its paper reports for it.

    Regression (paper 000 Table II): n rows, n_columns raw features, d after
    one-hot, true_bound = max |y| (printed with 6 decimals).
    Classification (paper 001 Table 2): p features after encoding, train/test
    sizes, positive_pct = % positives in the training set as printed (the
    printed values are truncated, not rounded, to 2 decimals).
    """

    name: str
    task: str
    title: str  # OpenML dataset name / paper 001 name
    slug: str  # Hydra config name: conf/dataset/<openml|classification>/<slug>.yaml
    source: str
    task_id: int | None = None
    n: int | None = None
    n_columns: int | None = None
    d: int | None = None
    true_bound: float | None = None
    p: int | None = None
    n_train: int | None = None
    n_test: int | None = None
    positive_pct: float | None = None

    @property
    def n_rows(self) -> int:
        return self.n if self.n is not None else self.n_train + self.n_test

    @property
    def n_features(self) -> int:
        return self.d if self.d is not None else self.p


# Paper 000 Table II (task id, n, # columns, d, true bound) with the OpenML dataset names.
_TABLE_II = """
361072 cpu_act 8192 21 21 99.000000
361073 pol 15000 26 26 100.000000
361074 elevators 16599 16 16 0.078000
361075 isolet 7797 613 613 26.000000
361076 wine_quality 6497 11 11 9.000000
361077 Ailerons 13750 33 33 0.003600
361078 houses 20640 8 8 13.122367
361079 house_16H 22784 16 16 13.122367
361080 diamonds 53940 6 6 9.842888
361081 Brazilian_houses 10692 8 8 13.928840
361082 Bike_Sharing_Demand 17379 6 6 977.000000
361083 nyc-taxi-green-dec-2016 581835 9 9 5.528238
361084 house_sales 21613 15 15 15.856731
361085 sulfur 10081 6 6 1.000000
361086 medical_charges 163065 3 3 11.958631
361087 MiamiHousing2016 13932 13 13 14.790071
361088 superconduct 21263 79 79 185.000000
361089 california 20640 8 8 1.791761
361090 fifa 18063 5 5 12.765691
361091 year 515345 90 90 2011.000000
361092 yprop_4_1 8885 62 82 1.000000
361093 analcatdata_supreme 4052 7 12 2.300000
361094 visualizing_soil 8641 4 5 40.000000
361095 black_friday 166821 9 23 10.084141
361096 diamonds 53940 9 26 9.842888
361097 Mercedes_Benz_Greener_Manufacturing 4209 359 735 265.320000
361098 Brazilian_houses 10692 11 17 13.928840
361099 Bike_Sharing_Demand 17379 11 20 977.000000
361100 OnlineNewsPopularity 39644 59 73 13.645079
361101 nyc-taxi-green-dec-2016 581835 16 31 5.528238
361102 house_sales 21613 17 19 15.856731
361103 particulate-matter-ukair-2017 394299 6 26 6.480505
361104 SGEMM_GPU_kernel_performance 241600 9 15 8.113915
"""

# Paper 001 Table 2 (p, train, test, % positives in train) and Table 3 (sources).
_TABLE_2 = (
    (
        "cod-rna",
        8,
        271617,
        271617,
        33.33,
        "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/binary.html#cod-rna",
    ),
    ("adult", 123, 32561, 16281, 24.08, "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/binary.html#a9a"),
    ("creditcard", 30, 227845, 56962, 0.17, "https://www.kaggle.com/datasets/mlg-ulb/creditcardfraud"),
    ("telco", 46, 5634, 1409, 26.53, "https://www.kaggle.com/datasets/blastchar/telco-customer-churn"),
    ("cardio", 19, 56000, 14000, 49.96, "https://www.kaggle.com/datasets/sulianova/cardiovascular-disease-dataset"),
)


def _build_infos() -> dict[str, DatasetInfo]:
    infos, seen = {}, set()
    for line in _TABLE_II.strip().splitlines():
        tid, title, n, cols, d, bound = line.split()
        slug = title.lower() + ("_categorical" if title in seen else "")  # the later task is the categorical variant
        seen.add(title)
        name = f"openml_{tid}"
        infos[name] = DatasetInfo(
            name=name,
            task="regression",
            title=title,
            slug=slug,
            source=f"https://www.openml.org/t/{tid}",
            task_id=int(tid),
            n=int(n),
            n_columns=int(cols),
            d=int(d),
            true_bound=float(bound),
        )
    for name, p, n_train, n_test, pct, url in _TABLE_2:
        infos[name] = DatasetInfo(
            name=name,
            task="classification",
            title=name,
            slug=name,
            source=url,
            p=p,
            n_train=n_train,
            n_test=n_test,
            positive_pct=pct,
        )
    return infos


INFOS: dict[str, DatasetInfo] = _build_infos()
GROUPS: dict[str, list[str]] = {
    "openml_all": [n for n, i in INFOS.items() if i.task == "regression"],
    "classification_all": [n for n, i in INFOS.items() if i.task == "classification"],
}

# Raw files a user downloads for each classification set (import --from-raw); first name of each tuple is canonical.
RAW_FILES: dict[str, tuple[tuple[str, ...], ...]] = {
    "cod-rna": (("cod-rna", "cod-rna.txt", "cod-rna.bz2"), ("cod-rna.t", "cod-rna.t.bz2")),
    "adult": (("a9a", "a9a.txt", "a9a.bz2"), ("a9a.t", "a9a.t.bz2")),
    "creditcard": (("creditcard.csv", "creditcard.csv.zip"),),
    "telco": (("WA_Fn-UseC_-Telco-Customer-Churn.csv", "WA_Fn-UseC_-Telco-Customer-Churn.csv.zip"),),
    "cardio": (("cardio_train.csv", "cardio_train.csv.zip"),),
}


def info(name: str) -> DatasetInfo:
    """The record of a dataset name; ValueError listing the valid names otherwise."""
    if name not in INFOS:
        raise ValueError(
            f"unknown dataset {name!r}; real datasets: {', '.join(INFOS)}; groups: {', '.join(GROUPS)}; or 'synthetic'"
        )
    return INFOS[name]


def task_of(name: str) -> str:
    if name in GROUPS:
        return INFOS[GROUPS[name][0]].task
    return info(name).task


def resolve_data_dir(data_dir: str | os.PathLike | None = None) -> Path | None:
    """The mirror directory: $DPBENCH_DATA_DIR if set, else `data_dir` (the config's data.dir), else None."""
    value = os.environ.get(DATA_DIR_ENV) or data_dir
    return Path(value).expanduser() if value else None


def default_data_dir() -> Path | None:
    """For the CLI and tests: $DPBENCH_DATA_DIR, else ../shared/data beside the repository if it exists."""
    return resolve_data_dir() or (REPO_MIRROR if REPO_MIRROR.is_dir() else None)


def mirror_path(name: str, root: Path | None) -> Path | None:
    """Where the mirror file of a dataset would be (None without a mirror directory)."""
    if root is None:
        return None
    i = info(name)
    if i.task == "regression":
        return root / "openml" / f"{i.task_id}.parquet"
    return root / "classification" / f"{name}.parquet"


def fetch_hint(name: str) -> str:
    """The command that fetches a dataset into a mirror."""
    i = info(name)
    if i.task == "regression":
        return (
            f"fetch it online with `python -m dpbench data import --from-openml --datasets {name} --out DIR` "
            f"and set {DATA_DIR_ENV}=DIR"
        )
    files = " + ".join(names[0] for names in RAW_FILES[name])
    return (
        f"download {files} from {i.source} into RAW, run `python -m dpbench data import --from-raw RAW --out DIR` "
        f"and set {DATA_DIR_ENV}=DIR"
    )


def _looked(name: str, root: Path | None) -> str:
    path = mirror_path(name, root)
    return f"no {path}" if path is not None else f"no data directory ({DATA_DIR_ENV} / data.dir unset)"


def availability_at(name: str, root: Path | None) -> tuple[str, str]:
    """('mirror' | 'openml_cache' | 'missing', location or reason) for an explicit mirror root; no network."""
    i = info(name)
    path = mirror_path(name, root)
    if path is not None and path.is_file():
        return "mirror", str(path)
    if i.task == "regression":
        cached = openml_source.cached_data_file(i.task_id)
        if cached is not None:
            return "openml_cache", str(cached)
        return "missing", f"{_looked(name, root)}, not in the openml cache {openml_source.cache_dir()}"
    return "missing", _looked(name, root)


def availability(name: str, data_dir: str | os.PathLike | None = None) -> tuple[str, str]:
    return availability_at(name, resolve_data_dir(data_dir))


@functools.lru_cache(maxsize=8)
def _encoded(name: str, kind: str, path: str) -> tuple[Encoded, str]:
    """Read and encode a whole dataset once per process (the expensive part a sweep must not repeat)."""
    i = info(name)
    if kind == "mirror":
        frame, source = pd.read_parquet(path), f"mirror {path}"
    else:
        frame, reason = openml_source.fetch_or_reason(i.task_id)
        if frame is None:
            raise MissingDataError(f"dataset {name} ({i.title}) is missing: {path}; {reason}; {fetch_hint(name)}")
        source = reason
    if i.task == "regression":
        return encode_regression(frame), source
    return encode_classification(frame, CLASSIFICATION_SCHEMAS[name]), source


def encoded_at(name: str, root: Path | None) -> tuple[Encoded, str]:
    """The encoded whole dataset (cached) and its source; MissingDataError when it is nowhere."""
    i = info(name)
    path = mirror_path(name, root)
    if path is not None and path.is_file():
        return _encoded(name, "mirror", str(path))
    if i.task == "regression":
        return _encoded(name, "openml", _looked(name, root))
    raise MissingDataError(f"dataset {name} is missing: {_looked(name, root)}; {fetch_hint(name)}")


def split_rows(name: str, enc: Encoded, split: str = "fixed", split_seed: int = FIXED_SPLIT_SEED):
    """Train and test row indices of an encoded dataset (see the module docstring)."""
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    if split == "paper" and name != "cod-rna":
        raise ValueError("split='paper' exists only for cod-rna (paper 001 trained and tested on cod-rna.t)")
    if enc.test_mask is not None:
        test = np.flatnonzero(enc.test_mask)
        return (test if split == "paper" else np.flatnonzero(~enc.test_mask)), test
    if split == "per_seed" and (
        isinstance(split_seed, bool) or not isinstance(split_seed, (int, np.integer)) or split_seed < 0
    ):
        raise ValueError(f"split_seed must be an integer >= 0, got {split_seed!r}")
    seed = FIXED_SPLIT_SEED if split == "fixed" else int(split_seed)
    return split_indices(enc.y, seed, stratify=info(name).task == "classification")


def load_at(name: str, root: Path | None, split_seed: int = FIXED_SPLIT_SEED, split: str = "fixed") -> Dataset:
    enc, source = encoded_at(name, root)
    train, test = split_rows(name, enc, split, split_seed)
    return Dataset(
        name=name,
        task=info(name).task,
        X_train=enc.X[train],
        y_train=enc.y[train],
        X_test=enc.X[test],
        y_test=enc.y[test],
        feature_names=list(enc.feature_names),
        feature_types=list(enc.feature_types),
        source=source,
    )


def load_real(name: str, split_seed: int = FIXED_SPLIT_SEED, data_dir=None, split: str = "fixed") -> Dataset:
    """A preprocessed train/test split of a real dataset (see the module docstring for sources and splits)."""
    info(name)
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    return load_at(name, resolve_data_dir(data_dir), split_seed, split)
