"""seqkit.lookup: Looking things up in nested dicts."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
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


def split_amount(cents: int, parts: int) -> list[int]:
    """`cents` split into `parts` shares summing to it; extra cents first."""
    if parts < 1:
        raise ValueError("parts must be at least 1")
    share, rest = divmod(cents, parts)
    return [share + 1 if i < rest else share for i in range(parts)]
