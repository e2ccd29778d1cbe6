"""Word frequencies."""

import re
from collections import Counter

_WORD = re.compile(r"[A-Za-z0-9']+")


def top_words(text: str, n: int) -> list[tuple[str, int]]:
    """The n most frequent words of text, as (word, count), most frequent first."""
    if n <= 0:
        return []
    counts = Counter(_WORD.findall(text))
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return ranked[:n]
