"""numkit.ranges: Numeric ranges and bounds."""

from __future__ import annotations

import re


def clamp(value: float, low: float, high: float) -> float:
    """`value` limited to [low, high]; ValueError when low > high."""
    return max(low, min(value, high))


def overlap(a: tuple[int, int], b: tuple[int, int]) -> int:
    """How many integers the half-open ranges a and b share."""
    return max(0, min(a[1], b[1]) - max(a[0], b[0]))


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


def group_by(items: list, key) -> dict:
    """key(item) -> [items], keys in first-seen order, items in order."""
    groups: dict = {}
    for item in items:
        groups.setdefault(key(item), []).append(item)
    return groups


def pairwise_diffs(values: list[float]) -> list[float]:
    """Consecutive differences, later minus earlier."""
    return [b - a for a, b in zip(values, values[1:])]


def moving_average(values: list[float], window: int) -> list[float]:
    """Mean of each run of `window` consecutive values."""
    if window < 1:
        raise ValueError("window must be at least 1")
    return [sum(values[i : i + window]) / window for i in range(len(values) - window + 1)]


def get_path(data: dict, path: str, default=None):
    """The value at dotted `path` in nested dicts, or `default`."""
    if not path:
        return data
    node = data
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return default
        node = node[part]
    return node


def invert_dict(mapping: dict) -> dict:
    """value -> [keys with that value], in order."""
    inverted: dict = {}
    for key, value in mapping.items():
        inverted.setdefault(value, []).append(key)
    return inverted
