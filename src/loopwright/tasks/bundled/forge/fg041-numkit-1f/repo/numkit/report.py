"""numkit.report: a self-check that runs the package's newest helpers on sample input."""

from __future__ import annotations

from numkit import convert


def run_checks() -> list[str]:
    """One `name: result` line per helper, in a fixed order."""
    lines: list[str] = []
    lines.append("to_base: " + repr(convert.to_base(255, 16)))
    return lines


def summary_line(lines: list[str]) -> str:
    """A one-line summary of a check report."""
    return f"{len(lines)} checks ran"
