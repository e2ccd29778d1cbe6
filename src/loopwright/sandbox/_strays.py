"""Finding what a command left behind after it killed its process reaper (Linux /proc).

The reaper (`_reaper.py`) inherits every orphan of its command and kills them all when the command
ends, but it runs as the same user as the command, which can kill it (`kill -9 $PPID`). Two nets
catch what the command orphaned then:

1. **Adoption** (`adopting`, `kill_adopted`). While a reaped command runs, this process (the host)
   is a child subreaper itself, so the orphans of a killed reaper are reparented to the host, not
   to init: nothing the command starts can leave the host's process tree. The command runs with
   no_new_privs (the reaper sets it before the exec), a flag that every descendant inherits and
   none can clear, not even root; the host itself has it clear. So a child of the host that has
   it, and is not a process the host started (`run_process` claims each one), was adopted from a
   killed reaper: it and everything below it are killed. Only those are ever reaped here (by
   PID, never `waitpid(-1)`, which would take exit statuses from `subprocess.Popen`). Not
   available where the host already has no_new_privs (a container or service started with it)
   or cannot be a subreaper (no prctl).
2. **Inheritance** (`kill_strays`): every process that holds one of the command's output pipes,
   or has the command's marker entry (the local sandbox's private `HOME=...`, unique to one
   command) in its environment. Best effort: a daemon that closed every inherited file and
   replaced its environment (`exec env -i ...`) is not found this way.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from loopwright.sandbox._reaper import children, descendants

__all__ = [
    "adopting",
    "alone",
    "claim",
    "host_can_adopt",
    "kill_adopted",
    "kill_strays",
    "pipe_names",
    "release",
    "starting",
]

_GIVE_UP_S = 2.0  # how long to keep killing strays that keep appearing (a fork loop)
_PR_SET_CHILD_SUBREAPER = 36
_PR_GET_CHILD_SUBREAPER = 37
_lock = threading.Lock()  # guards the counts below and the subreaper switch
_running = 0  # reaped commands now running in this process (any thread)
_was_subreaper = False  # this process was a subreaper before the first command: leave it on
_own: dict[int, int] = {}  # PIDs run_process started and has not reaped yet, with counts
_host_reaped = 0  # host-reaped commands (no reaper of their own) now running in this process


def _forget_after_fork() -> None:
    """In a forked child: no command runs there yet, it is no subreaper (fork does not pass that
    on), and a lock another thread of the parent held at the fork would never be released."""
    global _lock, _gate, _running, _was_subreaper, _own, _host_reaped
    _lock, _gate = threading.Lock(), _Gate()
    _running, _was_subreaper, _own, _host_reaped = 0, False, {}, 0


@functools.cache
def host_can_adopt() -> bool:
    """Whether this process can adopt its commands' orphans: Linux, a prctl, and no_new_privs
    clear here (else it would not mark anything). Cached."""
    if sys.platform != "linux" or _libc() is None:
        return False
    try:
        status = Path("/proc/self/status").read_text()
    except OSError:
        return False
    return "NoNewPrivs:\t0" in status


@contextlib.contextmanager
def adopting(wanted: bool = True) -> Iterator[bool]:
    """Make this process a child subreaper for as long as any command in it runs under this (in
    any thread); yield whether it is one. Switched off again after the last, unless it already
    was one before: the orphans of this process's own other children go to init, as usual, while
    no command runs."""
    global _running, _was_subreaper
    on = False
    if wanted and host_can_adopt():
        with _lock:
            if _running == 0:
                _was_subreaper = _is_subreaper()
            on = _running > 0 or _was_subreaper or _prctl(_PR_SET_CHILD_SUBREAPER, 1)
            _running += on
    try:
        yield on
    finally:
        if on:
            with _lock:
                _running -= 1
                if _running == 0 and not _was_subreaper:
                    _prctl(_PR_SET_CHILD_SUBREAPER, 0)


@contextlib.contextmanager
def alone(wanted: bool) -> Iterator[bool]:
    """Yield whether a command may run host-reaped now (when `wanted`): under a shell, with no
    reaper of its own, so that what it orphans is adopted by this process at once (within
    `adopting`) and swept by `kill_adopted` when it ends. Only one such command at a time: the
    sweep cannot tell the orphans of one command from another's, and would kill a daemon that a
    command still running had started. The others run under the reaper meanwhile, which keeps
    their orphans to itself."""
    global _host_reaped
    on = False
    if wanted:
        with _lock:
            on = _host_reaped == 0
            _host_reaped += on
    try:
        yield on
    finally:
        if on:
            with _lock:
                _host_reaped -= 1


class _Gate:
    """Starting a process (until it is claimed) and sweeping exclude each other: a child the host
    just started, not claimed yet, is never taken for an adopted one. Starts run together; a
    waiting sweep goes before new starts."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._starting = 0
        self._sweeps = 0  # waiting or running
        self._sweeping = False

    @contextlib.contextmanager
    def start(self) -> Iterator[None]:
        with self._cond:
            self._cond.wait_for(lambda: not self._sweeps)
            self._starting += 1
        try:
            yield
        finally:
            with self._cond:
                self._starting -= 1
                self._cond.notify_all()

    @contextlib.contextmanager
    def sweep(self) -> Iterator[None]:
        with self._cond:
            self._sweeps += 1
            self._cond.wait_for(lambda: not self._starting and not self._sweeping)
            self._sweeping = True
        try:
            yield
        finally:
            with self._cond:
                self._sweeps -= 1
                self._sweeping = False
                self._cond.notify_all()


