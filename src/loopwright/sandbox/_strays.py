"""Finding what a command left behind after it killed its process reaper (Linux /proc).

The reaper (`_reaper.py`) inherits every orphan of its command and kills them all when the command
ends, but it runs as the same user as the command, which can kill it (`kill -9 $PPID`). Then the
command's orphans are reparented to init, out of any subtree `run_process` can walk. They are found
by what they inherited from the command, which a daemon keeps unless it takes care to drop it: one
of the command's output pipes among its open files, or the command's marker entry (the local
sandbox's private `HOME=...`, unique to one command) in its environment. Best effort: a daemon that
closed every inherited file and replaced its environment (`exec env -i ...`) is not found.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

__all__ = ["kill_strays", "pipe_names"]

_GIVE_UP_S = 2.0  # how long to keep killing strays that keep appearing (a fork loop)


def pipe_names(fds: list[int]) -> frozenset[str]:
    """How /proc shows each of these pipe descriptors (`pipe:[inode]`)."""
    return frozenset(f"pipe:[{os.fstat(fd).st_ino}]" for fd in fds)


def kill_strays(marker: bytes | None, pipes: frozenset[str]) -> list[int]:
    """SIGKILL, again and again (for at most `_GIVE_UP_S`), every other process that holds one of
    `pipes` or has the environment entry `marker` (`b"HOME=/tmp/lw-home-..."`); return the PIDs
    killed. This process itself is never one."""
    killed: list[int] = []
    give_up = time.monotonic() + _GIVE_UP_S
    while time.monotonic() < give_up:
        strays = _strays(marker, pipes)
        if not strays:
            break
        for pid in strays:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        killed += [pid for pid in strays if pid not in killed]
        time.sleep(0.01)
    return killed


def _strays(marker: bytes | None, pipes: frozenset[str]) -> list[int]:
    me = str(os.getpid())
    return [
        int(entry.name)
        for entry in Path("/proc").iterdir()
        if entry.name.isdigit() and entry.name != me and _inherited(entry, marker, pipes)
    ]


def _inherited(proc: Path, marker: bytes | None, pipes: frozenset[str]) -> bool:
    try:
        if marker is not None and marker in (proc / "environ").read_bytes().split(b"\0"):
            return True
        fds = list((proc / "fd").iterdir())
    except OSError:  # gone meanwhile, or not ours to read
        return False
    for fd in fds:
        with contextlib.suppress(OSError):
            if str(fd.readlink()) in pipes:
                return True
    return False
