"""wordsmith.clean: Cleaning text: whitespace and prefixes."""

from __future__ import annotations

import re


def collapse_spaces(text: str) -> str:
    """Every run of whitespace becomes one space; the ends are stripped."""
    return " ".join(text.split())
