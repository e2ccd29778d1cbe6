"""The user's settings file, where `EngineSettings` live between runs.

The file is `$LOOPWRIGHT_SETTINGS` when that is set, else `~/.loopwright/settings.yaml`:

```yaml
schema_version: 1
engine:
  default_loop_type: react
  loop_complexity_overrides:
    complex: plan_execute
```

`loopwright ab apply SCOREBOARD` writes it (docs/ab.md); `load_engine_settings()` reads it
for whoever builds a Runner.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from loopwright.errors import ConfigError
from loopwright.runtime._loops_plan import EngineSettings

__all__ = [
    "SETTINGS_ENV",
    "UserSettings",
    "load_engine_settings",
    "load_user_settings",
    "user_settings_path",
]

SETTINGS_ENV = "LOOPWRIGHT_SETTINGS"
_FIX = "write `schema_version: 1` and an `engine:` mapping as in docs/ab.md"


class UserSettings(BaseModel):
    """The settings file's contents (schema_version 1)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: Literal[1] = 1
    engine: EngineSettings = Field(default_factory=EngineSettings)


def user_settings_path() -> Path:
    """`$LOOPWRIGHT_SETTINGS` when set and non-empty, else `~/.loopwright/settings.yaml`."""
    explicit = os.environ.get(SETTINGS_ENV, "").strip()
    return (
        Path(explicit).expanduser() if explicit else Path.home() / ".loopwright" / "settings.yaml"
    )


def load_user_settings(path: Path | None = None) -> UserSettings:
    """The settings at `path` (default: `user_settings_path()`).

    A missing file at the default location means "nothing applied yet": the defaults. A
    missing file that was named explicitly (`path` or `$LOOPWRIGHT_SETTINGS`) is a
    ConfigError, as is an unparsable or invalid one (no silent default)."""
    named = path is not None or bool(os.environ.get(SETTINGS_ENV, "").strip())
    where = path if path is not None else user_settings_path()
    if not where.is_file():
        if named:
            raise ConfigError(
                f"settings file {where} does not exist",
                fix=f"create it, or unset {SETTINGS_ENV} to use ~/.loopwright/settings.yaml",
            )
        return UserSettings()
    try:
        raw = yaml.safe_load(where.read_text(encoding="utf-8")) or {}
        return UserSettings.model_validate(raw)
    except yaml.YAMLError as exc:
        raise ConfigError(
            f"settings file {where} cannot be parsed", got=str(exc), fix=_FIX
        ) from None
    except ValidationError as exc:
        raise ConfigError.invalid(f"settings file {where}", exc, fix=_FIX) from None


def load_engine_settings(path: Path | None = None) -> EngineSettings:
    """The `engine` section of the user's settings (see `load_user_settings`), ready for
    `Runner(..., engine=...)`; the Runner checks its loops against its registries."""
    return load_user_settings(path).engine