_gate = _Gate()
os.register_at_fork(after_in_child=_forget_after_fork)


def starting() -> contextlib.AbstractContextManager[None]:
    """Hold this around starting a child and `claim`ing it."""
    return _gate.start()


def claim(pid: int) -> None:
    """`pid` is this process's own child (started by `run_process`) until `release(pid)`: a sweep
    never touches it, even with no_new_privs (bwrap sets it on itself)."""
    with _lock:
        _own[pid] = _own.get(pid, 0) + 1


def release(pid: int) -> None:
    with _lock:
        _own[pid] -= 1
        if not _own[pid]:
            del _own[pid]


def kill_adopted() -> list[int]:
    """SIGKILL, again and again (for at most `_GIVE_UP_S`), every child of this process that has
    no_new_privs and is not claimed, and everything below it, and reap those children; return
    the PIDs killed. Call it after a reaper died by a signal, within `adopting`."""
    host, killed = os.getpid(), []
    give_up = time.monotonic() + _GIVE_UP_S
    with _gate.sweep():
        while True:
            table = children()
            with _lock:
                own = set(_own)
            roots = [pid for pid in table.get(host, []) if pid not in own and _marked(pid)]
            if not roots:
                break
            targets = roots + [pid for root in roots for pid in descendants(root, table)]
            for pid in targets:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            for pid in roots:  # ours now: reap them (a root not dead yet is seen again)
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(pid, os.WNOHANG)
            killed += [pid for pid in targets if pid not in killed]
            if time.monotonic() >= give_up:
                break
            time.sleep(0.002)
    return killed


def _marked(pid: int) -> bool:
    """Whether `pid` has no_new_privs (a zombie still shows it)."""
    try:
        return "NoNewPrivs:\t1" in Path(f"/proc/{pid}/status").read_text()
    except OSError:  # gone meanwhile
        return False


@functools.cache
def _libc() -> ctypes.CDLL | None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
        libc.prctl.restype = ctypes.c_int
    except (OSError, AttributeError):  # no C library to open, or no prctl in it
        return None
    return libc


def _prctl(option: int, value: int) -> bool:
    libc = _libc()
    return libc is not None and libc.prctl(option, value, 0, 0) == 0


def _is_subreaper() -> bool:
    flag = ctypes.c_int(0)
    libc = _libc()
    ok = libc is not None and libc.prctl(_PR_GET_CHILD_SUBREAPER, ctypes.addressof(flag), 0, 0) == 0
    return ok and bool(flag.value)


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
