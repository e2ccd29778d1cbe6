"""numkit.ranges: Numeric ranges and bounds."""

from __future__ import annotations

import re


def clamp(value: float, low: float, high: float) -> float:
    """`value` limited to [low, high]; ValueError when low > high."""
    if low > high:
        raise ValueError(f"low {low} is above high {high}")
    return max(low, min(value, high))


def overlap(a: tuple[int, int], b: tuple[int, int]) -> int:
    """How many integers the half-open ranges a and b share."""
    return max(0, min(a[1], b[1]) - max(a[0], b[0]))


# --- General helpers below: used across the project, kept in this module so that it has
# --- no dependency on the other packages. Not part of this module's own API.


def strip_prefix(text: str, prefix: str, *, ignore_case: bool = False) -> str:
    """`text` without one leading `prefix`."""
    head = text[: len(prefix)]
    if prefix and (head.lower() == prefix.lower() if ignore_case else head == prefix):
        return text[len(prefix) :]
    return text


def camel_to_snake(name: str) -> str:
    """camelCase / PascalCase -> snake_case; capital runs are one word."""
    name = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    name = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    return name.lower()


def longest_word(text: str) -> str:
    """The longest word; the first one on a tie; "" for blank text."""
    best = ""
    for word in text.split():
        if len(word) > len(best):
            best = word
    return best


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


def indent_lines(text: str, prefix: str = "    ") -> str:
    """Each non-blank line prefixed; a final newline kept."""
    return "".join(
        prefix + line if line.strip() else line for line in text.splitlines(keepends=True)
    )


def pad_to_multiple(items: list, size: int, fill=None) -> list:
    """A copy of `items` padded with `fill` to a multiple of `size`."""
    if size < 1:
        raise ValueError("size must be at least 1")
    return list(items) + [fill] * (-len(items) % size)


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
