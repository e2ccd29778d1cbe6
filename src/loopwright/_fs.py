"""Writing into a run directory without following a symlink an agent planted there.

An agent works beside the run directory (with the local sandbox it can write anywhere the user
can), so a name loopwright writes may have become a symlink to a file elsewhere: writing
through it would change that file. Every file loopwright writes into a task-run directory goes
through `atomic_write` (whole files) or `open_append` (append-only logs), which never follow a
symlink at the name they write: they replace it.

A top-level module (like errors.py) so that every package, `records` included, can use it; a
future `store.RunDir`, owning the run directory's layout and every write into it, will own it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from pathlib import Path

__all__ = [
    "SpecialFileError",
    "atomic_write",
    "drop_torn_tail",
    "is_atomic_temp",
    "open_append",
    "read_regular",
    "write_all",
]

_TEMP_ATTEMPTS = 16


def atomic_write(path: Path, data: bytes | str) -> None:
    """Replace the file at `path` with `data` (str is written as UTF-8), atomically.

    The data goes to a new temporary file in the same directory (created with O_EXCL and
    O_NOFOLLOW, so it is loopwright's own), is fsynced, then renamed over `path`: a reader
    sees the old file or the new one, never part of it, and whatever was at `path` (a file,
    or a symlink, which is replaced itself, its target untouched) is gone. The temporary name
    is `.<name>.<random>.tmp` and is removed when the write fails. Raises OSError when the
    directory is missing or not writable, or `path` is a directory.
    """
    payload = data.encode("utf-8") if isinstance(data, str) else data
    directory = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        # Every step is relative to the one directory opened above, so the temporary file and
        # the rename land in the same place even if the path is changed meanwhile.
        temp, fd = _create_temp(directory, path.name)
        try:
            try:
                write_all(fd, payload)
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(temp, path.name, src_dir_fd=directory, dst_dir_fd=directory)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=directory)
            raise
    finally:
        os.close(directory)


def is_atomic_temp(name: str) -> bool:
    """True for the name of an `atomic_write` temporary file (`.<name>.<12 hex>.tmp`): what a
    write a kill cut off leaves behind, never a file of its own."""
    parts = name.split(".")
    return (
        len(parts) >= 4 and parts[0] == "" and parts[-1] == "tmp" and len(parts[-2]) == 12
        and all(c in "0123456789abcdef" for c in parts[-2])
    )  # fmt: skip


def open_append(path: Path) -> int:
    """A file descriptor (read-write, O_APPEND) on the regular file at `path`, created if
    missing. A symlink at `path` is never followed: it is replaced by a new empty file. The
    caller closes the descriptor. Raises OSError when it cannot be opened (e.g. a symlink was
    put back between the replacement and the second open)."""
    flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        return os.open(path, flags, 0o666)
    except OSError as exc:
        if exc.errno != errno.ELOOP:  # ELOOP: the last component is a symlink
            raise
    atomic_write(path, b"")
    return os.open(path, flags, 0o666)


def _create_temp(directory: int, name: str) -> tuple[str, int]:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    for _ in range(_TEMP_ATTEMPTS):
        temp = f".{name}.{secrets.token_hex(6)}.tmp"
        try:
            return temp, os.open(temp, flags, 0o666, dir_fd=directory)
        except FileExistsError:
            continue  # a name taken (by anyone): draw another
    raise FileExistsError(errno.EEXIST, f"no free temporary name for {name}")


def write_all(fd: int, payload: bytes) -> None:
    """Write all of `payload` to `fd` (os.write may write less than asked)."""
    view = memoryview(payload)
    while view:
        view = view[os.write(fd, view) :]


def drop_torn_tail(fd: int) -> int:
    """Cut off the end of the file open at `fd` after its last newline: a line a kill left
    half-written (an incomplete record, so nothing valid is lost). Returns the bytes cut; 0 for
    an empty file or one that ends with a newline. Run before appending to a log that is
    reopened (a resumed run), so the next line starts on a line of its own."""
    size = os.fstat(fd).st_size
    if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
        return 0
    keep, end = 0, size
    while end > 0:
        start = max(0, end - _TAIL_CHUNK)
        found = os.pread(fd, end - start, start).rfind(b"\n")
        if found >= 0:
            keep = start + found + 1
            break
        end = start
    os.ftruncate(fd, keep)
    return size - keep


_TAIL_CHUNK = 1 << 16


class SpecialFileError(OSError):
    """A path that `read_regular` refuses: not a regular file (a FIFO, a device, a socket, a
    symlink or a directory). An agent can make any workspace name one of these; opening a FIFO
    blocks until a writer comes, so loopwright never opens one."""


def read_regular(path: Path, *, limit: int | None = None) -> bytes:
    """The content of the regular file at `path` (at most `limit` bytes when given), never
    blocking on what an agent made special.

    `path` is checked with lstat first, then opened with O_NONBLOCK and O_NOFOLLOW (an open
    that cannot block, and that refuses a symlink swapped in meanwhile) and checked again with
    fstat, so only a regular file is ever read: reading one does not block. Raises
    SpecialFileError (an OSError) for anything else, OSError when it cannot be read.
    """
    st = os.lstat(path)
    if not stat.S_ISREG(st.st_mode):
        raise SpecialFileError(errno.EINVAL, f"not a regular file ({_kind(st.st_mode)})", str(path))
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENXIO):  # swapped for a symlink or a socket
            raise SpecialFileError(exc.errno, "not a regular file", str(path)) from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise SpecialFileError(
                errno.EINVAL, f"not a regular file ({_kind(st.st_mode)})", str(path)
            )
        chunks, left = [], limit if limit is not None else -1
        while left != 0:
            chunk = os.read(fd, 1 << 20 if left < 0 else min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left = left - len(chunk) if left > 0 else left
        return b"".join(chunks)
    finally:
        os.close(fd)


def _kind(mode: int) -> str:
    kinds = (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISLNK, "a symlink"),
        (stat.S_ISDIR, "a directory"),
    )
    return next((name for test, name in kinds if test(mode)), "a special file")
