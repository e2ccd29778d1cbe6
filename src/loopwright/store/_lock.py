"""One process per run directory: an exclusive, non-blocking `flock` on a lock file."""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path
from types import TracebackType
from typing import Self

from loopwright.errors import UsageError

__all__ = ["DirLock", "lock_holder"]

# The descriptors of the locks this process holds. A forked child gets a copy of each, and a
# flock belongs to the open file description, not the process: a child that kept its copy
# (a pool worker, or an orphan after the main process was killed) would keep the run locked
# after the holder died. Every fork closes them in the child (`_close_in_child`).
_HELD: set[int] = set()


def _close_in_child() -> None:
    for fd in _HELD:
        with contextlib.suppress(OSError):
            os.close(fd)  # the parent's lock stays: it holds its own descriptor
    _HELD.clear()


os.register_at_fork(after_in_child=_close_in_child)


class DirLock:
    """An exclusive, non-blocking fcntl lock on `path`, held while the `with` block runs.

    Entering writes this process's pid into the file, and raises UsageError(`busy`, got the
    holder's pid, `fix`) when another process holds the lock. The OS drops the lock when the
    holder dies (even by SIGKILL), so a killed run can be resumed at once: no child inherits
    it (the descriptor is closed on exec and, in a forked child, at the fork). The file stays.
    """

    def __init__(self, path: Path, *, busy: str, fix: str) -> None:
        self.path = path
        self.busy, self.fix = busy, fix
        self._fd: int | None = None

    def __enter__(self) -> Self:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
            os.close(fd)
            raise UsageError(self.busy, got=f"lock held by pid {holder}", fix=self.fix) from None
        _HELD.add(fd)
        self._fd = fd
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, str(os.getpid()).encode(), 0)
        except BaseException:  # a full disk: the lock is released with the error
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._fd is not None:
            _HELD.discard(self._fd)
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


def lock_holder(path: Path) -> int | None:
    """The pid of the live process holding the DirLock at `path`, or None when no process holds
    it (no file, or its holder died: the OS dropped the lock with it). Read from the kernel's
    table of locks (/proc/locks), so looking never disturbs the run; where that table cannot be
    read, the lock is tried for an instant instead (a run starting at that very moment could
    then be refused once). Any process holding it counts, this one too."""
    try:
        st = path.stat()
    except OSError:
        return None
    found = _proc_locks_holder(st)
    if found is not _UNKNOWN:
        return found if isinstance(found, int) else None
    return _try_holder(path)


_UNKNOWN = object()


def _proc_locks_holder(st: os.stat_result) -> object:
    """The FLOCK holder of the file `st` in /proc/locks, None for no holder, _UNKNOWN when the
    table cannot be read."""
    device = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    try:
        table = Path("/proc/locks").read_text(encoding="ascii", errors="replace")
    except OSError:
        return _UNKNOWN
    for line in table.splitlines():
        fields = line.split()
        # "1: FLOCK  ADVISORY  WRITE 22092 fe:00:2147417 0 EOF" ("->" marks a waiter)
        if len(fields) >= 6 and fields[1] == "FLOCK" and fields[5] == device:
            return int(fields[4]) if fields[4].isdigit() else -1
    return None


def _try_holder(path: Path) -> int | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            text = os.pread(fd, 32, 0).decode(errors="replace").strip()
            return int(text) if text.isdigit() else -1
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)
