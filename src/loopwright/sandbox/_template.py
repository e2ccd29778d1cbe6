"""Workspace templates: a source tree with its base commit, kept in memory and written out again.

Committing a task's repo/ costs three git processes (init, add, commit), about as long as a
small test run. The result depends only on the source's files, so the first workspace made
from a source is read back into memory, `.git` included, and later workspaces of the same
source are written from there. In memory, not on disk: an unsandboxed agent could rewrite a
template directory and so every later workspace. A source whose files changed (by path, type,
size, mode or modification time) is committed afresh; a source larger than `MAX_TEMPLATE_BYTES`
is never kept.
"""

from __future__ import annotations

import os
import stat
import threading
from dataclasses import dataclass
from pathlib import Path

from loopwright._fs import read_regular

__all__ = ["MAX_TEMPLATE_BYTES", "Template", "cached_template", "read_template", "signature"]

MAX_TEMPLATE_BYTES = 64 * 1024 * 1024
"""The most file content one kept template may hold."""

_SKIPPED = frozenset({".git", "__pycache__"})  # never copied from a source (create_workspace)

Signature = tuple[tuple[str, int, int, int], ...]  # (relative path, mode, size, mtime_ns)


@dataclass(frozen=True, slots=True)
class _Entry:
    rel: str
    mode: int
    content: bytes | None  # None for a directory or a symlink
    link: str | None  # a symlink's target


@dataclass(frozen=True, slots=True)
class Template:
    """A workspace as it was right after its base commit: every entry, `.git` included."""

    signature: Signature
    base_commit: str
    entries: tuple[_Entry, ...]

    def write(self, dest: Path) -> None:
        """Recreate the workspace in the existing, empty directory `dest`."""
        base = f"{os.fspath(dest)}/"  # plain strings and descriptors: no Path or file objects
        for entry in self.entries:  # parents come before children (walk order)
            target = base + entry.rel
            if entry.link is not None:
                os.symlink(entry.link, target)  # noqa: PTH211  (strings: see above)
            elif entry.content is None:
                os.mkdir(target, 0o700)  # noqa: PTH102
                os.chmod(target, stat.S_IMODE(entry.mode))  # noqa: PTH101
            else:
                fd = os.open(
                    target,
                    os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC,
                    stat.S_IMODE(entry.mode),
                )
                try:
                    view = memoryview(entry.content)
                    while view:
                        view = view[os.write(fd, view) :]
                finally:
                    os.close(fd)


def signature(source: Path) -> Signature:
    """What identifies `source`'s content cheaply: every kept entry's path, mode, size and
    modification time (lstat), in walk order. Deterministic for an unchanged tree."""
    found: list[tuple[str, int, int, int]] = []
    for rel, info in _walk(source, skip=_SKIPPED):
        found.append((rel, info.st_mode, info.st_size, info.st_mtime_ns))
    return tuple(found)


def read_template(workspace: Path, sig: Signature, base_commit: str) -> Template | None:
    """The template of a freshly committed workspace, or None when its files exceed
    MAX_TEMPLATE_BYTES."""
    entries, total = [], 0
    for rel, info in _walk(workspace, skip=frozenset()):
        path = workspace / rel
        if stat.S_ISLNK(info.st_mode):
            entries.append(_Entry(rel, info.st_mode, None, str(path.readlink())))
        elif stat.S_ISDIR(info.st_mode):
            entries.append(_Entry(rel, info.st_mode, None, None))
        else:
            total += info.st_size
            if total > MAX_TEMPLATE_BYTES:
                return None
            entries.append(_Entry(rel, info.st_mode, read_regular(path), None))
    return Template(sig, base_commit, tuple(entries))


class _Cache:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_source: dict[str, Template] = {}

    def get(self, source: Path, sig: Signature) -> Template | None:
        with self._lock:
            template = self._by_source.get(str(source))
        return template if template is not None and template.signature == sig else None

    def put(self, source: Path, template: Template) -> None:
        with self._lock:
            self._by_source[str(source)] = template


cached_template = _Cache()
"""This process's templates, by resolved source path."""


def _walk(root: Path, *, skip: frozenset[str]) -> list[tuple[str, os.stat_result]]:
    """(relative path, lstat) of every entry under `root`, parents before children, sorted
    within a directory; directories named in `skip` are left out with their contents."""
    found: list[tuple[str, os.stat_result]] = []
    stack = [""]
    while stack:
        rel_dir = stack.pop()
        with os.scandir(root / rel_dir if rel_dir else root) as listing:
            children = sorted(listing, key=lambda e: e.name)
        subdirs = []
        for child in children:
            if child.name in skip and child.is_dir(follow_symlinks=False):
                continue
            rel = f"{rel_dir}/{child.name}" if rel_dir else child.name
            info = child.stat(follow_symlinks=False)
            found.append((rel, info))
            if stat.S_ISDIR(info.st_mode):
                subdirs.append(rel)
        stack.extend(reversed(subdirs))
    return found
