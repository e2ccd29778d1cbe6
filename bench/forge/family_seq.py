"""The `seqkit` family: small helpers over lists and dicts."""

from __future__ import annotations

from ops import Family, Op

OPS = (
    Op(
        name="chunked",
        module="chunks",
        sig="def chunked(items: list, size: int) -> list[list]:",
        does="splits `items` into consecutive lists of `size` items (`chunked([1, 2, 3, 4], 2)` is `[[1, 2], [3, 4]]`)",
        edges="The last chunk may be shorter; an empty list gives `[]`; `size` below 1 raises `ValueError`.",
        hint="The tail and nonsensical sizes need a defined answer.",
        gold='''
def chunked(items: list, size: int) -> list[list]:
    """`items` in consecutive chunks of `size`; the last may be shorter."""
    if size < 1:
        raise ValueError("size must be at least 1")
    return [items[i : i + size] for i in range(0, len(items), size)]
''',
        edge_flaw='''
def chunked(items: list, size: int) -> list[list]:
    """`items` in consecutive chunks of `size`; the last may be shorter."""
    return [items[i : i + size] for i in range(0, len(items) - len(items) % size, size)]
''',
        logic_flaw='''
def chunked(items: list, size: int) -> list[list]:
    """`items` in consecutive chunks of `size`; the last may be shorter."""
    if size < 1:
        raise ValueError("size must be at least 1")
    return [items[i::size] for i in range(size)]
''',
        main=(
            ("[1, 2, 3, 4], 2", "[[1, 2], [3, 4]]"),
            ("list('abcdef'), 3", "[['a', 'b', 'c'], ['d', 'e', 'f']]"),
        ),
        edge=(
            ("[1, 2, 3, 4, 5], 2", "[[1, 2], [3, 4], [5]]"),
            ("[], 3", "[]"),
            ("[1], 0", "raises:ValueError"),
        ),
    ),
    Op(
        name="pad_to_multiple",
        module="chunks",
        sig="def pad_to_multiple(items: list, size: int, fill=None) -> list:",
        does="returns a copy of `items` padded at the end with `fill` until its length is a multiple of `size`",
        edges="A list whose length is already a multiple gets no padding (an empty list stays empty); the input list is never modified; `size` below 1 raises `ValueError`.",
        hint="Lists that need no padding, and the caller's list, must be left as they are.",
        gold='''
def pad_to_multiple(items: list, size: int, fill=None) -> list:
    """A copy of `items` padded with `fill` to a multiple of `size`."""
    if size < 1:
        raise ValueError("size must be at least 1")
    return list(items) + [fill] * (-len(items) % size)
''',
        edge_flaw='''
def pad_to_multiple(items: list, size: int, fill=None) -> list:
    """A copy of `items` padded with `fill` to a multiple of `size`."""
    return list(items) + [fill] * (size - len(items) % size)
''',
        logic_flaw='''
def pad_to_multiple(items: list, size: int, fill=None) -> list:
    """A copy of `items` padded with `fill` to a multiple of `size`."""
    if size < 1:
        raise ValueError("size must be at least 1")
    return list(items) + [fill] * (len(items) % size)
''',
        main=(("[1, 2, 3], 4", "[1, 2, 3, None]"), ("['a'], 3, fill='-'", "['a', '-', '-']")),
        edge=(("[1, 2], 2", "[1, 2]"), ("[], 3", "[]"), ("[1], 0", "raises:ValueError")),
        kwarg="fill",
        kwarg_alt="filler",
    ),
    Op(
        name="unique_in_order",
        module="dedupe",
        sig="def unique_in_order(items: list, key=None) -> list:",
        does="returns the items of `items` without repeats, keeping the first occurrence of each, in their original order",
        edges="With `key` (a function), two items are repeats when their keys are equal, and the first one is kept; an empty list gives `[]`.",
        hint="The optional key function changes what counts as a repeat.",
        gold='''
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
''',
        edge_flaw='''
def unique_in_order(items: list, key=None) -> list:
    """Items without repeats (by `key` when given), first occurrences, in order."""
    seen = set()
    out = []
    for item in items:
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out
''',
        logic_flaw='''
def unique_in_order(items: list, key=None) -> list:
    """Items without repeats (by `key` when given), first occurrences, in order."""
    return sorted(set(items))
''',
        main=(("[3, 1, 3, 2, 1]", "[3, 1, 2]"), ("list('banana')", "['b', 'a', 'n']")),
        edge=(("['A', 'b', 'a', 'B'], key=str.lower", "['A', 'b']"), ("[]", "[]")),
        kwarg="key",
        kwarg_alt="by",
    ),
    Op(
        name="duplicates",
        module="dedupe",
        sig="def duplicates(items: list) -> list:",
        does="returns the items that occur more than once in `items`, each listed once, in the order of their second occurrence",
        edges="An item seen three or more times is still listed once; an empty list or a list without repeats gives `[]`.",
        hint="Items repeated many times must not be reported many times.",
        gold='''
def duplicates(items: list) -> list:
    """Items seen more than once, each once, in order of their second occurrence."""
    seen = set()
    out = []
    for item in items:
        if item in seen and item not in out:
            out.append(item)
        seen.add(item)
    return out
''',
        edge_flaw='''
def duplicates(items: list) -> list:
    """Items seen more than once, each once, in order of their second occurrence."""
    seen = set()
    out = []
    for item in items:
        if item in seen:
            out.append(item)
        seen.add(item)
    return out
''',
        logic_flaw='''
def duplicates(items: list) -> list:
    """Items seen more than once, each once, in order of their second occurrence."""
    return [item for item in dict.fromkeys(items) if items.count(item) > 1]
''',
        main=(("[1, 2, 1, 3, 2]", "[1, 2]"), ("['b', 'a', 'a', 'b']", "['a', 'b']")),
        edge=(("[5, 5, 5]", "[5]"), ("[1, 2, 3]", "[]"), ("[]", "[]")),
    ),
    Op(
        name="group_by",
        module="group",
        sig="def group_by(items: list, key) -> dict:",
        does="groups `items` into a dict from `key(item)` to the list of items with that key, items kept in their original order",
        edges="Keys appear in the dict in the order they are first seen; an empty list gives `{}`.",
        hint="Order matters, both of keys and of items.",
        gold='''
def group_by(items: list, key) -> dict:
    """key(item) -> [items], keys in first-seen order, items in order."""
    groups: dict = {}
    for item in items:
        groups.setdefault(key(item), []).append(item)
    return groups
''',
        edge_flaw='''
def group_by(items: list, key) -> dict:
    """key(item) -> [items], keys in first-seen order, items in order."""
    groups: dict = {}
    for item in items:
        groups.setdefault(key(item), []).append(item)
    return dict(sorted(groups.items()))
''',
        logic_flaw='''
def group_by(items: list, key) -> dict:
    """key(item) -> [items], keys in first-seen order, items in order."""
    groups: dict = {}
    for item in items:
        groups[key(item)] = [item]
    return groups
''',
        main=(
            (
                "['apple', 'avocado', 'banana'], key=lambda s: s[0]",
                "{'a': ['apple', 'avocado'], 'b': ['banana']}",
            ),
        ),
        edge=(
            ("[3, 1, 2, 4], key=lambda n: n % 2", "ordered:{1: [3, 1], 0: [2, 4]}"),
            ("[], key=len", "{}"),
        ),
        kwarg="key",
        kwarg_alt="keyfunc",
    ),
    Op(
        name="count_by",
        module="group",
        sig="def count_by(items: list, key) -> dict:",
        does="counts the items of `items` per `key(item)`, returning a dict from key to count",
        edges="Keys appear in first-seen order; only keys that occur are present; an empty list gives `{}`.",
        hint="Order of the keys is part of the result.",
        gold='''
def count_by(items: list, key) -> dict:
    """key(item) -> how many items have it, keys in first-seen order."""
    counts: dict = {}
    for item in items:
        k = key(item)
        counts[k] = counts.get(k, 0) + 1
    return counts
''',
        edge_flaw='''
def count_by(items: list, key) -> dict:
    """key(item) -> how many items have it, keys in first-seen order."""
    counts: dict = {}
    for item in items:
        k = key(item)
        counts[k] = counts.get(k, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: -kv[1]))
''',
        logic_flaw='''
def count_by(items: list, key) -> dict:
    """key(item) -> how many items have it, keys in first-seen order."""
    return {key(item): 1 for item in items}
''',
        main=(("['a', 'bb', 'cc', 'd'], len", "{1: 2, 2: 2}"),),
        edge=(
            ("[1, 2, 2, 3, 3, 3], lambda n: n", "ordered:{1: 1, 2: 2, 3: 3}"),
            ("[], len", "{}"),
        ),
    ),
    Op(
        name="pairwise_diffs",
        module="window",
        sig="def pairwise_diffs(values: list[float]) -> list[float]:",
        does="returns the differences between consecutive values (`pairwise_diffs([1, 4, 9])` is `[3, 5]`), each later value minus the one before",
        edges="Fewer than two values give `[]`.",
        hint="Short inputs are valid input.",
        gold='''
def pairwise_diffs(values: list[float]) -> list[float]:
    """Consecutive differences, later minus earlier."""
    return [b - a for a, b in zip(values, values[1:])]
''',
        edge_flaw='''
def pairwise_diffs(values: list[float]) -> list[float]:
    """Consecutive differences, later minus earlier."""
    if len(values) < 2:
        return [0]
    return [b - a for a, b in zip(values, values[1:])]
''',
        logic_flaw='''
def pairwise_diffs(values: list[float]) -> list[float]:
    """Consecutive differences, later minus earlier."""
    return [a - b for a, b in zip(values, values[1:])]
''',
        main=(("[1, 4, 9]", "[3, 5]"), ("[5, 3, 3]", "[-2, 0]")),
        edge=(("[7]", "[]"), ("[]", "[]")),
    ),
    Op(
        name="moving_average",
        module="window",
        sig="def moving_average(values: list[float], window: int) -> list[float]:",
        does="returns the mean of each run of `window` consecutive values (`moving_average([1, 2, 3, 4], 2)` is `[1.5, 2.5, 3.5]`)",
        edges="A window longer than the list gives `[]`; `window` below 1 raises `ValueError`.",
        hint="Windows larger than the data, or smaller than one, are possible.",
        gold='''
def moving_average(values: list[float], window: int) -> list[float]:
    """Mean of each run of `window` consecutive values."""
    if window < 1:
        raise ValueError("window must be at least 1")
    return [sum(values[i : i + window]) / window for i in range(len(values) - window + 1)]
''',
        edge_flaw='''
def moving_average(values: list[float], window: int) -> list[float]:
    """Mean of each run of `window` consecutive values."""
    if len(values) < window:
        return [sum(values) / len(values)] if values else []
    return [sum(values[i : i + window]) / window for i in range(len(values) - window + 1)]
''',
        logic_flaw='''
def moving_average(values: list[float], window: int) -> list[float]:
    """Mean of each run of `window` consecutive values."""
    if window < 1:
        raise ValueError("window must be at least 1")
    return [sum(values[i : i + window]) / window for i in range(len(values) - window)]
''',
        main=(("[1, 2, 3, 4], 2", "[1.5, 2.5, 3.5]"), ("[2, 4, 6], 3", "[4.0]")),
        edge=(("[1, 2], 3", "[]"), ("[1, 2], 0", "raises:ValueError")),
    ),
    Op(
        name="get_path",
        module="lookup",
        sig="def get_path(data: dict, path: str, default=None):",
        does="follows a dotted `path` through nested dicts (`get_path({'a': {'b': 1}}, 'a.b')` is `1`)",
        edges="A missing key anywhere on the path, or a value on the way that is not a dict, gives `default`; an empty path returns `data` itself.",
        hint="Paths that lead nowhere must not raise.",
        gold='''
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
''',
        edge_flaw='''
def get_path(data: dict, path: str, default=None):
    """The value at dotted `path` in nested dicts, or `default`."""
    node = data
    for part in path.split("."):
        if part not in node:
            return default
        node = node[part]
    return node
''',
        logic_flaw='''
def get_path(data: dict, path: str, default=None):
    """The value at dotted `path` in nested dicts, or `default`."""
    if not path:
        return data
    return data.get(path.split(".")[-1], default)
''',
        main=(("{'a': {'b': 1}}, 'a.b'", "1"), ("{'x': {'y': {'z': 'deep'}}}, 'x.y.z'", "'deep'")),
        edge=(
            ("{'a': 1}, 'a.b', default='none'", "'none'"),
            ("{'a': {}}, 'a.q'", "None"),
            ("{'k': 2}, ''", "{'k': 2}"),
        ),
        kwarg="default",
        kwarg_alt="fallback",
    ),
    Op(
        name="invert_dict",
        module="lookup",
        sig="def invert_dict(mapping: dict) -> dict:",
        does="swaps keys and values: each value of `mapping` maps to the list of keys that had it, in the mapping's order",
        edges="Values shared by several keys collect all of them; an empty mapping gives `{}`.",
        hint="Several keys can share a value.",
        gold='''
def invert_dict(mapping: dict) -> dict:
    """value -> [keys with that value], in order."""
    inverted: dict = {}
    for key, value in mapping.items():
        inverted.setdefault(value, []).append(key)
    return inverted
''',
        edge_flaw='''
def invert_dict(mapping: dict) -> dict:
    """value -> [keys with that value], in order."""
    return {value: [key] for key, value in mapping.items()}
''',
        logic_flaw='''
def invert_dict(mapping: dict) -> dict:
    """value -> [keys with that value], in order."""
    return {key: [value] for key, value in mapping.items()}
''',
        main=(("{'a': 1, 'b': 2}", "{1: ['a'], 2: ['b']}"),),
        edge=(("{'a': 1, 'b': 1, 'c': 2}", "{1: ['a', 'b'], 2: ['c']}"), ("{}", "{}")),
    ),
)

FAMILY = Family(
    package="seqkit",
    about="small helpers over lists and dicts: chunking, de-duplication, grouping, windows and lookups",
    modules=(
        ("chunks", "Cutting lists into pieces."),
        ("dedupe", "Finding and removing repeats."),
        ("group", "Grouping and counting by key."),
        ("window", "Sliding windows over sequences."),
        ("lookup", "Looking things up in nested dicts."),
    ),
    ops=OPS,
)
