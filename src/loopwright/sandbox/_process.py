"""Run one process to completion: a wall-clock timeout that kills its whole process group, output
capped but always drained, stdin fed without deadlock. Shared by every sandbox. With `reap=True`
(Linux), the command runs under the process reaper (`_reaper.py`), so nothing it starts outlives it.

One thread multiplexes the pipes and the process's exit (a pidfd where the kernel has one) with a
selector, so there are no reader threads to leak. The leader is not reaped until its group has
been killed (`waitid(WNOWAIT)`), so its process-group id cannot be reused by an unrelated process
before `killpg`.
"""

from __future__ import annotations

import contextlib
import functools
import io
import os
import selectors
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from loopwright.errors import SandboxError
from loopwright.sandbox._base import CommandResult
from loopwright.sandbox._reaper import descendants
from loopwright.sandbox._spawn import CHANNEL_ENV, host_reaper, launch
from loopwright.sandbox._strays import (
    adopting,
    alone,
    claim,
    kill_adopted,
    kill_strays,
    pipe_names,
    release,
    starting,
)

if TYPE_CHECKING:
    from _typeshed import FileDescriptorLike

__all__ = [
    "CHANNEL_ENV",
    "CHANNEL_OVERFLOW",
    "ProcessOutcome",
    "run_process",
    "to_result",
    "truncation_marker",
]

CHANNEL_OVERFLOW = b'\n{"kind": "overflow"}\n'
"""Appended to a channel's bytes when the command wrote more than `_CHANNEL_CAP`."""
_CHANNEL_CAP = 16_000_000

_CHUNK = 65536
_GRACE_S = 0.5  # between SIGTERM and SIGKILL at a timeout
_DRAIN_S = 1.0  # how long to keep reading after the command ended or was killed
_POLL_S = 0.05  # exit polling interval where there is no pidfd
_REAPER_WAIT_S = 5.0  # how long a reaper gets to clean up after its command was killed


@dataclass(slots=True)
class _Capture:
    """Keeps the first `cap` bytes of a stream and counts the rest."""

    cap: int
    kept: bytearray = field(default_factory=bytearray)
    dropped: int = 0

    def feed(self, chunk: bytes) -> None:
        room = self.cap - len(self.kept)
        if room > 0:
            self.kept += chunk[:room]
        self.dropped += max(0, len(chunk) - max(room, 0))


@dataclass(frozen=True, slots=True)
class ProcessOutcome:
    """The raw result of `run_process`: exit code (None when killed at the timeout, 128+N after a
    death by signal N), the kept
    bytes of each stream and how many bytes were dropped from each."""

    exit_code: int | None
    stdout: bytes
    stderr: bytes
    stdout_dropped: int
    stderr_dropped: int
    timed_out: bool
    duration_s: float
    channel: bytes | None = None


def truncation_marker(dropped: int) -> str:
    """The text appended to a stream that exceeded its cap."""
    return f"\n[... output truncated by loopwright: {dropped} bytes dropped]"


def to_result(argv: tuple[str, ...], outcome: ProcessOutcome, sandbox: str) -> CommandResult:
    """The CommandResult for `outcome`: streams decoded (UTF-8, errors replaced), markers added."""
    stdout = outcome.stdout.decode("utf-8", errors="replace")
    stderr = outcome.stderr.decode("utf-8", errors="replace")
    if outcome.stdout_dropped:
        stdout += truncation_marker(outcome.stdout_dropped)
    if outcome.stderr_dropped:
        stderr += truncation_marker(outcome.stderr_dropped)
    return CommandResult(
        argv=argv,
        exit_code=outcome.exit_code,
        stdout=stdout,
        stderr=stderr,
        timed_out=outcome.timed_out,
        truncated=bool(outcome.stdout_dropped or outcome.stderr_dropped),
        duration_s=outcome.duration_s,
        sandbox=sandbox,
        channel=outcome.channel,
    )


