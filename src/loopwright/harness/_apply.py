"""`ab apply`: write a scoreboard's promotion into the user's settings file.

The file and its format belong to the runtime (`runtime/_user_settings.py`): `$LOOPWRIGHT_SETTINGS`
or `~/.loopwright/settings.yaml`, `engine.default_loop_type` and
`engine.loop_complexity_overrides`. Applying replaces both values (the overrides as a whole:
the scoreboard is the full evidence) and leaves the rest of the file's settings as they were.
"""

from __future__ import annotations

from pathlib import Path

import yaml
from pydantic import ValidationError

from loopwright._fs import atomic_write
from loopwright.errors import ConfigError, UsageError
from loopwright.harness._provenance import Provenance, staleness
from loopwright.harness._scoreboard import Scoreboard
from loopwright.runtime import (
    EngineSettings,
    Registries,
    UserSettings,
    load_user_settings,
    runtime_catalog,
    user_settings_path,
)

__all__ = ["NothingToApply", "apply_promotion", "read_scoreboard"]


class NothingToApply(UsageError):
    """The scoreboard recommends nothing: no loop cleared the gate anywhere."""


def read_scoreboard(path: Path) -> Scoreboard:
    """A scoreboard.json, validated. ConfigError when missing or invalid."""
    if not path.is_file():
        raise ConfigError(f"scoreboard {path} does not exist", fix="run `loopwright ab score DIR`")
    try:
        return Scoreboard.model_validate_json(path.read_text(encoding="utf-8"))
    except ValidationError as exc:
        raise ConfigError(f"{path} is not a valid scoreboard", got=str(exc)[:2000]) from None


def apply_promotion(
    scoreboard: Scoreboard,
    current: Provenance,
    *,
    settings: Path | None = None,
    allow_stale: bool = False,
    registries: Registries | None = None,
) -> tuple[Path, EngineSettings]:
    """Write the promotion of `scoreboard` into the settings file (default:
    `user_settings_path()`); return the file and the engine settings written.

    Refuses (UsageError) a simulated or incomplete scoreboard, a stale one unless
    `allow_stale`, and an empty recommendation (NothingToApply); ConfigError when a promoted
    loop is unknown to the runtime or the existing file is invalid. Writes atomically."""
    _check_applicable(scoreboard, current, allow_stale)
    promotion = scoreboard.promotion
    engine = EngineSettings.model_validate(
        {
            "default_loop_type": promotion.default_loop_type,
            "loop_complexity_overrides": promotion.loop_complexity_overrides,
        }
    )
    engine.check(runtime_catalog(registries))
    path = settings if settings is not None else user_settings_path()
    existing = load_user_settings(path) if path.is_file() else UserSettings()
    updated = existing.model_copy(update={"engine": engine})
    header = (
        f"# engine settings written by `loopwright ab apply` from a scoreboard recorded at "
        f"commit {scoreboard.provenance.commit or 'unknown'} (manifest "
        f"{scoreboard.manifest_digest[:12]})\n"
    )
    body = yaml.safe_dump(updated.model_dump(mode="json"), sort_keys=False)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, header + body)
    return path, engine


def _check_applicable(sb: Scoreboard, current: Provenance, allow_stale: bool) -> None:
    if sb.simulated:
        raise UsageError(
            "this scoreboard was measured with simulated models: it says nothing about real ones",
            fix="record with --gateway-base-url against real models, then apply that scoreboard",
        )
    if not sb.complete:
        raise UsageError(
            f"this scoreboard is incomplete ({sb.runs_recorded} of {sb.run_count} runs)",
            fix="finish the recording: run `loopwright ab record` again with the same --out",
        )
    stale = staleness(sb.provenance, current)
    if stale is not None and not allow_stale:
        raise UsageError(
            f"the scoreboard is {stale}",
            fix="re-record (`loopwright ab record`), or pass --allow-stale to apply it anyway",
        )
    if sb.promotion.empty:
        raise NothingToApply(
            f"nothing to apply: {sb.promotion.note}",
            fix="no loop is promoted; the settings are left as they are",
        )
