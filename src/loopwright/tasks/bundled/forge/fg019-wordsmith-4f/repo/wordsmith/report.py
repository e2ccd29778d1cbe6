"""wordsmith.report: a self-check that runs the package's newest helpers on sample input."""

from __future__ import annotations

from wordsmith import clean, measure, pad, split


def run_checks() -> list[str]:
    """One `name: result` line per helper, in a fixed order."""
    lines: list[str] = []
    lines.append("strip_prefix: " + repr(clean.strip_prefix('re_re_name', 're_')))
    lines.append("longest_word: " + repr(measure.longest_word('a quick brownish fox')))
    lines.append("split_sentences: " + repr(split.split_sentences('Hi there. How are you? Fine!')))
    lines.append("center_text: " + repr(pad.center_text('ab', 6, '*')))
    return lines


def summary_line(lines: list[str]) -> str:
    """A one-line summary of a check report."""
    return f"{len(lines)} checks ran"
