"""Checks of the paths a command will write, made before it writes anything.

A command that will create a directory (`--run-dir`, `research init --dir`), write a file
(`report -o`) or open a SQLite file (`--cache`) checks the path first, so that a path it cannot
use is a UsageError naming the path and the fix, and a refused command leaves nothing behind.
The checks look only (`os.access` sees read-only mounts as well as permissions); the OS error a
later write could still meet (a full disk, a race) is the CLI's safety net (`cli.main`).
"""

from __future__ import annotations

import os
from pathlib import Path

from loopwright.errors import ConfigError, UsageError

__all__ = [
    "check_cache_file",
    "check_new_dir",
    "check_output_file",
    "os_error_text",
    "read_text_input",
]

_SQLITE_MAGIC = b"SQLite format 3\x00"


def check_new_dir(path: Path, flag: str) -> None:
    """`path` can become a new directory: it is absent or an empty directory, and what exists
    of it is a directory this process can write. UsageError naming `flag` otherwise."""
    if path.exists() and not path.is_dir():
        raise UsageError(f"{flag} {path} is a file", fix=f"pass a directory path as {flag}")
    if path.is_dir():
        _require_writable(path, flag, path)
        return
    _require_writable(_existing_ancestor(path, flag, path), flag, path)


def check_output_file(path: Path, flag: str) -> None:
    """A file can be written at `path` (replaced atomically: its directory must be writable).
    UsageError naming `flag` when `path` is a directory, or its directory cannot be written."""
    if path.is_dir():
        raise UsageError(f"{flag} {path} is a directory", fix=f"pass a file path as {flag}")
    _require_writable(_existing_ancestor(path.parent, flag, path), flag, path)


def check_cache_file(path: Path, flag: str = "--cache") -> None:
    """`path` can be opened as a SQLite file: not a directory, in a writable directory (SQLite
    writes its journal beside it), and when it exists, a SQLite database file."""
    check_output_file(path, flag)
    if path.is_file():
        with path.open("rb") as f:
            head = f.read(len(_SQLITE_MAGIC))
        if head and head != _SQLITE_MAGIC:
            raise UsageError(
                f"{flag} {path} is not a SQLite file",
                got=f"a file starting with {head[:8]!r}",
                fix=f"pass a new path or a runs.db written by loopwright as {flag}",
            )


def read_text_input(path: Path, flag: str) -> str:
    """The UTF-8 text of an input file the user named with `flag`. ConfigError naming the
    path and the fix when it is missing, a directory, unreadable or not UTF-8 text (binary)."""
    if not path.is_file():
        what = "is a directory" if path.is_dir() else "does not exist"
        raise ConfigError(f"{flag} {path} {what}", fix="pass a text file; check the path")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError.not_utf8(
            f"{flag} {path}", exc, fix="pass a text (markdown) file saved as UTF-8"
        ) from None
    except OSError as exc:
        raise ConfigError(
            f"{flag} cannot be read: {os_error_text(exc)}", fix="check the path"
        ) from None


def os_error_text(exc: OSError) -> str:
    """An OSError as `reason: path` (no errno noise), for one-line messages."""
    reason = exc.strerror or str(exc)
    name = exc.filename
    return f"{reason}: {name}" if name else reason


def _existing_ancestor(start: Path, flag: str, path: Path) -> Path:
    """The nearest existing ancestor of `start` (itself included); UsageError naming `path`
    when that is a file (then nothing can be created under it)."""
    probe = start.absolute()
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if not probe.is_dir():
        raise UsageError(
            f"cannot create {flag} {path}: {probe} is a file, not a directory",
            fix=f"pass a {flag} under a directory",
        )
    return probe


def _require_writable(directory: Path, flag: str, path: Path) -> None:
    if os.access(directory, os.W_OK | os.X_OK):
        return
    read_only = _read_only_mount(directory)
    why = "is on a read-only file system" if read_only else "is not writable by this user"
    raise UsageError(
        f"cannot create {flag} {path}: {directory} {why}",
        fix=f"pass a {flag} under a directory you can write",
    )


def _read_only_mount(directory: Path) -> bool:
    try:
        return bool(os.statvfs(directory).f_flag & os.ST_RDONLY)
    except OSError:
        return False
