"""Starting a command for `run_process` (sandbox/_process.py): under the process reaper, under a
shell with the host as its reaper, or plain; with an outcome channel or not; always in a new
session with piped output."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from loopwright.errors import SandboxError

__all__ = ["CHANNEL_ENV", "host_reaper", "launch"]

CHANNEL_ENV = "LOOPWRIGHT_CHANNEL_FD"
"""The variable naming the outcome channel's descriptor in a command run with `channel=True`."""
# Moves the channel (its number in $1) to descriptor $2, then runs the rest: for a client that
# passes descriptors on by number (`podman exec --preserve-fds 1` passes 3). bash: dash takes
# single-digit descriptors only.
_MOVE_FD = 'exec {to}>&{fd} {fd}>&-; exec "$@"'
# Imported, not run as a script: an import reuses the compiled module from __pycache__ (a script is
# compiled at every start, ~5 ms). Appended to sys.path, so that the standard library comes first.
_REAPER_START = (
    f"import sys; sys.path.append({str(Path(__file__).parent)!r}); "
    "import _reaper; _reaper.main(sys.argv[1:])"
)


# The host-reaped start (`host_reaper`): `setpriv` gives the shell, and so the command and all
# it starts, no_new_privs (the host's mark, sandbox/_strays.py) and execs the shell; the shell
# runs the command as its child, waits and exits with its status (128+N after a death by signal
# N), so that the command's parent is the shell, never the host: a `kill -9 $PPID` kills the
# shell. The command is given by its resolved path, so that no shell builtin stands in for it.
_SHELL = "/bin/sh"
_SHELL_SCRIPT = '"$@"; exit $?'


@functools.cache
def host_reaper() -> str | None:
    """The path of `setpriv` (util-linux) when a command can be started host-reaped here (it and
    /bin/sh exist), else None. Cached."""
    if not os.access(_SHELL, os.X_OK):
        return None
    return shutil.which("setpriv", path="/usr/bin:/bin:/usr/sbin:/sbin")


def launch(
    argv: Sequence[str],
    cwd: Path,
    env: Mapping[str, str],
    feed_stdin: bool,
    reaping: bool,
    mark: bool,
    channel: bool,
    channel_at: int | None,
    host_reaped: bool = False,
) -> tuple[subprocess.Popen[bytes], int | None, int | None]:
    """Start `argv` (under the reaper when `reaping`, marked with no_new_privs when `mark`; with
    `host_reaped` instead, under the shell of `host_reaper`, marked), with an outcome channel
    when asked; return the process, the reaper's status pipe and the read end of the channel."""
    reading, writing = os.pipe() if channel else (None, None)
    try:
        if writing is not None:
            env = {**env, CHANNEL_ENV: str(writing)} if channel_at is None else env
            argv = argv if channel_at is None else _moving(argv, writing, channel_at)
        passed = () if writing is None else (writing,)
        if host_reaped:
            return _start_host_reaped(argv, cwd, env, feed_stdin, passed), None, reading
        if reaping:
            proc, status_fd = _start_under_reaper(argv, cwd, env, feed_stdin, passed, mark)
            return proc, status_fd, reading
        return _start(argv, cwd, env, feed_stdin, passed), None, reading
    except BaseException:
        if reading is not None:
            os.close(reading)
        raise
    finally:
        if writing is not None:
            os.close(writing)


def _moving(argv: Sequence[str], fd: int, to: int) -> list[str]:
    return ["bash", "-c", _MOVE_FD.format(fd=fd, to=to), "bash", *argv]


def _start_host_reaped(
    argv: Sequence[str],
    cwd: Path,
    env: Mapping[str, str],
    feed_stdin: bool,
    passed: tuple[int, ...],
) -> subprocess.Popen[bytes]:
    """`argv` run by a shell child of this process, shell and command marked with no_new_privs.
    What the exec of `argv` would refuse (not found, not executable, a file that is neither a
    script nor an ELF executable) is a SandboxError before anything starts, as the reaper
    reports it; what only the exec itself finds (an ELF file for another machine, a missing
    script interpreter) is the shell's message and exit status 126 or 127."""
    setpriv = host_reaper()
    assert setpriv is not None  # run_process asks host_reaper() first
    path = _executable(argv[0], cwd, env.get("PATH", os.defpath))
    wrapped = [setpriv, "--no-new-privs", "--", _SHELL, "-c", _SHELL_SCRIPT, "sh", path, *argv[1:]]
    return _start(wrapped, cwd, env, feed_stdin, pass_fds=passed)


def _executable(name: str, cwd: Path, search: str) -> str:
    """The absolute path `execvpe` would run for `name`; SandboxError with the reason it would
    give where it would refuse (not found, not an executable file, or, read from the file's
    first bytes as the kernel reads them, neither an ELF executable nor a `#!` script: ENOEXEC,
    which a shell would take for a shell script instead)."""
    found = cwd / name if "/" in name else _search(name, cwd, search)
    if found is None or not found.exists():
        raise SandboxError(f"cannot start {name!r}: No such file or directory")
    if not found.is_file() or not os.access(found, os.X_OK):
        raise SandboxError(f"cannot start {name!r}: Permission denied")
    try:
        fd = os.open(found, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:  # executable but not readable: the exec itself decides
        return str(found.absolute())
    try:
        head = os.read(fd, 8)
    except OSError:  # replaced meanwhile (by a FIFO, say): the exec itself decides
        return str(found.absolute())
    finally:
        os.close(fd)
    elf = head[:4] == b"\x7fELF" and head[4:5] in _ELF_CLASSES and head[5:7] in _ELF_DATA
    if not (elf or head[:2] == b"#!"):
        raise SandboxError(f"cannot start {name!r}: Exec format error")
    return str(found.absolute())


_ELF_CLASSES = (b"\x01", b"\x02")  # 32- and 64-bit
_ELF_DATA = (b"\x01\x01", b"\x02\x01")  # little- or big-endian; identification version 1


def _search(name: str, cwd: Path, search: str) -> Path | None:
    """The first executable file `name` in the directories of `search` (a PATH; relative ones,
    and an empty one, taken from `cwd`, where the command runs)."""
    for directory in search.split(":"):
        candidate = cwd / (directory or ".") / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


def _start_under_reaper(
    argv: Sequence[str],
    cwd: Path,
    env: Mapping[str, str],
    feed_stdin: bool,
    passed: tuple[int, ...] = (),
    mark: bool = False,
) -> tuple[subprocess.Popen[bytes], int]:
    """Start the reaper running `argv` (with no_new_privs when `mark`); return it and the read
    end of its status pipe. `-I -S`: the interpreter reads no PYTHON* variable, user site or
    site-packages, and starts faster."""
    status_r, status_w = os.pipe()
    try:
        status = f"+{status_w}" if mark else str(status_w)
        reaper = [sys.executable, "-I", "-S", "-c", _REAPER_START, status, *argv]
        return _start(reaper, cwd, env, feed_stdin, pass_fds=(status_w, *passed)), status_r
    except SandboxError:
        os.close(status_r)
        raise
    finally:
        os.close(status_w)


def _start(
    argv: Sequence[str],
    cwd: Path,
    env: Mapping[str, str],
    feed_stdin: bool,
    pass_fds: tuple[int, ...] = (),
) -> subprocess.Popen[bytes]:
    try:
        return subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.PIPE if feed_stdin else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            bufsize=0,
            pass_fds=pass_fds,
        )
    except OSError as exc:
        raise SandboxError(f"cannot start {argv[0]!r}: {exc.strerror or exc}") from exc
