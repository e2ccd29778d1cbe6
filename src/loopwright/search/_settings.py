"""The evolve settings file: every `EvolveConfig` setting in one YAML file, beside the models.

`loopwright evolve --config FILE` (and `outer-loop calibrate`) reads FILE as the models config
(tiers, roles, prices) and, in its `evolve:` section, the run's settings: any EvolveConfig
field, nested ones as mappings (`budgets: {max_usd: 2}`), including those with no flag
(`novelty_threshold`, `operators`, `descriptors`, `designs`, `reflection`). Flags given on the
command line override the file; what neither sets is EvolveConfig's default (one place). The
models (`model`, `models`, `api_base`) come from the models part of the file and the model
flags, so the section may not hold them. docs/evolve.md ("The settings file") shows one.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from loopwright.errors import ConfigError
from loopwright.search._config import EvolveConfig, parse_config
from loopwright.store import read_yaml_mapping

__all__ = ["SETTINGS_SECTION", "merged_config", "run_settings"]

SETTINGS_SECTION = "evolve"
_MODELS_FIELDS = ("model", "models", "api_base")


def run_settings(path: Path | None) -> dict[str, Any]:
    """The `evolve:` section of the settings file at `path`; {} when `path` is None or the file
    has no such section (a models-only file). ConfigError when the file is missing or not a
    YAML mapping, when the section is not a mapping, or when it names the models."""
    if path is None:
        return {}
    data = read_yaml_mapping(path)
    if data is None:
        raise ConfigError(f"settings file {path} does not exist", fix="check the --config path")
    section = data.get(SETTINGS_SECTION)
    if section is None:
        return {}
    if not isinstance(section, dict):
        raise ConfigError(
            f"the {SETTINGS_SECTION}: section of {path} is not a mapping",
            got=type(section).__name__,
            fix="write the settings as `evolve: {population: 8, budgets: {max_usd: 2}}`",
        )
    named = [k for k in _MODELS_FIELDS if k in section]
    if named:
        raise ConfigError(
            f"the {SETTINGS_SECTION}: section of {path} names the models",
            got=", ".join(named),
            fix="give the models as tiers/roles beside the section, or with --model/--api-base",
        )
    return dict(section)


def merged_config(file: Mapping[str, Any], flags: Mapping[str, Any]) -> EvolveConfig:
    """The config of a run: `flags` (the settings given on the command line, nested like the
    config) merged over `file` (the settings file's section), field by field; what neither
    sets is EvolveConfig's default. ConfigError naming the bad field otherwise."""
    return parse_config(_deep_merge(dict(file), flags))


def _deep_merge(base: dict[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = _deep_merge(dict(out[key]), value)
        else:
            out[key] = value
    return out
