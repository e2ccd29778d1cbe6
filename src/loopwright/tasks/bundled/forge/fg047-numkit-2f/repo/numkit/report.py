"""numkit.report: a self-check that runs the package's newest helpers on sample input."""

from __future__ import annotations

from numkit import money, ranges


def run_checks() -> list[str]:
    """One `name: result` line per helper, in a fixed order."""
    lines: list[str] = []
    lines.append("overlap: " + repr(ranges.overlap((0, 10), (5, 20))))
    lines.append("split_amount: " + repr(money.split_amount(100, 3)))
    return lines


def summary_line(lines: list[str]) -> str:
    """A one-line summary of a check report."""
    return f"{len(lines)} checks ran"
