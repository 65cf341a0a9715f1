"""Hydra plumbing of the experiment commands (sweep, plot, report): composing their config, its errors in one
line, and a user's ./conf."""

from __future__ import annotations

import os
import sys

from dpbench.cli import timing
from dpbench.cli.parsing import OneLineParser
from dpbench.cli.sweep import TASKS


class _TaskError(BaseException):
    """Carries a command's error through Hydra, which would print a line of its own for an Exception and,
    in a multirun, go on to the next job."""


def run(command: str, args: list[str]) -> int:
    """Run sweep/plot/report: with Hydra's flags (--cfg, --multirun, shell completion, ...) through Hydra's own
    entry point (@hydra.main), else on the config composed once (Hydra's entry point composes it twice: to find
    the run mode, then for the job).  Errors propagate (HYDRA_FULL_ERROR) so that main() prints them in one
    line."""
    if {"-h", "--help"} & set(args):
        print(help_text(command))
        return 0
    import hydra
    import yaml
    from hydra._internal.utils import get_args_parser

    from dpbench import config
    from dpbench.config import check_syntax, compose, normalize_overrides, sweep_jobs, validate

    dry_run = "--dry-run" in args
    args = [a for a in args if a != "--dry-run"]
    if dry_run and command != "sweep":
        raise ValueError("--dry-run is an option of sweep only")
    parser = get_args_parser()
    parser.error = OneLineParser.error.__get__(parser)  # a bad flag: one line, not Hydra's usage text
    flags, unknown = parser.parse_known_intermixed_args(args)
    if unknown:
        raise ValueError(f"unknown option(s) {' '.join(unknown)}; see `python -m dpbench {command} --help`")
    overrides = normalize_overrides(flags.overrides)
    check_syntax(overrides)
    config.check_user_configs()
    options = [a for a in args if a not in flags.overrides]  # Hydra's flags (its parser wants the overrides together)
    if not options:
        cfg = compose(overrides)
        timing.mark("composed")
        _run_task(command, cfg, dry_run)
        return 0
    config.store()
    if flags.multirun:  # every job's config, before the first job writes anything
        for job in sweep_jobs(overrides):
            validate(compose(job))

    @hydra.main(config_path=str(config.CONF_DIR), config_name="config", version_base="1.3")
    def task(cfg) -> None:
        from hydra.core.hydra_config import HydraConfig
        from hydra.types import RunMode

        job = HydraConfig.get()
        if job.mode == RunMode.MULTIRUN:
            print(f"[multirun job {job.job.num}] {' '.join(job.overrides.task)}")
        try:
            TASKS[command](validate(cfg), dry_run)
        except Exception as exc:
            raise _TaskError(exc) from exc

    saved = sys.argv, os.environ.get("HYDRA_FULL_ERROR")
    sys.argv = ["dpbench", *options, f"hydra.job.name={command}", *overrides, *config.searchpath()]
    os.environ["HYDRA_FULL_ERROR"] = "1"
    try:
        task()
    except _TaskError as err:
        raise err.args[0] from None
    except yaml.YAMLError as exc:  # a config file of yours that is not YAML
        raise config.ConfigError(config.yaml_error(exc)) from None
    except SystemExit as done:  # --help, --info, -sc: Hydra exits after printing
        return done.code if isinstance(done.code, int) else 0
    finally:
        sys.argv = saved[0]
        if saved[1] is None:
            os.environ.pop("HYDRA_FULL_ERROR")
        else:
            os.environ["HYDRA_FULL_ERROR"] = saved[1]
    return 0


def _run_task(command: str, cfg, dry_run: bool) -> None:
    """Validate the composed config and run the command on it.  A sweep's worker processes start first
    (runner.prestart): their imports then overlap the validation's, which import the algorithms, the datasets,
    scikit-learn and matplotlib, and the runner's set-up."""
    from dpbench.config import validate

    prestart = None
    if command == "sweep" and not dry_run:
        from dpbench.runner import prestart as _prestart

        prestart = _prestart.start(cfg.runner)
    ok = False
    try:
        cfg = validate(cfg)
        timing.mark("validated")
        TASKS[command](cfg, dry_run)
        ok = True
    finally:
        ready = prestart.finish(ok) if prestart else None
        if ready is not None:
            timing.mark("workers_ready", ready)


def help_text(command: str) -> str:
    """`<command> --help`: the help template of conf/config.yaml (hydra.help) filled in from files and the schema.
    Hydra's own help composes the config and copies its repository once per config group (seconds); this one
    imports neither the algorithms nor Hydra, so it prints at once."""
    import dataclasses
    import string

    from omegaconf import OmegaConf

    from dpbench import config

    base = OmegaConf.load(config.CONF_DIR / "config.yaml")
    template = OmegaConf.to_container(base.hydra.help)["template"].replace("${hydra.job.name}", command)
    groups = {group: [options] for group, options in REGISTRY_GROUPS.items()}
    for group in set(config.GROUPS) - set(REGISTRY_GROUPS):
        for option in config.options(group):  # nested ones (experiment=smoke/fig1) on a line of their own
            parent, _, name = f"{group}/{option}".rpartition("/")
            groups.setdefault(parent, []).append(name)
    lines = "".join(f"{group}: {', '.join(options)}\n" for group, options in sorted(groups.items()))
    schema = OmegaConf.to_yaml(dataclasses.asdict(config.Config()))
    return string.Template(template).substitute(APP_CONFIG_GROUPS=lines, CONFIG=schema)


REGISTRY_GROUPS = {  # made from the registries (config.shorthands), which --help does not import
    "algorithm": "NAME of a registered algorithm (`python -m dpbench algorithms` lists them)",
    "dataset": "NAME of a dataset or a group (e.g. openml_all), GROUP/NAME of a group's dataset (e.g. openml/cpu_act); "
               "`python -m dpbench data list` lists them"}
