"""Summary options, validated from a plain mapping (e.g. a parsed TOML table)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from logsum.errors import ConfigError
from logsum.parser import LEVELS, normalize_level

OPTIONS = ("title", "top", "min_level")


@dataclass(frozen=True)
class Config:
    """Summary options.

    `title` heads the summary, `top` is how many sources it lists, and records less severe than
    `min_level` are left out.
    """

    title: str = "Log summary"
    top: int = 3
    min_level: str = "DEBUG"

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Config:
        """Build a Config from a mapping; ConfigError for unknown options or bad values."""
        unknown = sorted(set(raw) - set(OPTIONS))
        if unknown:
            raise ConfigError(f"unknown option(s): {', '.join(unknown)}")
        title = raw.get("title", cls.title)
        if not isinstance(title, str) or not title.strip():
            raise ConfigError(f"title must be a non-empty string, got {title!r}")
        top = raw.get("top", cls.top)
        if not isinstance(top, int) or isinstance(top, bool) or top < 1:
            raise ConfigError(f"top must be a positive integer, got {top!r}")
        min_level = raw.get("min_level", cls.min_level)
        try:
            min_level = normalize_level(min_level)
        except ValueError:
            raise ConfigError(
                f"min_level must be one of {', '.join(LEVELS)}, got {min_level!r}"
            ) from None
        return cls(title=title.strip(), top=top, min_level=min_level)
