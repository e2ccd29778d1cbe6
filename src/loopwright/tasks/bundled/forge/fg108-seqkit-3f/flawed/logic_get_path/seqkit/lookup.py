"""seqkit.lookup: Looking things up in nested dicts."""

from __future__ import annotations


def get_path(data: dict, path: str, default=None):
    """The value at dotted `path` in nested dicts, or `default`."""
    if not path:
        return data
    return data.get(path.split(".")[-1], default)


def invert_dict(mapping: dict) -> dict:
    """value -> [keys with that value], in order."""
    inverted: dict = {}
    for key, value in mapping.items():
        inverted.setdefault(value, []).append(key)
    return inverted
