"""Compose Hydra configs from conf/ and turn composition errors into one clear message."""

from __future__ import annotations

import os
from pathlib import Path

CONF_DIR = Path(os.environ.get("DPBENCH_CONF_DIR", Path(__file__).resolve().parent.parent / "conf"))
DEFAULT_EXPERIMENT = "quickstart"


class ConfigError(ValueError):
    """A config could not be composed (unknown group option or key, bad value)."""


def with_default_experiment(overrides: list[str]) -> list[str]:
    """The embedded default: without an experiment override, run the offline quickstart."""
    if any(o.lstrip("+~").startswith("experiment=") for o in overrides):
        return list(overrides)
    return [f"+experiment={DEFAULT_EXPERIMENT}", *overrides]


def compose(overrides: list[str]):
    """The resolved config (an OmegaConf DictConfig, struct mode: unknown keys are errors)."""
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    if not CONF_DIR.is_dir():
        raise ConfigError(f"config directory {CONF_DIR} not found (set DPBENCH_CONF_DIR)")
    try:
        with initialize_config_dir(config_dir=str(CONF_DIR), version_base=None):
            return hydra_compose("config", overrides=with_default_experiment(overrides))
    except (HydraException, OmegaConfBaseException) as exc:
        msg = str(exc).strip()
        if "experiment" in msg and "not found" in msg.lower():
            names = sorted(p.stem for p in (CONF_DIR / "experiment").glob("*.yaml"))
            msg += f"\nKnown experiments: {', '.join(names)}"
        raise ConfigError(msg) from None


def to_container(cfg) -> dict:
    from omegaconf import OmegaConf

    return OmegaConf.to_container(cfg, resolve=True)


def experiment_names() -> list[str]:
    return sorted(p.stem for p in (CONF_DIR / "experiment").glob("*.yaml"))
