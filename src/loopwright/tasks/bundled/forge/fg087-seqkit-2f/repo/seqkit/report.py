"""seqkit.report: a self-check that runs the package's newest helpers on sample input."""

from __future__ import annotations

from seqkit import dedupe, group


def run_checks() -> list[str]:
    """One `name: result` line per helper, in a fixed order."""
    lines: list[str] = []
    lines.append("duplicates: " + repr(dedupe.duplicates([1, 2, 1, 3, 2])))
    lines.append("count_by: " + repr(group.count_by(['a', 'bb', 'cc', 'd'], len)))
    return lines


def summary_line(lines: list[str]) -> str:
    """A one-line summary of a check report."""
    return f"{len(lines)} checks ran"
