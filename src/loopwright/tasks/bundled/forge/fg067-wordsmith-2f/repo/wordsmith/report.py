"""wordsmith.report: a self-check that runs the package's newest helpers on sample input."""

from __future__ import annotations

from wordsmith import case, split


def run_checks() -> list[str]:
    """One `name: result` line per helper, in a fixed order."""
    lines: list[str] = []
    lines.append("camel_to_snake: " + repr(case.camel_to_snake('parseHttpResponse')))
    lines.append("split_sentences: " + repr(split.split_sentences('Hi there. How are you? Fine!')))
    return lines


def summary_line(lines: list[str]) -> str:
    """A one-line summary of a check report."""
    return f"{len(lines)} checks ran"
