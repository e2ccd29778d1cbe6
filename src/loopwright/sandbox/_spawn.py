"""Starting a command for `run_process` (sandbox/_process.py): under the process reaper or not,
with an outcome channel or not, always in a new session with piped output."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from loopwright.errors import SandboxError

__all__ = ["CHANNEL_ENV", "launch"]

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


def launch(
    argv: Sequence[str],
    cwd: Path,
    env: Mapping[str, str],
    feed_stdin: bool,
    reaping: bool,
    mark: bool,
    channel: bool,
    channel_at: int | None,
) -> tuple[subprocess.Popen[bytes], int | None, int | None]:
    """Start `argv` (under the reaper when `reaping`, marked with no_new_privs when `mark`), with
    an outcome channel when asked; return the process, the reaper's status pipe and the read
    end of the channel."""
    reading, writing = os.pipe() if channel else (None, None)
    try:
        if writing is not None:
            env = {**env, CHANNEL_ENV: str(writing)} if channel_at is None else env
            argv = argv if channel_at is None else _moving(argv, writing, channel_at)
        passed = () if writing is None else (writing,)
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
