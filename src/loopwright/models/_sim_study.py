"""How the sim studies a task: which files it reads, and the notes it writes from what it read.

Everything here is a pure function of text the study agent saw in its conversation: the
instruction it read, the `list_files` result, and the files its read_file calls returned. Nothing
comes from a task's solution/ or flawed/ overlays (docs/sim-model.md, "Study notes").
"""

from __future__ import annotations

import builtins
import keyword
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from types import MappingProxyType

from loopwright.tasks import FailureKind

__all__ = [
    "MAX_READS",
    "PITFALLS",
    "InstructionRefs",
    "files_to_study",
    "parse_listing",
    "study_notes",
]

MAX_READS = 8

# One pitfall line per failure kind. Which lines a study writes is decided from the instruction's
# text (`_PITFALL_CUES`), never from the task's flawed variants. Each line contains its kind's
# guidance keywords (GUIDANCE_KEYWORDS; a test pins it), so notes carrying it guide the builder.
PITFALLS: Mapping[FailureKind, str] = MappingProxyType(
    {
        FailureKind.MISSED_EDGE_CASE: (
            "handle every edge case and boundary the instruction lists (empty input, limits, "
            "the errors it says to raise)"
        ),
        FailureKind.IMPORT_ERROR: (
            "check every import and module name: new modules must import cleanly and be "
            "exported where the instruction says"
        ),
        FailureKind.WRONG_SIGNATURE: (
            "use the exact names and the signature the instruction gives (parameter names, "
            "defaults, return shape)"
        ),
        FailureKind.PARTIAL_FEATURE: (
            "implement every part of the feature: it is not complete until each file above is done"
        ),
        FailureKind.BROKEN_REGRESSION: (
            "keep existing behaviour: do not break the existing tests (no regression)"
        ),
        FailureKind.WRONG_LOGIC: (
            "verify the main path against the instruction's examples: check the result, not "
            "just that it runs"
        ),
    }
)

# What in an instruction's text makes a study write each pitfall (case-insensitive regexes).
# PARTIAL_FEATURE is decided by counting parts instead (see `_pitfalls`).
_PITFALL_CUES: Mapping[FailureKind, re.Pattern[str]] = MappingProxyType(
    {
        FailureKind.MISSED_EDGE_CASE: re.compile(
            r"\braise|\berror|\bempty\b|\blimit|\bboundar|\bedge case|\binvalid|\bat most\b",
            re.IGNORECASE,
        ),
        FailureKind.WRONG_SIGNATURE: re.compile(
            r"\bsignature|\bdefault|\bparameter|\bdef \w+\(|\w+\([^)\n]*=", re.IGNORECASE
        ),
        FailureKind.IMPORT_ERROR: re.compile(
            r"\bexport|__init__|__all__|\bnew module|\bimport", re.IGNORECASE
        ),
        FailureKind.BROKEN_REGRESSION: re.compile(
            r"\bexisting\b|\bkeep passing|\bunchanged|\bas before|\bdo not change", re.IGNORECASE
        ),
        FailureKind.WRONG_LOGIC: re.compile(r"\bexample|\be\.g\.|→|->", re.IGNORECASE),
    }
)

_SPAN = re.compile(r"`([^`\n]+)`")
_DEFINED = re.compile(r"\b(?:def|class)\s+([A-Za-z_]\w*)")
_PATH = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)+[\w.-]+\.[A-Za-z]\w*|[\w-]+\.py)\b")
_DOTTED = re.compile(r"\b[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+\b")
_NAME = re.compile(r"\b[A-Za-z_]\w*\b")
_API_LINE = re.compile(r"`[^`]*\(|\bdef |\bclass ")
_MAX_API_LINES = 12
_COMMON = frozenset(dir(builtins)) | frozenset(keyword.kwlist) | {"self", "cls", "str", "int"}


@dataclass(frozen=True, slots=True)
class InstructionRefs:
    """What an instruction names: `paths` (file paths, in order), `modules` (dotted names such
    as `pkg.mod`) and `identifiers` (names in backticks or after def/class, builtins and
    keywords left out), each without repeats."""

    paths: tuple[str, ...]
    modules: tuple[str, ...]
    identifiers: tuple[str, ...]

    @staticmethod
    def of(instruction: str) -> InstructionRefs:
        """The references an instruction's text makes."""
        spans = _SPAN.findall(instruction)
        paths = [m.lstrip("./") for m in _PATH.findall(instruction)]
        code = " ".join(s for s in spans if not _PATH.fullmatch(s.strip()))
        modules = [m for m in _DOTTED.findall(code) if not _PATH.fullmatch(m)]
        names = _NAME.findall(code.replace(".", " ")) + _DEFINED.findall(instruction)
        identifiers = [n for n in names if n not in _COMMON and not n.startswith("__")]
        return InstructionRefs(_unique(paths), _unique(modules), _unique(identifiers))

    def stem_words(self) -> frozenset[str]:
        """The lower-case identifiers and their snake_case words of 3+ letters, which a source
        file's name stem is matched against."""
        words = {n.lower() for n in self.identifiers}
        words |= {w.lower() for n in self.identifiers for w in n.split("_") if len(w) >= 3}
        return frozenset(words)


