"""numkit.report: a self-check that runs the package's newest helpers on sample input."""

from __future__ import annotations

from numkit import convert, money, ranges, rounding, stats


def run_checks() -> list[str]:
    """One `name: result` line per helper, in a fixed order."""
    lines: list[str] = []
    lines.append("median: " + repr(stats.median([3, 1, 2])))
    lines.append("round_half_up: " + repr(rounding.round_half_up(2.5)))
    lines.append("overlap: " + repr(ranges.overlap((0, 10), (5, 20))))
    lines.append("parse_percent: " + repr(convert.parse_percent('12.5%')))
    lines.append("format_cents: " + repr(money.format_cents(123456)))
    return lines


def summary_line(lines: list[str]) -> str:
    """A one-line summary of a check report."""
    return f"{len(lines)} checks ran"
