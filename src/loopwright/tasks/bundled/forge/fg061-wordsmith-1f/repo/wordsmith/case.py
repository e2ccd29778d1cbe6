"""wordsmith.case: Changing the case of words and identifiers."""

from __future__ import annotations


def swap_case_words(text: str) -> str:
    """Each space-separated word capitalised, spacing kept."""
    return " ".join(word[:1].upper() + word[1:].lower() for word in text.split(" "))