def _unique(items: Sequence[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(i for i in items if i))


def _is_test(path: str) -> bool:
    pure = PurePosixPath(path)
    return "tests" in pure.parts[:-1] or pure.name.startswith("test_") or pure.name == "conftest.py"


def parse_listing(text: str | None) -> tuple[str, ...] | None:
    """The paths of a `list_files` result (one a line; its notes in brackets or parentheses and
    an "error: ..." result give none). None when there was no result."""
    if text is None or text.startswith("error:"):
        return None
    lines = (ln.strip() for ln in text.splitlines())
    return tuple(ln for ln in lines if ln and not ln.startswith(("[", "(")))


def _in_listing(name: str, listing: Sequence[str]) -> str | None:
    """The listed path that is `name` or ends with "/name" (the first such), else None."""
    for path in listing:
        if path == name or path.endswith("/" + name):
            return path
    return None


def _module_file(module: str, listing: Sequence[str]) -> str | None:
    """The listed file a dotted name refers to: `a.b.c` -> a/b/c.py, a/b/c/__init__.py, else
    the same for `a.b` (c an attribute), and so on."""
    parts = module.split(".")
    for end in range(len(parts), 0, -1):
        base = "/".join(parts[:end])
        for candidate in (f"{base}.py", f"{base}/__init__.py"):
            found = _in_listing(candidate, listing)
            if found is not None:
                return found
    return None


def files_to_study(instruction: str, listing: Sequence[str] | None) -> list[str]:
    """The files a study reads, at most MAX_READS, in this order: the paths the instruction
    names, the files of the dotted modules it names, then source files (.py, not tests) whose
    name stem is an identifier it names or a snake_case word of one. With no listing, only the
    paths it names. Test files only when named by path."""
    refs = InstructionRefs.of(instruction)
    if listing is None:
        return list(refs.paths[:MAX_READS])
    chosen = [found for p in refs.paths if (found := _in_listing(p, listing)) is not None]
    chosen += [found for m in refs.modules if (found := _module_file(m, listing)) is not None]
    words = refs.stem_words()
    chosen += [
        p
        for p in listing
        if p.endswith(".py") and not _is_test(p) and PurePosixPath(p).stem.lower() in words
    ]
    return list(_unique(chosen))[:MAX_READS]


def _mentions(text: str, identifiers: Sequence[str]) -> bool:
    return any(re.search(rf"\b{re.escape(n)}\b", text) for n in identifiers)


def _relevant(
    refs: InstructionRefs, listing: Sequence[str] | None, read: Mapping[str, str]
) -> list[str]:
    """The files the notes name: files read (not tests) that define or mention an identifier the
    instruction names, then named paths that do not exist yet, marked "(new file)"."""
    packages = {PurePosixPath(p).parts[0] for p in listing or () if "/" in p}
    api = [n for n in refs.identifiers if n not in packages]
    found = [p for p, text in read.items() if not _is_test(p) and _mentions(text, api)]
    new = [
        f"{p} (new file)"
        for p in refs.paths
        if not _is_test(p)
        and (p not in read if listing is None else _in_listing(p, listing) is None)
    ]
    return list(_unique(found + new))


def _pitfalls(instruction: str, files: int) -> list[FailureKind]:
    """The failure kinds a study warns about, from the instruction's text alone, in PITFALLS'
    order: each kind whose cue it contains; PARTIAL_FEATURE when it has several parts (two or
    more files to change, or three or more sections or numbered items)."""
    sections = len(re.findall(r"^#{2,} ", instruction, re.MULTILINE))
    items = len(re.findall(r"^\s*\d+\. ", instruction, re.MULTILINE))
    several = files >= 2 or sections >= 3 or items >= 3
    kinds = []
    for kind in PITFALLS:
        cue = _PITFALL_CUES.get(kind)
        if (cue is not None and cue.search(instruction)) or (
            kind is FailureKind.PARTIAL_FEATURE and several
        ):
            kinds.append(kind)
    return kinds


def study_notes(instruction: str, listing: Sequence[str] | None, read: Mapping[str, str]) -> str:
    """The notes a study writes from what it saw: the instruction's heading, the files that look
    relevant, the API lines of the instruction, the pitfalls its text suggests, and a plan."""
    refs = InstructionRefs.of(instruction)
    heading = next((ln.lstrip("# ").strip() for ln in instruction.splitlines() if ln.strip()), "")
    files = _relevant(refs, listing, read)
    lines = [f"Notes on the task: {heading}".rstrip(": "), "", "Files that look relevant:"]
    lines += [f"- {p}" for p in files] or ["- (none found)"]
    api = [ln.strip() for ln in instruction.splitlines() if _API_LINE.search(ln)]
    if api:
        lines += ["", "API the instruction names:"]
        lines += [f"- {ln}" for ln in api[:_MAX_API_LINES]]
    kinds = _pitfalls(instruction, len(files))
    if kinds:
        lines += ["", "Pitfalls:"]
        lines += [f"- {PITFALLS[k]}" for k in kinds]
    lines += ["", "Plan:"]
    lines += [f"{i}. Change {p.removesuffix(' (new file)')}." for i, p in enumerate(files, start=1)]
    lines.append(f"{len(files) + 1}. Run the visible tests and fix what fails.")
    return "\n".join(lines) + "\n"
