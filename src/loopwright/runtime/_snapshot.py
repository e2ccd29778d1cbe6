"""Which files a node produced: cheap snapshots of the workspace compared before and after."""

from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass
from pathlib import Path

from loopwright._fs import read_regular

__all__ = ["Snapshot", "produced_files", "take_snapshot"]

_SKIPPED = frozenset({".git", "__pycache__", ".pytest_cache", ".mypy_cache"})
# A file modified this close to the snapshot may change again without its mtime moving
# (file times tick coarsely), so its content is hashed too: git's "racy clean" rule.
_RACY_S = 2.0


@dataclass(frozen=True, slots=True)
class _Entry:
    size: int
    mtime_ns: int
    digest: bytes | None  # set for racy files only


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The workspace's files (relative '/' paths) with size, mtime and, for recently modified
    files, a content hash. Symlinks are recorded by their own stat, not followed."""

    root: Path
    files: dict[str, _Entry]


def _digest(path: Path) -> bytes | None:
    try:
        return hashlib.blake2b(read_regular(path), digest_size=16).digest()
    except OSError:
        return None


def take_snapshot(root: Path) -> Snapshot:
    """Snapshot every file under `root`, skipping .git and cache directories."""
    racy_after = time.time_ns() - int(_RACY_S * 1e9)
    files: dict[str, _Entry] = {}
    for directory, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d not in _SKIPPED]
        for name in names:
            path = Path(directory, name)
            try:
                st = path.lstat()
            except OSError:
                continue
            racy = st.st_mtime_ns >= racy_after and not path.is_symlink()
            rel = path.relative_to(root).as_posix()
            files[rel] = _Entry(st.st_size, st.st_mtime_ns, _digest(path) if racy else None)
    return Snapshot(root, files)


def produced_files(before: Snapshot, after: Snapshot) -> list[str]:
    """Files added, modified or deleted between two snapshots of the same root, sorted."""
    changed = set(before.files) ^ set(after.files)
    for rel in set(before.files) & set(after.files):
        old, new = before.files[rel], after.files[rel]
        if (old.size, old.mtime_ns) != (new.size, new.mtime_ns):
            changed.add(rel)
        elif old.digest is not None:
            now = new.digest if new.digest is not None else _digest(after.root / rel)
            if now != old.digest:
                changed.add(rel)
    return sorted(changed)
