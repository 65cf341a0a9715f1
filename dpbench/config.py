"""Configs: the packaged Hydra configs (conf/, installed as dpbench/conf), their schema, and validation before
anything runs.

The schema (dataclasses in Hydra's ConfigStore, `dpbench_schema` in conf/config.yaml) makes unknown keys and
wrong types composition errors; `validate` then checks what a schema cannot (names of algorithms, datasets and
their parameters, synthetic specs) by expanding the grid, so a bad config fails before a results dir exists.
Every error is a ConfigError with a one-line message naming the key and the valid choices.
"""

from __future__ import annotations

import dataclasses
import difflib
import itertools
import logging
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from dpbench.tuning.settings import TuningConfig


def _conf_dir() -> Path:
    """The packaged configs: dpbench/conf in an installed wheel (pyproject.toml maps conf/ to the package
    dpbench.conf), else the repository's conf/ beside the package (a checkout: editable install, PYTHONPATH).
    Found from this file, not by importing dpbench.conf: a checkout run with PYTHONPATH next to an editable
    install of another checkout would import that one's configs."""
    package = Path(__file__).resolve().parent
    installed = package / "conf"
    return installed if (installed / "config.yaml").is_file() else package.parent / "conf"


CONF_DIR = _conf_dir()
EXPERIMENT_KEYS = ("name", "algorithms", "datasets", "epsilons", "deltas", "seeds", "tuning_mode", "tuning", "split")
GROUPS = ("experiment", "dataset", "algorithm", "runner", "tuning")


class ConfigError(ValueError):
    """A config that cannot run (one line: the key, the problem, the valid choices)."""


@dataclass
class RunnerConfig:
    n_jobs: int = 2
    backend: str = "loky"
    address: str | None = None
    connect_timeout: float = 5.0
    part_size: int = 32
    chunk_runs: int = 64
    blas_threads: int | None = 1
    progress: bool = True


@dataclass
class DataConfig:
    dir: str | None = None


def _plot_defaults() -> dict:
    return {"kind": "privacy_curve", "metric": None, "x": None, "y": None, "formats": ["png"]}


@dataclass
class Config:
    name: str | None = None
    algorithms: list[Any] = field(default_factory=list)
    datasets: list[Any] = field(default_factory=list)
    dataset_grid: dict[str, list[Any]] = field(default_factory=dict)  # {option: [values]} crossed with each dataset
    epsilons: list[float] = field(default_factory=list)
    deltas: list[float] = field(default_factory=lambda: [1e-6])
    seeds: list[int] = field(default_factory=lambda: [0])
    tuning_mode: str = "fixed"
    tuning: TuningConfig = field(default_factory=TuningConfig)
    split: str = "fixed"
    results_dir: str = "results"
    data: DataConfig = field(default_factory=DataConfig)
    plot: dict[str, Any] = field(default_factory=_plot_defaults)  # a figure kind's options: checked by validate
    runner: RunnerConfig = field(default_factory=RunnerConfig)
    imports: list[str] = field(default_factory=list)  # the user's modules registering what the grid names


# Hydra logs a failed job before re-raising its error; main() prints errors itself, in one line
logging.getLogger("hydra").addHandler(logging.NullHandler())


SHORTHAND_GROUPS = ("algorithm", "dataset")


def shorthands(groups: tuple[str, ...] = SHORTHAND_GROUPS) -> dict[str, dict]:
    """The shorthands of `groups`, by path (group/name), made from the registries so that a registered algorithm or
    dataset needs no YAML: `algorithm=<name>` sets the algorithms; `dataset=<group>` (e.g. openml_all),
    `dataset=<group without _all>/<slug or name>` (e.g. openml/cpu_act) and, for a dataset in no group,
    `dataset=<name>` set the datasets.  (Each group's registry imports its modules, and with them scikit-learn.)"""
    out = {}
    if "algorithm" in groups:
        from dpbench import algorithms

        out.update({f"algorithm/{name}": {"algorithms": [{"name": name}]} for name in algorithms.available()})
    if "dataset" in groups:
        from dpbench import data

        for group, names in data.groups().items():
            out[f"dataset/{group}"] = {"datasets": [group]}
            out.update({f"dataset/{dataset_shorthand(n)}": {"datasets": [n]} for n in names})
        out.update({f"dataset/{n}": {"datasets": [n]} for n in data.available() if not data.get_spec(n).group})
    return out


