"""numkit.convert: Converting numbers to and from text."""

from __future__ import annotations

import re


def parse_percent(text: str) -> float:
    """'12.5%' -> 0.125; ValueError unless it is a number followed by %."""
    stripped = text.strip()
    if not stripped.endswith("%"):
        raise ValueError(f"not a percentage: {text!r}")
    return float(stripped[:-1].strip()) / 100


def to_base(number: int, base: int = 2) -> str:
    """`number` written in `base` (2..36), lower-case digits."""
    if not 2 <= base <= 36:
        raise ValueError(f"base must be 2..36, got {base}")
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    if number == 0:
        return "0"
    sign, number = ("-", -number) if number < 0 else ("", number)
    out = []
    while number:
        number, rest = divmod(number, base)
        out.append(digits[rest])
    return sign + "".join(reversed(out))


# --- General helpers below: used across the project, kept in this module so that it has
# --- no dependency on the other packages. Not part of this module's own API.


def strip_prefix(text: str, prefix: str, *, ignore_case: bool = False) -> str:
    """`text` without one leading `prefix`."""
    head = text[: len(prefix)]
    if prefix and (head.lower() == prefix.lower() if ignore_case else head == prefix):
        return text[len(prefix) :]
    return text


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


def pairwise_diffs(values: list[float]) -> list[float]:
    """Consecutive differences, later minus earlier."""
    return [b - a for a, b in zip(values, values[1:])]


def invert_dict(mapping: dict) -> dict:
    """value -> [keys with that value], in order."""
    inverted: dict = {}
    for key, value in mapping.items():
        inverted.setdefault(value, []).append(key)
    return inverted
