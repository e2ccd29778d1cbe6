"""Parse log lines into records."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from logsum.errors import ParseError

LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")  # least to most severe

_LINE = re.compile(r"(?P<timestamp>\S+)\s+(?P<level>[A-Z]+)\s+(?P<source>[\w.-]+):\s?(?P<message>.*)")


@dataclass(frozen=True)
class Record:
    timestamp: str
    level: str
    source: str
    message: str


def parse_line(line: str) -> Record | None:
    """One record, or None for a blank or `#` comment line; ParseError when malformed."""
    stripped = line.strip()
    if not stripped or stripped.startswith("#"):
        return None
    match = _LINE.fullmatch(stripped)
    if match is None or match["level"] not in LEVELS:
        raise ParseError(f"malformed log line: {stripped!r}")
    return Record(match["timestamp"], match["level"], match["source"], match["message"])


def parse_lines(lines: Iterable[str]) -> list[Record]:
    """Every record of `lines`; a ParseError names the (1-based) line number."""
    records = []
    for number, line in enumerate(lines, start=1):
        try:
            record = parse_line(line)
        except ParseError as exc:
            raise ParseError(f"line {number}: {exc}") from None
        if record is not None:
            records.append(record)
    return records
