"""The failure taxonomy of reflection: failure kinds, how a message shows one, and the lessons
the offline rules write against one.

Six kinds, each something a prompt can address: `imports` (the change does not load),
`signatures` (names or parameters differ from the instruction), `regressions` (old behaviour
broke), `edge_cases` (a boundary or empty case is wrong), `completeness` (part of the feature is
missing) and `verification` (a result differs from what the instruction expects). Messages are
matched by case-insensitive substrings in a fixed order (the first kind that matches wins), so
the same message always gets the same kind. A lesson names the kind in words (`KIND_PHRASES`)
and quotes what the runs showed: it is made from the exhaust, not from a list of advice
phrases (nothing here knows what any model responds to). docs/reflection.md lists every rule.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType

__all__ = [
    "FAILURE_KINDS",
    "KIND_OF_CATEGORY",
    "KIND_PHRASES",
    "lesson_head",
    "message_kind",
    "normalise_message",
    "write_feedback_lesson",
    "write_lesson",
]

FAILURE_KINDS: tuple[str, ...] = (
    "imports",
    "signatures",
    "regressions",
    "edge_cases",
    "completeness",
    "verification",
)

KIND_OF_CATEGORY: Mapping[str, str] = MappingProxyType(
    {
        "import_error": "imports",
        "syntax_error": "imports",
        "regression": "regressions",
        "no_change": "completeness",
        "max_turns": "completeness",
        "run_timeout": "completeness",
    }
)
"""A run's failure category (records.FailureCategory) -> the kind it shows, where it shows one."""

_MESSAGE_SIGNS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "imports",
        (
            "importerror",
            "modulenotfounderror",
            "cannot import",
            "no module named",
            "syntaxerror",
            "indentationerror",
        ),
    ),
    (
        "signatures",
        (
            "unexpected keyword argument",
            "positional argument",
            "required positional",
            "required keyword",
            "has no attribute",
            "is not callable",
            "takes no arguments",
        ),
    ),
    ("completeness", ("notimplementederror", "not implemented")),
)
_EDGE_WORDS = ("empty", "edge", "boundary", "zero", "none", "negative", "blank", "whitespace")
_ASSERTION_SIGNS = ("assert", "expected", "mismatch", " != ", " == ")

KIND_PHRASES: Mapping[str, str] = MappingProxyType(
    {
        "imports": "import or syntax errors",
        "signatures": "calls that did not fit the code (wrong names, arguments or attributes)",
        "regressions": "tests that passed before the change and failed after it",
        "edge_cases": "failed assertions in tests of special inputs",
        "completeness": "work left unimplemented or unfinished",
        "verification": "failed assertions: results other than the tests expect",
    }
)
"""Kind -> what the runs showed, in words: the head of every lesson the offline rules write."""

_QUOTED = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"")
_HEX = re.compile(r"\b0x[0-9a-fA-F]+\b")
_NUMBER = re.compile(r"(?<![A-Za-z_])\d+(?:\.\d+)?")
_PATH = re.compile(r"(?:/[\w.\-]+){2,}")
_SPACE = re.compile(r"\s+")
_MAX_MESSAGE = 160


def normalise_message(text: str) -> str:
    """One comparable line for a message: its first line naming an error (else its first
    non-blank line), with quoted literals as <s>, numbers as <n>, hex as <hex>, absolute paths
    as <path>, whitespace collapsed, cut to 160 characters. Deterministic."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if not lines:
        return ""
    line = next((ln for ln in lines if "Error" in ln or "Exception" in ln), lines[0])
    line = _QUOTED.sub("<s>", line)
    line = _HEX.sub("<hex>", line)
    line = _PATH.sub("<path>", line)
    line = _NUMBER.sub("<n>", line)
    line = _SPACE.sub(" ", line).strip()
    return line[:_MAX_MESSAGE]


def message_kind(message: str, test_id: str = "") -> str | None:
    """The failure kind a message shows, or None. Rules in order: import/syntax signs ->
    imports; call-shape signs (unexpected keyword, positional argument, no attribute...) ->
    signatures; NotImplementedError -> completeness; an assertion in a test whose id names an
    empty, edge, boundary, zero, None, negative, blank or whitespace case -> edge_cases; any
    other assertion or "expected" -> verification."""
    text = message.lower()
    for kind, signs in _MESSAGE_SIGNS:
        if any(s in text for s in signs):
            return kind
    if any(s in text for s in _ASSERTION_SIGNS):
        name = test_id.lower().rsplit("::", 1)[-1]
        return "edge_cases" if any(w in name for w in _EDGE_WORDS) else "verification"
    return None


def lesson_head(kind: str) -> str:
    """The start every lesson against `kind` shares: how a prompt shows it has one already."""
    return f"Earlier runs had {KIND_PHRASES[kind]}"


def write_lesson(kind: str, runs: int, message: str, test_id: str) -> str:
    """A lesson against `kind` from what the runs showed: the kind in words, how many runs,
    and one example message (and the test it came from), braces turned into parentheses so
    the lesson is never read as a placeholder."""
    example = f"`{message}`" if message else ""
    test = test_id.rsplit("::", 1)[-1][:80] if test_id else ""
    if example and test:
        example += f" in {test}"
    said = f" ({runs} run{'s' if runs != 1 else ''}" + (f", e.g. {example})" if example else ")")
    text = f"{lesson_head(kind)}{said}. Look for the same problem in your change before you finish."
    return text.replace("{", "(").replace("}", ")")


FEEDBACK_HEAD = "The task's evaluator said of earlier work"


def write_feedback_lesson(feedback: str, runs: int) -> str:
    """A lesson quoting what an evaluator function said about `runs` unresolved runs (its first
    300 characters), braces turned into parentheses (never a placeholder); at most 400
    characters, so it fits a suggestion's rationale."""
    quoted = " ".join(feedback.split())[:300]
    said = f"{FEEDBACK_HEAD} ({runs} run{'s' if runs != 1 else ''}): `{quoted}`."
    text = f"{said} Address it before you finish."
    return text.replace("{", "(").replace("}", ")")
