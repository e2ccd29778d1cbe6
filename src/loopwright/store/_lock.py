"""One process per run directory: an exclusive, non-blocking `flock` on a lock file."""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path
from types import TracebackType
from typing import Self

from loopwright.errors import UsageError

__all__ = ["DirLock"]

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
