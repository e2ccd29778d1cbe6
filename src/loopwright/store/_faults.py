"""A full disk, said once and clearly: the run stops, names the cause, the path and the fix.

A full disk (or quota) shows up as an OSError (ENOSPC, EDQUOT) from a file write, as SQLite's
"database or disk is full" from the run index, or, inside a task run, as the text of such an
error in the run's recorded error. Whichever comes first, the run must stop (a run recorded as
failed because the disk was full is not a result) with one paragraph, not a chained traceback:
every file a run writes is written atomically or line by line, so the run resumes after space
is freed.
"""

from __future__ import annotations

import errno
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from loopwright.errors import UserError

__all__ = [
    "DiskFullError",
    "disk_full_cause",
    "disk_full_error",
    "disk_full_text",
    "out_of_space",
    "refuse_disk_full",
]

_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})
_MARKERS = ("No space left on device", "Disk quota exceeded", "database or disk is full")


class DiskFullError(UserError):
    """The disk (or quota) holding a run filled up; the run stopped and can be resumed."""


def disk_full_text(text: str | None) -> bool:
    """Whether an error message is that of a full disk (an errno's or SQLite's wording)."""
    return text is not None and any(marker in text for marker in _MARKERS)


def disk_full_cause(exc: BaseException) -> BaseException | None:
    """The full-disk error in `exc` or the exceptions it was raised from or during, if any."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OSError) and current.errno in _ERRNOS:
            return current
        if isinstance(current, DiskFullError) or disk_full_text(str(current)):
            return current  # also SQLite's error, and one a step re-raised with its text
        current = current.__cause__ or current.__context__
    return None


def refuse_disk_full(error: str | None, where: Path) -> None:
    """Raise OSError(ENOSPC) for `where` when a task run's recorded error is a full disk's:
    that run is not a result to keep (it would be a zero the resumed run does not repeat)."""
    if disk_full_text(error):
        raise OSError(errno.ENOSPC, "No space left on device (met by a task run)", str(where))


@contextmanager
def out_of_space(run_dir: Path, *, resume: str) -> Iterator[None]:
    """Turn a full disk met inside the block into a DiskFullError naming the cause, the path
    (the file the OS named, else `run_dir`) and the fix (free space, then `resume`)."""
    try:
        yield
    except DiskFullError:
        raise
    except Exception as exc:
        cause = disk_full_cause(exc)
        if cause is None:
            raise
        raise disk_full_error(run_dir, cause, resume=resume) from None


def disk_full_error(run_dir: Path, cause: BaseException, *, resume: str) -> DiskFullError:
    """The one-paragraph error for a full disk met while writing `run_dir`."""
    where = getattr(cause, "filename", None) or run_dir
    reason = getattr(cause, "strerror", None) or str(cause).splitlines()[0]
    return DiskFullError(
        f"the run stopped: no space left on the disk holding {where} "
        "(no space left on device / database or disk is full)",
        got=f"{type(cause).__name__}: {reason}",
        fix=f"free space on that filesystem (or move the run), then continue it: {resume}",
    )