def shorthand_groups(overrides: list[str]) -> tuple[str, ...]:
    """The shorthand groups a composition with these overrides can use: those an override names (`algorithm=`,
    `+dataset=`, `~algorithm`, `dataset@...=`); both when there is a ./conf of yours (its defaults lists may name
    them).  The packaged configs name none, so a sweep of a packaged experiment composes without importing the
    algorithms, the datasets and scikit-learn (about 1.5 s on 2 cores), which it does after its workers started."""
    if user_conf_dir() is not None:
        return SHORTHAND_GROUPS
    return tuple(g for g in SHORTHAND_GROUPS if any(re.match(rf"[+~]*{g}(@|=|$)", o) for o in overrides))


def dataset_shorthand(name: str) -> str:
    """The `dataset=` option of a registered dataset (or group)."""
    from dpbench import data

    if name in data.groups():
        return name
    spec = data.get_spec(name)
    return f"{spec.group.removesuffix('_all')}/{spec.slug or name}" if spec.group else name


def _experiment_file(name: str) -> Path | None:
    found = [d / "experiment" / f"{name}.yaml" for d in (CONF_DIR, user_conf_dir()) if d]
    return next((p for p in found if p.is_file()), None)


def smoke_overlay(name: str) -> str | None:
    """The smoke overlay (conf/smoke/) of an experiment: smoke/<name> if there is one, else smoke/<base> of the
    base config its defaults list names (`- /base/<base>`), else None (no smoke variant)."""
    from omegaconf import OmegaConf

    overlays = _file_options(CONF_DIR, "smoke") | _file_options(user_conf_dir(), "smoke")
    if name in overlays:
        return name
    path = _experiment_file(name)
    try:
        defaults = OmegaConf.to_container(OmegaConf.load(path)).get("defaults", []) if path else []
    except yaml.YAMLError:  # a malformed file of yours: an error when it is used (compose names it), not before
        return None
    bases = [d.removeprefix("/base/") for d in defaults if isinstance(d, str) and d.startswith("/base/")]
    return next((b for b in bases if b in overlays), None)


def smoke_variants() -> dict[str, dict]:
    """experiment=smoke/<name>, by path: the experiment with its smoke overlay on top, named <name>_smoke (its
    own results directory, which the report does not judge)."""
    out = {}
    for name in _file_options(CONF_DIR, "experiment") | _file_options(user_conf_dir(), "experiment"):
        overlay = smoke_overlay(name)
        if overlay:
            out[f"experiment/smoke/{name}"] = {"defaults": [f"/experiment/{name}", f"/smoke/{overlay}", "_self_"],
                                               "name": f"{name}_smoke"}
    return out


def _generated(group: str) -> dict[str, dict]:
    """The configs of `group` made in code, by path."""
    made = {"experiment": smoke_variants, "algorithm": shorthands, "dataset": shorthands}.get(group, dict)()
    return {p: node for p, node in made.items() if p.startswith(f"{group}/")}


def user_imports() -> list[str]:
    """The modules the experiments of the user's ./conf name in `imports:`, each once.  dpbench imports them
    before it makes the shorthands or looks a name up (`store`, `algorithms`, `audit`, `check`), so what they
    register is used like a built-in: `algorithm=NAME`, `dataset=NAME`, `algorithms NAME`.  A file that does not
    parse is skipped here; composing it says what is wrong."""
    import yaml

    user = user_conf_dir()
    names = []
    for path in sorted(user.glob("experiment/**/*.yaml")) if user else []:
        try:
            doc = yaml.safe_load(path.read_text())
        except (OSError, yaml.YAMLError):
            continue
        imports = doc.get("imports") if isinstance(doc, dict) else None
        names += [n for n in imports if isinstance(n, str)] if isinstance(imports, list) else []
    return list(dict.fromkeys(names))


