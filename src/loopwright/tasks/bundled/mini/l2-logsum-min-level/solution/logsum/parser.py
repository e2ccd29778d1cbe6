"""Parse log lines into records."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from logsum.errors import ParseError

LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")  # least to most severe
_ALIASES = {"WARN": "WARNING"}

_LINE = re.compile(r"(?P<timestamp>\S+)\s+(?P<level>[A-Z]+)\s+(?P<source>[\w.-]+):\s?(?P<message>.*)")


@dataclass(frozen=True)
class Record:
    timestamp: str
    level: str
    source: str
    message: str


def normalize_level(name: object) -> str:
    """The canonical level for `name`: case and surrounding spaces ignored, WARN means WARNING.

    ValueError for anything that is not a level name.
    """
    if not isinstance(name, str):
        raise ValueError(f"not a level name: {name!r}")
    level = name.strip().upper()
    level = _ALIASES.get(level, level)
    if level not in LEVELS:
        raise ValueError(f"unknown level {name!r} (levels: {', '.join(LEVELS)})")
    return level


def level_rank(level: str) -> int:
    """0 for DEBUG up to 3 for ERROR; accepts any spelling `normalize_level` accepts."""
    return LEVELS.index(normalize_level(level))


def at_least(record: Record, min_level: str) -> bool:
    """Whether `record` is at least as severe as `min_level`."""
    return level_rank(record.level) >= level_rank(min_level)


def parse_line(line: str) -> Record | None:
    """One record, or None for a blank or `#` comment line; ParseError when malformed."""
    stripped = line.strip()
    if not stripped or stripped.startswith("#"):
        return None
    match = _LINE.fullmatch(stripped)
    if match is None or match["level"] not in LEVELS:
        raise ParseError(f"malformed log line: {stripped!r}")
    return Record(match["timestamp"], match["level"], match["source"], match["message"])


def parse_lines(lines: Iterable[str], min_level: str = "DEBUG") -> list[Record]:
    """The records of `lines` at least as severe as `min_level`.

    A ParseError names the (1-based) line number; malformed lines raise whatever `min_level` is.
    """
    min_level = normalize_level(min_level)
    records = []
    for number, line in enumerate(lines, start=1):
        try:
            record = parse_line(line)
        except ParseError as exc:
            raise ParseError(f"line {number}: {exc}") from None
        if record is not None and at_least(record, min_level):
            records.append(record)
    return records
