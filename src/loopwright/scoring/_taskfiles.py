"""An in-memory copy of a whole task directory, to check and repair it after an unsandboxed agent.

With the local sandbox an agent can rewrite anything the user can, the task directory included:
its hidden tests, but also task.toml, instruction.md, solution/, flawed/ and repo/, which later
runs, the sim and `bench validate` read. `TaskFiles.capture` copies every file of the task
directory before the agent starts; after it, `changes` lists what differs and `restore` puts the
copy back. Files past `MAX_COPY_BYTES` in all are kept as a digest only: a change to one is found
but cannot be undone (the grade says so). Special files are never opened (`read_regular`).
"""

from __future__ import annotations

import hashlib
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from loopwright._fs import SpecialFileError, read_regular

__all__ = ["MAX_COPY_BYTES", "TaskFiles"]

MAX_COPY_BYTES = 64 * 1024 * 1024
_SKIPPED = frozenset({"__pycache__", ".pytest_cache", ".mypy_cache"})


@dataclass(frozen=True, slots=True)
class _Entry:
    content: bytes | None  # None: past the copy budget, `digest` only
    digest: bytes
    link: str | None = None  # a symlink's target (content and digest then describe the link)


@dataclass(frozen=True, slots=True)
class TaskFiles:
    """Every file (and symlink) under a task directory, by '/'-separated path relative to it."""

    entries: dict[str, _Entry]

    @classmethod
    def capture(cls, root: Path) -> TaskFiles:
        """Read the whole task directory now. Raises OSError when a file cannot be read."""
        entries: dict[str, _Entry] = {}
        budget = MAX_COPY_BYTES
        for rel, path in _walk(root):
            entry = _entry(path, keep=budget > 0)
            if entry is None:
                continue
            budget -= len(entry.content or b"")
            entries[rel] = entry
        return cls(entries)

    def changes(self, root: Path) -> list[str]:
        """The paths (relative to `root`) added, deleted or changed since the capture, sorted."""
        now = dict(_walk(root))
        changed = set(now) ^ set(self.entries)
        for rel in set(now) & set(self.entries):
            current = _entry(now[rel], keep=False)
            if current is None or current.digest != self.entries[rel].digest:
                changed.add(rel)
        return sorted(changed)

    def restore(self, root: Path, changed: list[str]) -> list[str]:
        """Put each of `changed` (from `changes`) back as captured: remove what was added, write
        back what was deleted or changed. Returns the paths that could not be put back (kept as
        a digest only)."""
        lost = []
        for rel in changed:
            target = root / rel
            if target.is_dir() and not target.is_symlink():
                shutil.rmtree(target)
            elif target.is_symlink() or target.exists():
                target.unlink()
            entry = self.entries.get(rel)
            if entry is None:
                continue
            _real_parents(root, rel)
            if entry.link is not None:
                target.symlink_to(entry.link)
            elif entry.content is not None:
                target.write_bytes(entry.content)
            else:
                lost.append(rel)
        return lost

    def file(self, rel: str) -> bytes | None:
        """The captured content of the regular file `rel` (None when absent, a symlink or past
        the copy budget)."""
        entry = self.entries.get(rel)
        return entry.content if entry is not None and entry.link is None else None


def _walk(root: Path) -> list[tuple[str, Path]]:
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIPPED)
        for name in (*sorted(filenames), *(d for d in dirnames if Path(dirpath, d).is_symlink())):
            path = Path(dirpath) / name
            found.append((path.relative_to(root).as_posix(), path))
    return found


def _entry(path: Path, *, keep: bool) -> _Entry | None:
    """The entry of `path`; a FIFO, socket or device is an entry that matches no capture."""
    if path.is_symlink():
        target = str(path.readlink())
        return _Entry(target.encode(), _digest(b"link:" + target.encode()), target)
    try:
        content = read_regular(path)
    except FileNotFoundError:
        return None
    except SpecialFileError:
        return _Entry(None, b"special")
    return _Entry(content if keep else None, _digest(content))


def _digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


def _real_parents(root: Path, rel: str) -> None:
    """Make every directory on the way to `root/rel` a real directory (a symlink or a file the
    agent put there is removed), so the write lands inside the task directory."""
    current = root
    for part in Path(rel).parts[:-1]:
        current = current / part
        if current.is_symlink() or (current.exists() and not current.is_dir()):
            current.unlink()
        current.mkdir(exist_ok=True)
