"""numkit.stats: Summary statistics over lists of numbers."""

from __future__ import annotations

import re


def mean_or_none(values: list[float]) -> float | None:
    """The mean of the non-None values, or None when there are none."""
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def median(values: list[float]) -> float:
    """The median; the mean of the middle two for an even count; ValueError when empty."""
    if not values:
        raise ValueError("median of an empty list")
    ordered = sorted(values)
    mid = len(ordered) // 2
    if len(ordered) % 2:
        return float(ordered[mid])
    return (ordered[mid - 1] + ordered[mid]) / 2


# --- General helpers below: used across the project, kept in this module so that it has
# --- no dependency on the other packages. Not part of this module's own API.


def collapse_spaces(text: str) -> str:
    """Every run of whitespace becomes one space; the ends are stripped."""
    return " ".join(text.split())


def swap_case_words(text: str) -> str:
    """Each space-separated word capitalised, spacing kept."""
    return " ".join(word[:1].upper() + word[1:].lower() for word in text.split(" "))


def count_vowels(text: str, *, include_y: bool = False) -> int:
    """How many vowels `text` holds (y too when `include_y`)."""
    vowels = "aeiouy" if include_y else "aeiou"
    return sum(1 for ch in text.lower() if ch in vowels)


def longest_word(text: str) -> str:
    """The longest word; the first one on a tie; "" for blank text."""
    best = ""
    for word in text.split():
        if len(word) > len(best):
            best = word
    return best


def split_pairs(text: str, sep: str = ",") -> dict[str, str]:
    """'k=v,k2=v2' -> dict; empty items skipped; ValueError on an item without '='."""
    pairs = {}
    for item in text.split(sep):
        if not item.strip():
            continue
        if "=" not in item:
            raise ValueError(f"not a key=value item: {item!r}")
        key, value = item.split("=", 1)
        pairs[key.strip()] = value.strip()
    return pairs


def split_sentences(text: str) -> list[str]:
    """Sentences ending in . ! or ?, marks kept; a trailing fragment kept."""
    parts = re.findall(r"[^.!?]+[.!?]+|[^.!?]+$", text)
    return [p.strip() for p in parts if p.strip()]


def center_text(text: str, width: int, fill: str = " ") -> str:
    """`text` centred in `width` columns; extra padding on the right."""
    if len(fill) != 1:
        raise ValueError("fill must be one character")
    total = max(width - len(text), 0)
    left = total // 2
    return fill * left + text + fill * (total - left)


def chunked(items: list, size: int) -> list[list]:
    """`items` in consecutive chunks of `size`; the last may be shorter."""
    if size < 1:
        raise ValueError("size must be at least 1")
    return [items[i : i + size] for i in range(0, len(items), size)]


def group_by(items: list, key) -> dict:
    """key(item) -> [items], keys in first-seen order, items in order."""
    groups: dict = {}
    for item in items:
        groups.setdefault(key(item), []).append(item)
    return groups


def count_by(items: list, key) -> dict:
    """key(item) -> how many items have it, keys in first-seen order."""
    counts: dict = {}
    for item in items:
        k = key(item)
        counts[k] = counts.get(k, 0) + 1
    return counts


def pairwise_diffs(values: list[float]) -> list[float]:
    """Consecutive differences, later minus earlier."""
    return [b - a for a, b in zip(values, values[1:])]


def moving_average(values: list[float], window: int) -> list[float]:
    """Mean of each run of `window` consecutive values."""
    if window < 1:
        raise ValueError("window must be at least 1")
    return [sum(values[i : i + window]) / window for i in range(len(values) - window + 1)]