def load_user_imports(modules: list[str] | None = None) -> None:
    """Import `modules` (default: `user_imports()`); ValueError in one line if one cannot be imported."""
    from dpbench.extend import load_imports

    load_imports(user_imports() if modules is None else modules)


def store(groups: tuple[str, ...] = SHORTHAND_GROUPS) -> None:
    """Put into Hydra's ConfigStore what is not a file: the schema (`dpbench_schema`), the shorthands of `groups`
    (`shorthand_groups`) and the smoke variants.  Called before every composition, so algorithms and datasets
    registered since are in, and those the user's ./conf experiments import (`user_imports`)."""
    from hydra.core.config_store import ConfigStore

    load_user_imports()
    cs = ConfigStore.instance()
    cs.store(name="dpbench_schema", node=Config)
    for path, node in {**shorthands(groups), **smoke_variants()}.items():
        group, _, name = path.rpartition("/")
        if not (CONF_DIR / f"{path}.yaml").exists():  # Hydra cannot have both: a packaged file wins (e.g. a stale
            cs.store(group=group, name=name, node=node, package="_global_")  # one left in a setuptools build/)


def normalize_overrides(overrides: list[str]) -> list[str]:
    """`+experiment=x` (the form documented before experiment had a default) means `experiment=x`."""
    return [o[1:] if re.match(rf"\+({'|'.join(GROUPS)})=", o) else o for o in overrides]


def user_conf_dir() -> Path | None:
    """./conf in the working directory: your own configs, searched after the packaged ones.  None when there is
    none, or when it is dpbench's own conf/ (it holds config.yaml: the root of a checkout, this one or another
    whose dpbench is installed), which is not searched a second time as a user layer."""
    d = Path("conf").resolve()
    return d if d.is_dir() and not (d / "config.yaml").is_file() else None


def searchpath() -> list[str]:
    """The override that adds the user's ./conf to Hydra's search path (none without one)."""
    d = user_conf_dir()
    return [f"hydra.searchpath=['file://{d.as_posix()}']"] if d else []


def _file_options(root: Path | None, group: str) -> set[str]:
    d = root / group if root else None
    return {p.relative_to(d).with_suffix("").as_posix() for p in d.rglob("*.yaml")} if d and d.is_dir() else set()


def _packaged_options(group: str) -> set[str]:
    """The packaged files' and the generated configs' options of a group."""
    generated = {p.removeprefix(f"{group}/") for p in _generated(group)}
    return _file_options(CONF_DIR, group) | generated


def options(group: str) -> list[str]:
    """A config group's options (packaged, generated and in ./conf), e.g. options('experiment')."""
    return sorted(_packaged_options(group) | _file_options(user_conf_dir(), group))


def check_user_configs() -> None:
    """A user config in ./conf with the name of a packaged or generated one would shadow it or be shadowed,
    silently: name the file instead."""
    user = user_conf_dir()
    if user is None:  # nothing to shadow (and the generated names are not made for nothing)
        return
    for group in GROUPS:
        packaged = _packaged_options(group)
        for name in sorted(_file_options(user, group) & packaged):
            path = Path("conf") / group / f"{name}.yaml"
            raise ValueError(f"{path} has the name of dpbench's packaged {group} {name!r}, so one of them is "
                             f"ignored; rename yours (e.g. {group}={name}_mine)")


def experiment_names() -> list[str]:
    return options("experiment")


def _schema_keys(path: str) -> list[str]:
    """The keys of the schema node at a dotted path ([] where the schema does not fix them, e.g. plot)."""
    node = Config
    for part in [p for p in path.split(".") if p]:
        types = {f.name: f.default_factory for f in dataclasses.fields(node)}  # nested schemas: their class
        node = types.get(part)
        if not (isinstance(node, type) and dataclasses.is_dataclass(node)):
            return []
    return [f.name for f in dataclasses.fields(node)]