def run_process(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout_s: float,
    output_cap: int,
    stdin: bytes | None = None,
    reap: bool = False,
    adopt: bool = True,
    channel: bool = False,
    channel_at: int | None = None,
    marker: str | None = None,
) -> ProcessOutcome:
    """Run `argv` in a new session; wait at most `timeout_s` seconds of wall-clock time.

    At the timeout the whole process group gets SIGTERM, then SIGKILL after a short grace; so do
    descendants that left the group while the leader was alive. When the leader exits by itself,
    whatever it left running in its group is killed too.

    Without `reap`, processes that both left the group and were orphaned (a double-forked
    `setsid` daemon) outlive the command: only a PID namespace (bubblewrap's) catches those. With
    `reap` (Linux; elsewhere, or without `sys.executable`, it is ignored), the command runs under
    the process reaper, a child subreaper that inherits every orphan and, once the command has
    exited or was killed, kills and reaps all that is left before exiting with the command's
    status: then nothing the command started is alive when this returns, unless the command killed
    the reaper itself (a same-user process can). For that case, with `adopt` (where
    `host_can_adopt()`), this process is a child subreaper while the command runs and the command
    gets no_new_privs: what the command orphaned by killing the reaper is adopted by this process
    and, marked by that flag, killed and reaped before this returns. Then, too, every process that
    still holds one of the command's output pipes, or has the environment entry `marker`
    (`NAME=value`, unique to this command), is killed (sandbox/_strays.py). Stdin, output, timeout
    and exit code are the same either way.

    Host-reaped (with `reap` and adoption, where `host_reaper()` finds `setpriv`, and while no
    other command of this process runs so): the command runs under a marked shell instead of the
    Python reaper, this process adopts its orphans at once, and once the shell has exited (or
    was killed, or the command timed out) kills them and all below them (`kill_adopted`): the
    same guarantee without a second interpreter's start (sandbox/_spawn.py).

    With `channel`, the command inherits the write end of a pipe that is drained like its output
    (`ProcessOutcome.channel`): its number is in the command's `CHANNEL_ENV`, or it is moved to
    descriptor `channel_at` (for a client that passes descriptors by number; the caller then
    tells the command the number). Raises SandboxError when the process cannot be started.
    """
    started = time.monotonic()
    reaping = reap and reaper_supported()
    with (
        adopting(reaping and adopt) as adopts,
        alone(adopts and host_reaper() is not None) as by_host,
    ):
        with starting():
            proc, status_fd, reading = launch(
                argv, cwd, env, stdin is not None, reaping, adopts, channel, channel_at, by_host
            )
            claim(proc.pid)
        assert proc.stdout is not None and proc.stderr is not None  # PIPE was asked for
        pipes = pipe_names([proc.stdout.fileno(), proc.stderr.fileno()]) if reaping else frozenset()
        sweep = _Sweep() if by_host else None
        try:
            with _Watcher(proc, stdin or b"", output_cap, status_fd, reading, sweep) as watcher:
                timed_out = watcher.run(started + timeout_s)
        finally:
            release(proc.pid)
            if sweep is not None and not sweep.done:  # ended by an exception: sweep now
                sweep()
            if reaping and (proc.returncode or 0) < 0:  # the reaper was killed: orphans are loose
                if adopts and sweep is None:
                    kill_adopted()
                kill_strays(marker.encode() if marker else None, pipes)
    if watcher.status.kept:  # the reaper could not start the command
        reason = watcher.status.kept.decode("utf-8", errors="replace")
        raise SandboxError(f"cannot start {argv[0]!r}: {reason}")
    # A death by signal N is reported as 128+N, as a shell (and bwrap, for its child) reports it,
    # so that exit codes mean the same in every sandbox.
    code = proc.returncode
    exit_code = None if timed_out else (128 - code if code < 0 else code)
    out, err = watcher.captures
    return ProcessOutcome(
        exit_code=exit_code,
        stdout=bytes(out.kept),
        stderr=bytes(err.kept),
        stdout_dropped=out.dropped,
        stderr_dropped=err.dropped,
        timed_out=timed_out,
        duration_s=time.monotonic() - started,
        channel=watcher.channel_bytes(),
    )


