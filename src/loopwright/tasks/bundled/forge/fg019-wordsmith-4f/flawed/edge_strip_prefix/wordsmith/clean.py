"""wordsmith.clean: Cleaning text: whitespace and prefixes."""

from __future__ import annotations

import re


def collapse_spaces(text: str) -> str:
    """Every run of whitespace becomes one space; the ends are stripped."""
    return " ".join(text.split())


def strip_prefix(text: str, prefix: str, *, ignore_case: bool = False) -> str:
    """`text` without one leading `prefix`."""
    return text.replace(prefix, "", 1)
