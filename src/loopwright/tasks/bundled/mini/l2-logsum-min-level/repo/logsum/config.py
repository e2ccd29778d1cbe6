"""Summary options, validated from a plain mapping (e.g. a parsed TOML table)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from logsum.errors import ConfigError

OPTIONS = ("title", "top")


@dataclass(frozen=True)
class Config:
    """`title` heads the summary; `top` is how many sources the summary lists."""

    title: str = "Log summary"
    top: int = 3

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
        return cls(title=title.strip(), top=top)
