"""wordsmith.report: a self-check that runs the package's newest helpers on sample input."""

from __future__ import annotations

from wordsmith import case, clean, measure, pad, split


def run_checks() -> list[str]:
    """One `name: result` line per helper, in a fixed order."""
    lines: list[str] = []
    lines.append("collapse_spaces: " + repr(clean.collapse_spaces('a   b\t\tc')))
    lines.append("swap_case_words: " + repr(case.swap_case_words('hELLO wORLD')))
    lines.append("count_vowels: " + repr(measure.count_vowels('Hello World')))
    lines.append("split_pairs: " + repr(split.split_pairs('a=1, b = 2')))
    lines.append("indent_lines: " + repr(pad.indent_lines('a\nb', '> ')))
    return lines


def summary_line(lines: list[str]) -> str:
    """A one-line summary of a check report."""
    return f"{len(lines)} checks ran"
