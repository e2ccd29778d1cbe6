"""numkit.report: a self-check that runs the package's newest helpers on sample input."""

from __future__ import annotations

from numkit import convert, rounding


def run_checks() -> list[str]:
    """One `name: result` line per helper, in a fixed order."""
    lines: list[str] = []
    lines.append("round_to_step: " + repr(rounding.round_to_step(7, 5)))
    lines.append("parse_percent: " + repr(convert.parse_percent('12.5%')))
    return lines


def summary_line(lines: list[str]) -> str:
    """A one-line summary of a check report."""
    return f"{len(lines)} checks ran"
