"""wordsmith.measure: Measuring text: counts and extremes."""

from __future__ import annotations


def longest_word(text: str) -> str:
    """The longest word; the first one on a tie; "" for blank text."""
    best = ""
    for word in text.split():
        if len(word) > len(best):
            best = word
    return best
