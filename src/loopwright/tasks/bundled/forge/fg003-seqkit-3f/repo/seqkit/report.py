"""seqkit.report: a self-check that runs the package's newest helpers on sample input."""

from __future__ import annotations

from seqkit import chunks, group, lookup


def run_checks() -> list[str]:
    """One `name: result` line per helper, in a fixed order."""
    lines: list[str] = []
    lines.append("chunked: " + repr(chunks.chunked([1, 2, 3, 4], 2)))
    lines.append("group_by: " + repr(group.group_by(['apple', 'avocado', 'banana'], key=lambda s: s[0])))
    lines.append("invert_dict: " + repr(lookup.invert_dict({'a': 1, 'b': 2})))
    return lines


def summary_line(lines: list[str]) -> str:
    """A one-line summary of a check report."""
    return f"{len(lines)} checks ran"
