"""One loopwright-owned directory for a process's temporary files, removed on every exit path.

Workspaces, grading copies and worker logs are made with `tempfile` (`lw-*` directories). Inside
`process_scratch()` they all land in `<tmp>/loopwright-<uid>/<pid>-<start>-<pid namespace>/` (`tempfile.tempdir`
points there, and forked workers inherit it), which is removed when the block ends: normally,
on an exception, Ctrl-C or SIGTERM (the CLI turns SIGTERM into KeyboardInterrupt). A process
killed outright (SIGKILL, the OOM killer) cannot clean up: the next `process_scratch()` removes
every directory there whose process is gone (its pid, in this pid namespace, not alive with
the same start time).

The CLI wraps every command in it; a Python user may wrap their own calls. A top-level module
(like _fs.py) so that every package's temporary files share it.

Small files that live for one step and are removed by it (a grade's private kit and results)
go to memory-backed storage where there is some (`memory_scratch`: `/dev/shm/loopwright-<uid>/`
and the same per-process name), not to the system temp dir: on a disk file system shared with
other work, creating and removing a handful of files cost several milliseconds of CPU a grade,
and varied with the others' I/O. `process_scratch` removes this process's directory there too,
and those of dead processes.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

__all__ = [
    "MEMORY_MIN_FREE",
    "MEMORY_ROOT",
    "SCRATCH_PREFIX",
    "memory_scratch",
    "process_scratch",
    "remove_stale",
    "scratch_parent",
]

SCRATCH_PREFIX = "loopwright-"
MEMORY_ROOT = Path("/dev/shm")
"""Memory-backed storage (a tmpfs on Linux), for `memory_scratch`."""
MEMORY_MIN_FREE = 256 * 1024 * 1024
"""The free space `memory_scratch` asks of MEMORY_ROOT (a container's default 64 MB is too small
to hold a large junit report beside other users' files): below it, the system temp dir is used."""

# The directory of the outermost `process_scratch` block in this process (inherited by forked
# children, which work inside it); empty outside one.
_ACTIVE: list[Path] = []


def scratch_parent() -> Path | None:
    """`<system tmp>/loopwright-<uid>` (created 0700), or None when it exists but is not
    this user's own private directory (then nothing is put there and nothing removed)."""
    system_tmp = _ACTIVE[0].parent.parent if _ACTIVE else Path(tempfile.gettempdir())
    return _own_parent(system_tmp)


def _own_parent(root: Path, *, create: bool = True) -> Path | None:
    """`root/loopwright-<uid>`, created 0700 (with `create`); None when it is not this user's
    private directory (or, without `create`, does not exist)."""
    parent = root / f"{SCRATCH_PREFIX}{os.getuid()}"
    if create:
        with contextlib.suppress(FileExistsError):
            parent.mkdir(mode=0o700)
    try:
        info = parent.lstat()
    except OSError:
        return None
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        return None  # a symlink or another user's directory planted at the name: not ours
    return parent


def memory_scratch() -> Path | None:
    """This process's directory in memory-backed storage, `MEMORY_ROOT/loopwright-<uid>/<pid>-
    <start>-<pid namespace>` (created 0700), for small files a step writes and removes again;
    None where there is none to use (no MEMORY_ROOT, less than MEMORY_MIN_FREE free in it, not
    writable, or the parent not this user's own): then the caller uses the system temp dir.
    Removed at this process's normal exit, by `process_scratch` when its block ends, or by a
    later one once this process is gone (killed outright)."""
    try:
        free = os.statvfs(MEMORY_ROOT)
        if free.f_bavail * free.f_frsize < MEMORY_MIN_FREE:
            return None
        parent = _own_parent(MEMORY_ROOT)
        if parent is None:
            return None
        own = parent / _own_name()
        own.mkdir(mode=0o700, exist_ok=True)
    except OSError:
        return None
    if os.getpid() not in _MEMORY_EXIT:  # once a process (a forked child registers its own)
        _MEMORY_EXIT.add(os.getpid())
        atexit.register(_rmtree_if_mine, own, os.getpid())
    return own


_MEMORY_EXIT: set[int] = set()  # processes whose memory directory is removed at their exit


def _rmtree_if_mine(path: Path, pid: int) -> None:
    """Remove `path` at a normal exit of process `pid` (not of a forked child that inherited the
    handler: it exits through its own)."""
    if os.getpid() == pid:
        with contextlib.suppress(OSError):
            _rmtree(path)


@contextlib.contextmanager
def process_scratch() -> Iterator[Path | None]:
    """Route this process's temporary files into its own directory for the block (see the
    module doc); yields it (None when no private parent could be made: the system temp dir
    is used as before). Removes stale directories of dead processes first. Not reentrant:
    a nested call leaves the outer directory in place."""
    if _ACTIVE:
        yield _ACTIVE[0]  # already inside one (a command calling another, a forked worker)
        return
    parent = None
    with contextlib.suppress(OSError):
        parent = scratch_parent()
    if parent is None:
        yield None
        return
    remove_stale(parent)
    memory = _own_parent(MEMORY_ROOT, create=False)
    if memory is not None:
        remove_stale(memory)
    own = parent / _own_name()
    own.mkdir(mode=0o700, exist_ok=True)
    before = tempfile.tempdir
    tempfile.tempdir = str(own)
    _ACTIVE.append(own)
    try:
        yield own
    finally:
        _ACTIVE.clear()
        tempfile.tempdir = before
        _rmtree(own)
        memory = _own_parent(MEMORY_ROOT, create=False)
        if memory is not None and (memory / _own_name()).exists():
            _rmtree(memory / _own_name())


def remove_stale(parent: Path) -> list[Path]:
    """Remove the directories under `parent` left by processes that are gone; return them."""
    removed = []
    for entry in sorted(parent.iterdir()):
        parts = entry.name.split("-")
        if len(parts) != 3 or not all(p.isdigit() for p in parts) or entry.is_symlink():
            continue
        pid, start, space = (int(p) for p in parts)
        if space != _pid_space() or _start_time(pid) == start:
            continue  # its process is alive, or in another pid namespace (cannot tell)
        _rmtree(entry)
        removed.append(entry)
    return removed


def _own_name() -> str:
    """`<pid>-<start time>-<pid namespace>`, zero-padded to one length: workspace paths (which
    prompts show) are as long in every process, so token counts do not depend on the pid."""
    pid = os.getpid()
    return f"{pid:010d}-{_start_time(pid):020d}-{_pid_space():012d}"


def _pid_space() -> int:
    """This process's pid namespace (a container has its own: its pids mean nothing here)."""
    try:
        return Path("/proc/self/ns/pid").stat().st_ino
    except OSError:
        return 0


def _start_time(pid: int) -> int:
    """The process's start time in clock ticks since boot (with the pid, a name no later
    process reuses); 0 when there is no such process, or no /proc to ask."""
    try:
        stat_line = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return 0
    fields = stat_line[stat_line.rfind(")") + 2 :].split()
    return int(fields[19]) if len(fields) > 19 and fields[19].isdigit() else 0


def _rmtree(path: Path) -> None:
    """Remove `path`, restoring write permission an agent took from directories in it."""

    def retry(func: object, name: str, _exc: object) -> None:
        target = Path(name)
        with contextlib.suppress(OSError):
            target.parent.chmod(stat.S_IRWXU)
            if target.is_dir() and not target.is_symlink():
                target.chmod(stat.S_IRWXU)
                shutil.rmtree(target, ignore_errors=True)
            else:
                target.unlink()

    shutil.rmtree(path, onerror=retry)
