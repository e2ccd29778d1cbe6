"""wordsmith.case: Changing the case of words and identifiers."""

from __future__ import annotations

import re


def swap_case_words(text: str) -> str:
    """Each space-separated word capitalised, spacing kept."""
    return " ".join(word[:1].upper() + word[1:].lower() for word in text.split(" "))


def camel_to_snake(name: str) -> str:
    """camelCase / PascalCase -> snake_case; capital runs are one word."""
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()
