"""seqkit.lookup: Looking things up in nested dicts."""

from __future__ import annotations

import math
import re
from seqkit._compat import text_type


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


def indent_lines(text: str, prefix: str = "    ") -> str:
    """Each non-blank line prefixed; a final newline kept."""
    return "".join(
        prefix + line if line.strip() else line for line in text.splitlines(keepends=True)
    )


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


def round_to_step(value: float, step: float) -> float:
    """`value` rounded to the nearest multiple of `step`; halves up."""
    if step <= 0:
        raise ValueError("step must be positive")
    return float(math.floor(value / step + 0.5) * step)


def overlap(a: tuple[int, int], b: tuple[int, int]) -> int:
    """How many integers the half-open ranges a and b share."""
    return max(0, min(a[1], b[1]) - max(a[0], b[0]))


def format_cents(cents: int, symbol: str = "$") -> str:
    """123456 -> '$1,234.56'; '-$5.00' for negatives."""
    sign = "-" if cents < 0 else ""
    dollars, rest = divmod(abs(cents), 100)
    return f"{sign}{symbol}{dollars:,}.{rest:02d}"
