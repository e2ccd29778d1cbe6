"""The built-in tools: files, search, tests, shell, notes and finish. Registered on import.

Every path argument is taken relative to the workspace and must stay inside it (symlinks
followed); `read_file` may also read the task's instruction file. See docs/runtime.md.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path

from loopwright._fs import SpecialFileError, read_regular
from loopwright.runtime._commands import run_shell, run_visible_tests
from loopwright.runtime._context import ToolContext, ToolError
from loopwright.runtime._tools import relative_path, resolve_path, tool

__all__ = [
    "LIST_CAP",
    "READ_CAP_CHARS",
    "SEARCH_CAP",
    "SKIPPED_DIRS",
]

READ_CAP_CHARS = 100_000
LIST_CAP = 1_000
SEARCH_CAP = 200
SKIPPED_DIRS = frozenset({".git", "__pycache__", ".pytest_cache", ".mypy_cache"})
_SEARCH_MAX_BYTES = 1_000_000
_LINE_CHARS = 300

_PATH = "a path relative to the workspace root"


@tool("read_file", params={"path": _PATH + " (or the instruction file's absolute path)"})
def read_file(ctx: ToolContext, path: str) -> str:
    """Read a text file of the workspace, or the task's instruction file. Long files are cut
    at 100,000 characters with a note."""
    target = resolve_path(ctx, path, instruction_ok=True)
    if target.is_dir():
        raise ToolError(f"{path} is a directory; use list_files to see what it holds")
    if not target.exists():
        raise ToolError(f"no such file: {path}")
    text = _read(target, path).decode("utf-8", errors="replace")
    if len(text) > READ_CAP_CHARS:
        note = f"\n[truncated: showing the first {READ_CAP_CHARS} of {len(text)} characters]"
        return text[:READ_CAP_CHARS] + note
    return text


@tool("list_files", params={"path": "a directory relative to the workspace root (default '.')"})
def list_files(ctx: ToolContext, path: str = ".") -> str:
    """List the files under a directory of the workspace, recursively, sorted, relative to the
    workspace root (.git and caches left out)."""
    root = resolve_path(ctx, path)
    if root.is_file():
        return relative_path(ctx, root)
    if not root.is_dir():
        raise ToolError(f"no such directory: {path}")
    files = sorted(relative_path(ctx, f) for f in _walk(root))
    if not files:
        return f"(no files under {path})"
    shown = "\n".join(files[:LIST_CAP])
    if len(files) > LIST_CAP:
        shown += f"\n[... {len(files) - LIST_CAP} more files; list a subdirectory to see them]"
    return shown


def _walk(root: Path) -> Iterator[Path]:
    for directory, dirs, files in os.walk(root):  # symlinked directories are not entered
        dirs[:] = [d for d in dirs if d not in SKIPPED_DIRS]
        for name in files:
            yield Path(directory, name)


@tool(
    "search_code",
    params={
        "pattern": "a Python regular expression (searched literally if it is not a valid one)",
        "path": "a file or directory relative to the workspace root (default '.')",
    },
)
def search_code(ctx: ToolContext, pattern: str, path: str = ".") -> str:
    """Search the workspace's text files for a regular expression; one `file:line: text` line
    per match, at most 200."""
    root = resolve_path(ctx, path)
    note = ""
    try:
        regex = re.compile(pattern)
    except re.error as exc:
        regex = re.compile(re.escape(pattern))
        note = f"(not a valid regular expression: {exc}; searched for it literally)\n"
    files = [root] if root.is_file() else sorted(_walk(root)) if root.is_dir() else None
    if files is None:
        raise ToolError(f"no such file or directory: {path}")
    hits = []
    for file in files:
        hits.extend(_matches(ctx, file, regex))
        if len(hits) > SEARCH_CAP:
            break
    if not hits:
        return note + f"no match for {pattern!r} under {path}"
    more = f"\n[more matches cut after {SEARCH_CAP}; narrow the pattern or path]"
    return note + "\n".join(hits[:SEARCH_CAP]) + (more if len(hits) > SEARCH_CAP else "")


def _matches(ctx: ToolContext, file: Path, regex: re.Pattern[str]) -> list[str]:
    if file.is_symlink() and not file.resolve().is_relative_to(ctx.workspace):
        return []  # a link pointing out of the workspace is not followed
    try:
        data = read_regular(file.resolve())
    except OSError:
        return []
    if len(data) > _SEARCH_MAX_BYTES or b"\0" in data[:8192]:
        return []  # binary or huge: not source code
    name = relative_path(ctx, file)
    lines = data.decode("utf-8", errors="replace").splitlines()
    return [
        f"{name}:{number}: {line.strip()[:_LINE_CHARS]}"
        for number, line in enumerate(lines, 1)
        if regex.search(line)
    ]


def _read(target: Path, path: str) -> bytes:
    """The bytes of the regular file `target` (resolved); a FIFO, device or socket is never
    opened (it could block the host): ToolError."""
    try:
        return read_regular(target)
    except SpecialFileError as exc:
        raise ToolError(f"{path} is {exc.strerror}; only regular files are read") from None


def _unlink_special(target: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        if not stat.S_ISREG(target.lstat().st_mode):
            target.unlink()


def _writable(ctx: ToolContext, path: str) -> Path:
    target = resolve_path(ctx, path)
    if ".git" in target.relative_to(ctx.workspace).parts:
        raise ToolError(f"{path} is inside the workspace's .git directory; change source files")
    if target.is_dir():
        raise ToolError(f"{path} is a directory; give a file path")
    return target


@tool("write_file", params={"path": _PATH, "content": "the complete new content of the file"})
def write_file(ctx: ToolContext, path: str, content: str) -> str:
    """Create or overwrite a file of the workspace with `content` (parent directories are
    created)."""
    target = _writable(ctx, path)
    target.parent.mkdir(parents=True, exist_ok=True)
    _unlink_special(target)  # writing to a FIFO would block until a reader comes
    target.write_text(content, encoding="utf-8")
    return f"wrote {len(content)} characters to {relative_path(ctx, target)}"


@tool(
    "edit_file",
    params={
        "path": _PATH,
        "old": "the exact text to replace; it must occur exactly once in the file",
        "new": "the text to put in its place",
    },
)
def edit_file(ctx: ToolContext, path: str, old: str, new: str) -> str:
    """Replace the one exact occurrence of `old` in a file of the workspace with `new`."""
    target = _writable(ctx, path)
    if not target.exists():
        raise ToolError(f"no such file: {path}; use write_file to create it")
    if not old:
        raise ToolError("old is empty; give the exact text to replace")
    text = _read(target, path).decode("utf-8", errors="replace")
    count = text.count(old)
    if count != 1:
        why = "not found" if count == 0 else "ambiguous"
        raise ToolError(
            f"old text {why} in {path}: it occurs {count} times, it must occur exactly once; "
            + ("read the file and copy the text exactly" if count == 0 else "include more context")
        )
    target.write_text(text.replace(old, new, 1), encoding="utf-8")
    return f"edited {relative_path(ctx, target)}: replaced 1 occurrence"


@tool("run_tests", params={"path": "a test file or directory (default: the visible tests)"})
def run_tests(ctx: ToolContext, path: str | None = None) -> str:
    """Run the visible tests (python -m pytest -q) in the workspace; returns the exit code and
    the end of the output."""
    target = None if path is None else relative_path(ctx, resolve_path(ctx, path))
    return run_visible_tests(ctx, target).text


@tool("run_command", params={"command": "a shell command, run with sh -c in the workspace"})
def run_command(ctx: ToolContext, command: str) -> str:
    """Run a shell command in the workspace (sandboxed; no network unless the task allows it);
    returns the exit code and the end of the output."""
    return run_shell(ctx, command).text


@tool("write_notes", params={"text": "what to add to the run's notes"})
def write_notes(ctx: ToolContext, text: str) -> str:
    """Append to the run's notes, which later steps read (their prompt's notes, read_notes)."""
    if not text.strip():
        raise ToolError("text is empty; write the notes to keep")
    ctx.add_notes(text)
    return f"notes saved ({len(ctx.notes.text())} characters of notes in this run)"


@tool("read_notes")
def read_notes(ctx: ToolContext) -> str:
    """Read the notes earlier steps of this run wrote."""
    return ctx.notes.text() or "(no notes yet)"


@tool("finish", params={"summary": "a short summary of what you did"})
def finish(ctx: ToolContext, summary: str) -> str:
    """End your work on this step. Call it when you are done, with a short summary."""
    return summary