def _unknown_key(key: str) -> str:
    parent, _, leaf = key.rpartition(".")
    valid = _schema_keys(parent)
    if parent == "plot":
        return f"unknown config key {key!r}; a plot option the figure kind takes is added with +{key}=..."
    if parent == "dataset_grid":
        return f"unknown config key {key!r}; a dataset option to cross is added with +{key}=[values]"
    close = difflib.get_close_matches(leaf, valid, n=1)
    hint = f" (did you mean {(parent + '.' if parent else '') + close[0]}?)" if close else ""
    return f"unknown config key {key!r}{hint}; valid keys{' of ' + parent if parent else ''}: {', '.join(valid)}"


def one_line(exc: BaseException) -> str:
    """A Hydra / OmegaConf composition error as one line that names the key and the valid choices."""
    text = "\n".join(str(e) for e in (exc, exc.__cause__) if e is not None)
    unknown = re.search(r"Key '([^']+)' (?:is )?not in", text)
    if unknown:
        full_key = re.search(r"full_key: (\S+)", text)
        key = full_key.group(1) if full_key else unknown.group(1)
        source = re.search(r"In '(([^'/]+)/[^']+)'", text)  # the config file being merged
        if source and key.split(".")[0] == source.group(2) and source.group(2) not in _schema_keys(""):
            return (f"{_config_file(source.group(1))} has no `# @package _global_` header, so its keys are read "
                    f"under {key.split('.')[0]!r}: add that line at its top")
        return _unknown_key(key)
    group = re.search(r"Could not find '([^'/]+)/([^']*)'", text)
    if group and group.group(1) in GROUPS:
        return f"unknown {group.group(1)} {group.group(2)!r}; available: {', '.join(options(group.group(1)))}"
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.strip().startswith(("See ", "full_key",
                                                                                              "object_type"))]
    override = re.search(r"Error merging override (\S+)", text)
    if override:
        key, _, value = override.group(1).lstrip("+").partition("=")
        if "is not a ListConfig" in text:
            return f"{key} must be a list, e.g. {key}=[{value}]"
        return f"bad override {override.group(1)!r}: {lines[1] if len(lines) > 1 else text}"
    return "; ".join(dict.fromkeys(lines))


def _config_file(path: str) -> str:
    """Where the config of `path` (group/name) is: a file of yours (./conf) or the packaged one."""
    found = [d / f"{path}.yaml" for d in (user_conf_dir(), CONF_DIR) if d]
    return _shown(next((p for p in found if p.is_file()), Path(f"{path}.yaml")))


def _shown(path: Path | str) -> str:
    """A path relative to the working directory when it is below it."""
    path = Path(path)
    return str(path.relative_to(Path.cwd())) if path.is_relative_to(Path.cwd()) else str(path)


def yaml_error(exc: yaml.YAMLError) -> str:
    """A config file that is not YAML, in one line: the file, the line and column, the problem."""
    mark = getattr(exc, "problem_mark", None)
    if mark is None:
        return f"a config file is not valid YAML: {' '.join(str(exc).split())}"
    start = getattr(exc, "context_mark", None)
    context = f" ({exc.context} at line {start.line + 1}, column {start.column + 1})" if exc.context and start else ""
    where = f"{_shown(mark.name)}, line {mark.line + 1}, column {mark.column + 1}"
    return f"{where}: not valid YAML: {exc.problem}{context}"


def check_syntax(overrides: list[str]) -> None:
    """Each override parsed alone, so that a syntax error names the override."""
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import OverrideParseException

    parser = OverridesParser.create()
    for o in overrides:
        try:
            parser.parse_overrides([o])
        except OverrideParseException as exc:
            group = next((g for g in GROUPS if "=" not in o and o in options(g)), None)  # e.g. `sweep quickstart`
            hint = f"did you mean {group}={o}? " if group else ""
            raise ConfigError(f"bad override {o!r}: {str(exc).splitlines()[0]} ({hint}syntax: key=value, "
                              "lists [a,b], mappings {k: v}; quote the argument in the shell)") from None


