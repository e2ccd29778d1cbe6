"""The failure taxonomy of reflection: failure kinds, how a message shows one, and what a prompt
says when it already guards against one.

Six kinds, each something a prompt can address: `imports` (the change does not load),
`signatures` (names or parameters differ from the instruction), `regressions` (old behaviour
broke), `edge_cases` (a boundary or empty case is wrong), `completeness` (part of the feature is
missing) and `verification` (a result differs from what the instruction expects). Messages are
matched by case-insensitive substrings in a fixed order (the first kind that matches wins), so
the same message always gets the same kind. docs/reflection.md lists every rule.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType

__all__ = [
    "ADDRESSED_BY",
    "FAILURE_KINDS",
    "KIND_OF_CATEGORY",
    "LESSONS",
    "addressed_kinds",
    "message_kind",
    "normalise_message",
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

ADDRESSED_BY: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "imports": ("import", "module name", "syntax error"),
        "signatures": ("signature", "exact name", "parameter name"),
        "regressions": ("existing behaviour", "existing behavior", "regression", "do not break"),
        "edge_cases": ("edge case", "boundary", "corner case", "empty input"),
        "completeness": ("every part", "complete", "all of the feature"),
        "verification": ("verify", "check the result", "expected output"),
    }
)
"""Kind -> phrases (case-insensitive) that show a prompt already guards against that kind."""

LESSONS: Mapping[str, str] = MappingProxyType(
    {
        "imports": (
            "Before you finish, import every module you changed and fix any import error, "
            "wrong module name, missing export or syntax error."
        ),
        "signatures": (
            "Use the exact name and signature the instruction gives for every function and "
            "class, with the same parameter names and defaults."
        ),
        "regressions": (
            "Keep existing behaviour working: do not break code that other modules or the "
            "visible tests rely on."
        ),
        "edge_cases": (
            "Handle each edge case and boundary value the instruction names, such as empty "
            "input, zero, None and duplicates."
        ),
        "completeness": (
            "Implement every part of the feature: go through the instruction requirement by "
            "requirement and finish only when the change is complete."
        ),
        "verification": (
            "Verify your result for every example in the instruction: check the result "
            "against the expected output before you finish."
        ),
    }
)
"""Kind -> the sentence the offline rules propose adding to a prompt (no braces in any)."""

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


def addressed_kinds(prompt: str) -> tuple[str, ...]:
    """The kinds whose ADDRESSED_BY phrases occur in `prompt` (case-insensitive), in
    FAILURE_KINDS order."""
    text = prompt.lower()
    return tuple(k for k in FAILURE_KINDS if any(p in text for p in ADDRESSED_BY[k]))
