"""numkit.convert: Converting numbers to and from text."""

from __future__ import annotations


def parse_percent(text: str) -> float:
    """'12.5%' -> 0.125; ValueError unless it is a number followed by %."""
    stripped = text.strip()
    if not stripped.endswith("%"):
        raise ValueError(f"not a percentage: {text!r}")
    return float(stripped[:-1].strip()) / 100
