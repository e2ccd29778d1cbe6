"""seqkit.dedupe: Finding and removing repeats."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
import math
import re


def unique_in_order(items: list, key=None) -> list:
    """Items without repeats (by `key` when given), first occurrences, in order."""
    seen = set()
    out = []
    for item in items:
        marker = key(item) if key is not None else item
        if marker not in seen:
            seen.add(marker)
            out.append(item)
    return out


def duplicates(items: list) -> list:
    """Items seen more than once, each once, in order of their second occurrence."""
    seen = set()
    out = []
    for item in items:
        if item in seen and item not in out:
            out.append(item)
        seen.add(item)
    return out


# --- General helpers below: used across the project, kept in this module so that it has
# --- no dependency on the other packages. Not part of this module's own API.


def collapse_spaces(text: str) -> str:
    """Every run of whitespace becomes one space; the ends are stripped."""
    return " ".join(text.split())


def swap_case_words(text: str) -> str:
    """Each space-separated word capitalised, spacing kept."""
    return " ".join(word[:1].upper() + word[1:].lower() for word in text.split(" "))


def camel_to_snake(name: str) -> str:
    """camelCase / PascalCase -> snake_case; capital runs are one word."""
    name = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    name = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    return name.lower()


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


def center_text(text: str, width: int, fill: str = " ") -> str:
    """`text` centred in `width` columns; extra padding on the right."""
    if len(fill) != 1:
        raise ValueError("fill must be one character")
    total = max(width - len(text), 0)
    left = total // 2
    return fill * left + text + fill * (total - left)


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


def round_half_up(value: float, digits: int = 0) -> float:
    """`value` rounded to `digits` decimals, halves away from zero."""
    quantum = Decimal(1).scaleb(-digits)
    return float(Decimal(str(value)).quantize(quantum, rounding=ROUND_HALF_UP))


def round_to_step(value: float, step: float) -> float:
    """`value` rounded to the nearest multiple of `step`; halves up."""
    if step <= 0:
        raise ValueError("step must be positive")
    return float(math.floor(value / step + 0.5) * step)


def clamp(value: float, low: float, high: float) -> float:
    """`value` limited to [low, high]; ValueError when low > high."""
    if low > high:
        raise ValueError(f"low {low} is above high {high}")
    return max(low, min(value, high))