def sweep_jobs(overrides: list[str]) -> list[list[str]]:
    """The overrides of each job of a --multirun (comma-separated values and sweep functions expanded)."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    choices = []
    for o in OverridesParser.create().parse_overrides(overrides):
        if o.is_hydra_override():
            continue
        key = o.get_key_element()
        choices.append([f"{key}={v}" for v in o.sweep_string_iterator()] if o.is_sweep_override() else [o.input_line])
    return [list(job) for job in itertools.product(*choices)]


def compose(overrides: list[str]):
    """The resolved config via Hydra's compose API (scripts, tests); the CLI composes with @hydra.main."""
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    check_syntax(overrides)
    store(shorthand_groups(normalize_overrides(overrides)))
    try:
        if GlobalHydra.instance().is_initialized():  # inside the CLI's Hydra app (e.g. a multirun job)
            return hydra_compose("config", overrides=normalize_overrides(overrides))
        with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
            return hydra_compose("config", overrides=[*normalize_overrides(overrides), *searchpath()])
    except (HydraException, OmegaConfBaseException) as exc:
        raise ConfigError(one_line(exc)) from None
    except yaml.YAMLError as exc:
        raise ConfigError(yaml_error(exc)) from None


def _defaults() -> dict:
    """The schema's top-level defaults, as plain values."""
    from omegaconf import OmegaConf

    return OmegaConf.to_container(OmegaConf.structured(Config), resolve=True)


def to_container(cfg) -> dict:
    from omegaconf import OmegaConf

    return OmegaConf.to_container(cfg, resolve=True)


def _check_keys(cfg: dict, path: str = "") -> None:
    """Keys a `+key=value` override added past the schema."""
    valid = _schema_keys(path)
    for key, value in cfg.items():
        if key not in valid:
            raise ConfigError(_unknown_key(path + key))
        if isinstance(value, dict) and _schema_keys(path + key):
            _check_keys(value, path + key + ".")


def _check_choice(key: str, value, choices) -> None:
    if value not in choices:
        raise ConfigError(f"{key}={value!r} is not one of {', '.join(map(str, choices))}")


def _check_algorithms(entries) -> None:
    """Names, parameter names and values of every setting, as the estimator itself checks them before a fit."""
    from dpbench import algorithms

    for entry in entries:
        if not isinstance(entry, str | dict) or (isinstance(entry, dict) and not isinstance(entry.get("name"), str)):
            raise ConfigError(f"algorithms: each entry is a name or {{name: ..., params: {{...}}}}, got {entry!r}")
        entry = {"name": entry} if isinstance(entry, str) else dict(entry)
        grid = entry.get("grid") or {}
        bad = [k for k, v in grid.items() if not isinstance(v, list) or not v]
        if bad:
            raise ConfigError(f"algorithm {entry.get('name')!r} grid.{bad[0]} must be a non-empty list of values")
        for values in itertools.product(*grid.values()):
            params = {**(entry.get("params") or {}), **dict(zip(grid, values, strict=True))}
            est = algorithms.make(entry.get("name"), **params)
            try:
                est._validate_params()  # sklearn's _parameter_constraints
                getattr(est, "_check_params", lambda: None)()
            except (TypeError, ValueError) as exc:
                raise ConfigError(f"algorithm {entry.get('name')!r}: {exc}") from None


