"""Render the text summary of a list of records."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from logsum.config import Config
from logsum.parser import LEVELS, Record, at_least, parse_lines


def summarize(records: Iterable[Record], config: Config) -> str:
    """The title (underlined), counts per level, then the `config.top` busiest sources.

    Only records at least as severe as `config.min_level` count; when that is not DEBUG, a
    `min level:` line follows the title. Levels appear in severity order and only when
    present; sources by count, then by name.
    """
    records = [r for r in records if at_least(r, config.min_level)]
    lines = [config.title, "=" * len(config.title)]
    if config.min_level != LEVELS[0]:
        lines.append(f"min level: {config.min_level}")
    levels = Counter(r.level for r in records)
    counts = [f"{level}={levels[level]}" for level in LEVELS if levels[level]]
    lines.append("levels: " + (", ".join(counts) if counts else "none"))
    sources = Counter(r.source for r in records)
    busiest = sorted(sources.items(), key=lambda item: (-item[1], item[0]))[: config.top]
    if busiest:
        lines.append("top sources:")
        lines.extend(f"  {source}: {count}" for source, count in busiest)
    return "\n".join(lines) + "\n"


def summarize_text(text: str, config: Config) -> str:
    """Parse `text` (one log line per line) and summarise the records at `config.min_level` up."""
    return summarize(parse_lines(text.splitlines(), config.min_level), config)
