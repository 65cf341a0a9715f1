"""Hydra plumbing of the experiment commands (sweep, plot, report): composing their config, its errors in one
line, and a user's ./conf."""

from __future__ import annotations

import os
import sys

from dpbench.cli.parsing import OneLineParser
from dpbench.cli.sweep import TASKS


class _TaskError(BaseException):
    """Carries a command's error through Hydra, which would print a line of its own for an Exception and,
    in a multirun, go on to the next job."""


def run(command: str, args: list[str]) -> int:
    """Run sweep/plot/report through Hydra's own entry point (@hydra.main), so --help, --cfg, --multirun and
    shell completion work.  Errors propagate (HYDRA_FULL_ERROR) so that main() prints them in one line."""
    import hydra
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
    options = [a for a in args if a not in flags.overrides]  # Hydra's parser wants the overrides together
    sys.argv = ["dpbench", *options, f"hydra.job.name={command}", *overrides, *config.searchpath()]
    os.environ["HYDRA_FULL_ERROR"] = "1"
    try:
        task()
    except _TaskError as err:
        raise err.args[0] from None
    except SystemExit as done:  # --help, --info, -sc: Hydra exits after printing
        return done.code if isinstance(done.code, int) else 0
    finally:
        sys.argv = saved[0]
        if saved[1] is None:
            os.environ.pop("HYDRA_FULL_ERROR")
        else:
            os.environ["HYDRA_FULL_ERROR"] = saved[1]
    return 0