def _check_plot(plot: dict, run: list[str]) -> None:
    """The figure kind and its options, so that the figure cannot fail on the config after a long sweep; `run`:
    the names of the algorithms the experiment runs."""
    from dpbench import algorithms, metrics, plots

    plots.formats(plot)
    options = plots.options(plot, plots.get_kind(plot.get("kind") or plots.DEFAULT_KIND))  # what the kind takes
    if "metric" in options:
        _check_choice("plot.metric", options["metric"], metrics.columns())
    for axis in ("x", "y"):  # scatter: the two algorithms compared
        if axis in options:
            _check_choice(f"plot.{axis}", options[axis], algorithms.available())
            if options[axis] not in run:
                raise ConfigError(f"plot.{axis}={options[axis]} is not among the experiment's algorithms "
                                  f"({', '.join(run)}): set plot.x and plot.y to two of them, or draw the default "
                                  f"figure ({plots.DEFAULT_KIND}) with ~plot")


def _check_runner(runner: dict) -> None:
    """Numbers the runner would only reject after writing its config files (joblib, Dask)."""
    n_jobs = runner["n_jobs"]
    if n_jobs == 0:
        raise ConfigError("runner.n_jobs must be >= 1 (workers) or negative (joblib: -1 all cores), got 0")
    for key in ("part_size", "chunk_runs"):
        if runner[key] < 1:
            raise ConfigError(f"runner.{key} must be >= 1, got {runner[key]}")
    if runner["blas_threads"] is not None and runner["blas_threads"] < 1:
        raise ConfigError(f"runner.blas_threads must be >= 1 or null, got {runner['blas_threads']}")
    if not runner["connect_timeout"] > 0:
        raise ConfigError(f"runner.connect_timeout must be > 0 seconds, got {runner['connect_timeout']}")


def validate(cfg) -> dict:
    """The config as a plain dict, checked so that the run cannot fail on the config (ConfigError otherwise).
    `dataset_grid` is applied: `datasets` lists every crossed dataset, as the runner expands and hashes it."""
    from dpbench import tuning
    from dpbench.data import check_spec, cross_dataset_grid, expand_dataset_specs
    from dpbench.extend import load_imports
    from dpbench.runner.backends import BACKENDS
    from dpbench.runner.grid import expand

    cfg = to_container(cfg) if not isinstance(cfg, dict) else cfg
    _check_keys(cfg)
    for key, default in _defaults().items():  # a section removed with `~key` is its default
        cfg.setdefault(key, default)
    try:
        load_imports(cfg.get("imports") or [])  # before anything looks a name up
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    if not cfg.get("name"):
        raise ConfigError(f"the config has no experiment name; pass experiment=<{'|'.join(experiment_names())}>")
    _check_choice("tuning_mode", cfg["tuning_mode"], tuning.MODES)
    _check_choice("runner.backend", cfg["runner"]["backend"], BACKENDS)
    _check_runner(cfg["runner"])
    try:
        cfg["datasets"], cfg["dataset_grid"] = cross_dataset_grid(cfg["datasets"], cfg.get("dataset_grid")), {}
        for spec in expand_dataset_specs(cfg["datasets"]):
            check_spec(spec)  # names and options (synthetic: the generator's own checks), so none fails as data_error
            _check_has_test_part(spec)
        _check_algorithms(cfg["algorithms"])
        _check_plot(cfg["plot"], [a if isinstance(a, str) else a["name"] for a in cfg["algorithms"]])
        expand(experiment(cfg))  # epsilons, deltas, seeds, split, tasks
    except ConfigError:
        raise
    except (TypeError, ValueError) as exc:
        raise ConfigError(str(exc)) from None
    return cfg


def _check_has_test_part(spec) -> None:
    """A sweep scores on a test part; a dataset fitted and scored on all rows has none (ConfigError naming it)."""
    from dpbench import data

    name = spec if isinstance(spec, str) else spec["name"]
    if data.get_spec(name).split == "all":
        raise ConfigError(f"dataset {name!r} has no test part (paper 003 fits and scores on all its rows): a sweep "
                          f"cannot score it; run `python -m dpbench analysis paper003`")


def experiment(cfg: dict) -> dict:
    """The grid part of a config (what the runner expands and hashes); `imports` only when there are some, so that
    the grids without them hash as before."""
    return {k: cfg[k] for k in EXPERIMENT_KEYS} | ({"imports": list(cfg["imports"])} if cfg.get("imports") else {})
