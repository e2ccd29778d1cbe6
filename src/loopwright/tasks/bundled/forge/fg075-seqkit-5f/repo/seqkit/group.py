"""seqkit.group: Grouping and counting by key."""

from __future__ import annotations


def group_by(items: list, key) -> dict:
    """key(item) -> [items], keys in first-seen order, items in order."""
    groups: dict = {}
    for item in items:
        groups.setdefault(key(item), []).append(item)
    return groups
