"""Model tiers (small, medium, large) and roles (agent, meta) mapped to model names.

A models config file (YAML) looks like:

```yaml
schema_version: 1
tiers:
  small: openai/gpt-4o-mini
  medium: anthropic/claude-sonnet-4-5
  large: anthropic/claude-opus-4-1
roles:
  agent: medium          # a tier or a model name
  meta: anthropic/claude-sonnet-4-5
prices:                  # USD per million tokens, for models the built-in table lacks
  openai/qwen-local: {input_per_mtok: 0.2, output_per_mtok: 0.8}
```

`--tier small=NAME` (and `--tier meta=NAME` for a role) overrides a file entry.
`resolve_model` turns an AgentNode's `model` field (a tier, a role or a model name) into the
LiteLLM model name to call.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Literal, get_args

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from loopwright._caller import spoken
from loopwright.errors import ConfigError
from loopwright.models._pricing import DEFAULT_PRICES, Price, PriceTable

__all__ = [
    "ROLES",
    "TIERS",
    "ModelPrice",
    "ModelsConfig",
    "load_models_config",
    "parse_tier_override",
    "resolve_model",
]

Tier = Literal["small", "medium", "large"]
ModelRole = Literal["agent", "meta"]
TIERS: tuple[str, ...] = get_args(Tier)
ROLES: tuple[str, ...] = get_args(ModelRole)
_FIX = "write tiers/roles as in docs/models.md, e.g. `tiers: {small: openai/gpt-4o-mini}`"


class ModelPrice(BaseModel):
    """A user's price of one model, USD per million tokens (`cached_per_mtok` defaults to the
    input price)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    input_per_mtok: float = Field(ge=0)
    output_per_mtok: float = Field(ge=0)
    cached_per_mtok: float | None = Field(default=None, ge=0)


class ModelsConfig(BaseModel):
    """Tiers and roles to model names (a role may name a tier; unset entries are absent), and
    `prices` of models the built-in price table does not know (a local server, a new model)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: Literal[1] = 1
    tiers: dict[Tier, str] = Field(default_factory=dict)
    roles: dict[ModelRole, str] = Field(default_factory=dict)
    prices: dict[str, ModelPrice] = Field(default_factory=dict)

    def price_table(self, base: PriceTable = DEFAULT_PRICES) -> PriceTable:
        """`base` with `prices` added (a user price wins), versioned `BASE+user-HASH` (HASH: the
        first 8 hex digits of the prices' sha256); `base` itself when there are none."""
        if not self.prices:
            return base
        data = {name: p.model_dump() for name, p in sorted(self.prices.items())}
        digest = hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:8]
        added = {
            name: Price(
                p.input_per_mtok,
                p.output_per_mtok,
                p.input_per_mtok if p.cached_per_mtok is None else p.cached_per_mtok,
                note="the user's price (models config)",
            )
            for name, p in self.prices.items()
        }
        return PriceTable(f"{base.version}+user-{digest}", {**base.prices, **added})

    def with_overrides(self, overrides: Sequence[str]) -> ModelsConfig:
        """This config with each `KEY=NAME` override applied (KEY a tier or a role)."""
        tiers: dict[str, str] = {str(k): v for k, v in self.tiers.items()}
        roles: dict[str, str] = {str(k): v for k, v in self.roles.items()}
        for text in overrides:
            key, name = parse_tier_override(text)
            (tiers if key in TIERS else roles)[key] = name
        return ModelsConfig.model_validate({"tiers": tiers, "roles": roles, "prices": self.prices})


def parse_tier_override(text: str) -> tuple[str, str]:
    """`"small=openai/gpt-4o-mini"` -> ("small", "openai/gpt-4o-mini"). Raises ConfigError
    for a missing `=`, an empty name, or a key that is neither a tier nor a role."""
    key, sep, name = text.partition("=")
    key, name = key.strip(), name.strip()
    if not sep or not name or key not in (*TIERS, *ROLES):
        raise ConfigError(
            f"bad tier override {text!r}",
            got=text,
            fix=f"write KEY=MODEL with KEY one of {', '.join((*TIERS, *ROLES))}, "
            "e.g. --tier small=openai/gpt-4o-mini",
        )
    return key, name


RUN_SETTINGS_SECTIONS = ("evolve",)
"""Sections of a `--config` file that hold a run's settings, not models (read by the loop that
owns them: `evolve`, search.run_settings)."""


def load_models_config(path: Path | None, overrides: Sequence[str] = ()) -> ModelsConfig:
    """The config in the YAML file at `path` (None: an empty config), with `overrides` applied.
    Raises ConfigError when the file is missing (no silent default), unparsable or invalid."""
    config = ModelsConfig()
    if path is not None:
        if not path.is_file():
            raise ConfigError(f"models config {path} does not exist", fix=_FIX)
        try:
            raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
            if isinstance(raw, dict):  # run settings may sit beside the models (docs/evolve.md)
                raw = {k: v for k, v in raw.items() if k not in RUN_SETTINGS_SECTIONS}
            config = ModelsConfig.model_validate(raw)
        except yaml.YAMLError as exc:
            raise ConfigError(
                f"models config {path} cannot be parsed", got=str(exc), fix=_FIX
            ) from None
        except ValidationError as exc:
            raise ConfigError.invalid(f"models config {path}", exc, fix=_FIX) from None
    return config.with_overrides(overrides)


def resolve_model(name_or_tier: str, config: ModelsConfig, default: str | None = None) -> str:
    """The model name for an AgentNode's `model` field: a tier -> its configured name; a role
    -> its name (which may itself be a tier); anything else is a model name, returned as is.

    A tier or role that is not configured resolves to `default` when one is given, and raises
    ConfigError otherwise. Deterministic.
    """
    key = name_or_tier.strip()
    if key in ROLES:
        role_value = {str(k): v for k, v in config.roles.items()}.get(key)
        if role_value is not None:
            return resolve_model(role_value, config, default) if role_value in TIERS else role_value
    elif key in TIERS:
        tier_value = {str(k): v for k, v in config.tiers.items()}.get(key)
        if tier_value is not None:
            return tier_value
    else:
        return key
    if default is not None:
        return default
    kind = "role" if key in ROLES else "tier"
    raise ConfigError(
        f"the {kind} {key!r} has no model configured",
        got=f"{kind}s configured: {', '.join(config.tiers if kind == 'tier' else config.roles) or 'none'}",
        fix=spoken(
            f"set ModelsConfig({kind}s={{{key!r}: MODEL}}), or give a default model",
            f"pass --tier {key}=MODEL, or set it under {kind}s: in the models config file",
        ),
    )