class _Sweep:
    """What a host-reaped command left, killed once its shell has exited (`kill_adopted`): its
    orphans, every one adopted by this process, and all below them."""

    def __init__(self) -> None:
        self.done = False

    def __call__(self) -> None:
        if not self.done:
            self.done = True
            kill_adopted()


@functools.cache
def reaper_supported() -> bool:
    """Whether `run_process(reap=True)` can use the process reaper here: Linux with /proc and a
    known interpreter (`sys.executable`). Cached."""
    return sys.platform == "linux" and bool(sys.executable) and Path("/proc/self/stat").exists()


class _Watcher:
    """Multiplexes one process's pipes and exit; kills and reaps it. Use as a context manager.

    `status_fd` is the reaper's status pipe when `proc` is the process reaper: its content (an
    error starting the command) lands in `status`, and at a timeout the reaper is spared until
    its command is dead, so that it can kill and reap what is left. `channel_fd` is the read
    end of the command's outcome channel, drained into `channel`."""

    def __init__(
        self,
        proc: subprocess.Popen[bytes],
        stdin: bytes,
        cap: int,
        status_fd: int | None = None,
        channel_fd: int | None = None,
        sweep: _Sweep | None = None,
    ) -> None:
        self.proc = proc
        self.sweep = sweep
        self.captures = (_Capture(cap), _Capture(cap))
        self.status = _Capture(4096)
        self.channel = _Capture(_CHANNEL_CAP) if channel_fd is not None else None
        self.reaping = status_fd is not None
        self.selector = selectors.DefaultSelector()
        self.pending = memoryview(stdin)
        self.exited = False
        self.pidfd = _open_pidfd(proc.pid)
        assert proc.stdout is not None and proc.stderr is not None  # PIPE was asked for
        self.selector.register(proc.stdout, selectors.EVENT_READ, self.captures[0])
        self.selector.register(proc.stderr, selectors.EVENT_READ, self.captures[1])
        if proc.stdin is not None and self.pending:
            os.set_blocking(proc.stdin.fileno(), False)
            self.selector.register(proc.stdin, selectors.EVENT_WRITE, None)
        elif proc.stdin is not None:
            proc.stdin.close()
        if status_fd is not None:
            self.selector.register(
                os.fdopen(status_fd, "rb", buffering=0), selectors.EVENT_READ, self.status
            )
        if channel_fd is not None:
            self.selector.register(
                os.fdopen(channel_fd, "rb", buffering=0), selectors.EVENT_READ, self.channel
            )
        if self.pidfd is not None:
            self.selector.register(self.pidfd, selectors.EVENT_READ, None)
        # Without a pidfd the leader's exit is polled for after every wake-up; with one, only
        # once it became readable (a wait-status syscall per line of output costs the host CPU).
        self.exit_due = self.pidfd is None

    def channel_bytes(self) -> bytes | None:
        """What the command wrote to its channel (marked when it overflowed), None without one."""
        if self.channel is None:
            return None
        return bytes(self.channel.kept) + (CHANNEL_OVERFLOW if self.channel.dropped else b"")

    def __enter__(self) -> _Watcher:
        return self

    def __exit__(self, *exc_info: object) -> None:
        # Reached on success and on any exception (KeyboardInterrupt included): never leave a
        # process running or a zombie behind.
        if self.proc.returncode is None:
            _signal_all(descendants(self.proc.pid), signal.SIGKILL)  # those in other groups too
            self._kill_group(signal.SIGKILL)
            self.proc.wait()
        for key in list(self.selector.get_map().values()):
            self._unregister(key.fileobj)
        self.selector.close()
        if self.pidfd is not None:
            os.close(self.pidfd)

    def run(self, deadline: float) -> bool:
        """Pump until the command ends (pipes closed, leader exited) or `deadline`. Returns
        whether the deadline was hit (the command was then killed)."""
        drain_until = deadline
        while self._pipes_open() or not self.exited:
            now = time.monotonic()
            if now >= drain_until:
                if not self.exited:
                    self._kill_at_timeout()
                    return True
                break  # a process that escaped the group still holds a pipe: stop reading
            self._step(drain_until if self.pidfd is not None else min(drain_until, now + _POLL_S))
            if not self.exited and self.exit_due and self._leader_exited():
                self.exited = True
                self._kill_group(signal.SIGKILL)  # leftovers in the background
                if self.sweep is not None:  # and those that left it (host-reaped)
                    self.sweep()
                drain_until = min(deadline, time.monotonic() + _DRAIN_S)
        self._reap()
        return False

    def _step(self, until: float) -> None:
        for key, _ in self.selector.select(max(0.0, until - time.monotonic())):
            if isinstance(key.data, _Capture):
                self._read(key.fileobj, key.fd, key.data)
            elif key.fileobj is self.proc.stdin:
                self._write()
            else:  # the pidfd became readable: the leader exited; `run` notices it
                self.selector.unregister(key.fileobj)
                self.exit_due = True

    def _read(self, pipe: FileDescriptorLike, fd: int, capture: _Capture) -> None:
        chunk = os.read(fd, _CHUNK)
        if chunk:
            capture.feed(chunk)
        else:
            self._unregister(pipe)

    def _write(self) -> None:
        stdin = self.proc.stdin
        assert stdin is not None
        try:
            written = os.write(stdin.fileno(), self.pending[:_CHUNK])
        except BlockingIOError:
            return
        except OSError:  # EPIPE: the command stopped reading; the rest is not wanted
            written = len(self.pending)
        self.pending = self.pending[written:]
        if not self.pending:
            self._unregister(stdin)

    def _unregister(self, fileobj: FileDescriptorLike) -> None:
        with contextlib.suppress(KeyError, ValueError):
            self.selector.unregister(fileobj)
        if isinstance(fileobj, io.IOBase):
            with contextlib.suppress(OSError):
                fileobj.close()

    def _pipes_open(self) -> bool:
        """Whether a pipe is still registered (the only other key is the pidfd, until it fires)."""
        watching_exit = self.pidfd is not None and not self.exit_due
        return len(self.selector.get_map()) > watching_exit

    def _leader_exited(self) -> bool:
        """True once the leader is a zombie; does not reap it (WNOWAIT keeps its pgid reserved)."""
        try:
            info = os.waitid(os.P_PID, self.proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return True
        return info is not None

    def _kill_at_timeout(self) -> None:
        """SIGTERM the group and any escaped descendants, grace, then SIGKILL them all."""
        strays = descendants(self.proc.pid)
        self._kill_group(signal.SIGTERM)  # the reaper ignores it
        _signal_all(strays, signal.SIGTERM)
        self._wait_for_leader(_GRACE_S)
        if self.reaping:
            self._let_reaper_finish()
            # Normally none are left; the snapshot's PIDs are free for reuse once it reaped them.
            strays = descendants(self.proc.pid)
        self._kill_group(signal.SIGKILL)
        _signal_all(strays, signal.SIGKILL)
        if self.sweep is not None:
            self.sweep()
        self.exited = True
        self._drain(time.monotonic() + _DRAIN_S)
        self._reap()

    def _wait_for_leader(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while not self._leader_exited() and time.monotonic() < end:
            time.sleep(0.01)

    def _let_reaper_finish(self) -> None:
        """SIGKILL every descendant of the reaper, not the reaper: once its command is dead it
        kills and reaps what is left (processes started since, too) and exits."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(self.proc.pid, signal.SIGCONT)  # in case the command stopped it
        _signal_all(descendants(self.proc.pid), signal.SIGKILL)
        self._wait_for_leader(_REAPER_WAIT_S)

    def _drain(self, until: float) -> None:
        """Keep what was written before the kill; stop at `until` if a pipe stays open."""
        if self.proc.stdin is not None:
            self._unregister(self.proc.stdin)
        while self._pipes_open() and time.monotonic() < until:
            self._step(until)

    def _kill_group(self, sig: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, sig)

    def _reap(self) -> None:
        self.proc.wait()


def _open_pidfd(pid: int) -> int | None:
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):  # kernel < 5.3 or not Linux: poll instead
        return None


def _signal_all(pids: list[int], sig: signal.Signals) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)
