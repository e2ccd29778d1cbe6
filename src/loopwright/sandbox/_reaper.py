"""The process reaper: runs one command so that nothing the command starts outlives it (Linux).

`run_process(..., reap=True)` starts it, with the command's stdin, stdout, stderr, cwd and
environment, as `python -I -S -c "<import this module>; main(sys.argv[1:])" STATUS_FD ARGV...`
(`python -I -S _reaper.py STATUS_FD ARGV...` does the same, a few ms slower). It then

1. makes itself a child subreaper (`prctl(PR_SET_CHILD_SUBREAPER, 1)`), so that every process
   orphaned below it (a daemon that double-forked, or called `setsid()` and lost its parent) is
   reparented to it instead of to init: nothing the command starts can leave its subtree;
2. ignores every signal it can (not SIGCHLD, whose default it needs to wait for children), so a
   `kill 0` in the command, or the SIGTERM sent to the process group at a timeout, does not stop
   it before the command;
3. forks and execs ARGV in its own process group and session (run_process made it a session
   leader), with the signal dispositions it was started with (SIGPIPE and SIGXFSZ at their
   default, as `subprocess` restores them) and exactly the environment it was given (read back
   from /proc/self/environ: the interpreter may have added LC_CTYPE, PEP 538), and, when
   STATUS_FD is written `+N`, with no_new_privs (`prctl(PR_SET_NO_NEW_PRIVS)`): the mark by which
   the host knows the command's processes if they outlive this one (sandbox/_strays.py);
4. reaps every child that exits until ARGV exits, then SIGKILLs every descendant still there,
   again and again, reaping them, until it has no child left (for at most `_CLEANUP_S`: a process
   it may not signal, a setuid program's, is left to init);
5. exits with ARGV's exit status: its exit code, or 128+N after a death by signal N.

When ARGV cannot be started it writes why (an OS error message) to STATUS_FD and exits 127;
otherwise STATUS_FD is closed unwritten. Where the subreaper cannot be set (prctl fails), it execs
ARGV in its own place: the behaviour without a reaper.

A command running as the same user can still kill the reaper (`kill -9 $PPID`, `kill -9 0`):
then what it orphaned is reparented to the host, itself a subreaper while commands run, which
kills what carries the mark (and what holds the command's pipes or HOME): sandbox/_strays.py.

Where the host can adopt and `setpriv` exists, a local command is host-reaped instead (a marked
shell, the host the subreaper that sweeps; sandbox/_spawn.py, `run_process`): this reaper runs for
a command that starts while a host-reaped one runs, and where the host cannot adopt.

This module is loaded by a fresh interpreter before every command it reaps, so it imports only
modules built into the interpreter or already loaded at its start (`posix`, `errno`, `_signal`,
`_ctypes`, `time`), not `os`, `signal` and `ctypes`, whose imports would cost about as much again
as the interpreter's own start; and it never imports loopwright.
"""

import _ctypes
import _signal  # type: ignore[import-not-found]  # the C half of `signal`; typeshed has no stub
import errno
import posix
import sys
import time

__all__ = ["children", "descendants", "main"]

_PR_SET_CHILD_SUBREAPER = 36
_PR_SET_NO_NEW_PRIVS = 38
_CLEANUP_S = 2.0  # how long to keep killing leftovers that will not die
# SIGKILL and SIGSTOP cannot be ignored; an ignored SIGCHLD would reap children unasked.
_UNIGNORABLE = frozenset({_signal.SIGKILL, _signal.SIGSTOP, _signal.SIGCHLD})
# Ignored by the interpreter at start-up; `subprocess` restores them to their default for a child.
_RESTORED = (_signal.SIGPIPE, _signal.SIGXFSZ)


class _Int(_ctypes._SimpleCData):  # type: ignore[type-arg]  # ctypes.c_int, without its imports
    _type_ = "i"


class _CFunction(_ctypes.CFuncPtr):
    _flags_ = _ctypes.FUNCFLAG_CDECL | _ctypes.FUNCFLAG_USE_ERRNO
    _restype_ = _Int


def main(args: list[str]) -> None:
    """Run `args` = [STATUS_FD, ARGV...] as the module docstring describes; never returns.
    STATUS_FD written `+N`: the command also gets no_new_privs (the host's mark, see step 3)."""
    status_fd, argv = int(args[0].lstrip("+")), args[1:]
    mark = args[0].startswith("+")
    posix.set_inheritable(status_fd, False)  # the command gets it closed at exec
    env = _initial_environ()
    if not _become_subreaper():
        _exec(argv, env, status_fd, [], mark)
    to_default = _ignore_signals()
    pid = posix.fork()
    if pid == 0:
        _exec(argv, env, status_fd, to_default, mark)
    posix.close(status_fd)
    _detach_stdin_stdout()
    status = _wait_for(pid)
    _kill_leftovers(posix.getpid())
    code = posix.waitstatus_to_exitcode(status)
    posix._exit(128 - code if code < 0 else code)


def _initial_environ() -> dict[bytes, bytes]:
    """The environment this process was started with, before the interpreter changed it."""
    try:
        raw = _read("/proc/self/environ")
    except OSError:
        return dict(posix.environ)
    env = {}
    for item in raw.split(b"\0"):
        key, sep, value = item.partition(b"=")
        if sep:
            env[key] = value
    return env


def _prctl(option: int, value: int) -> bool:
    """prctl(option, value, 0, 0, 0) == 0 (False where there is no prctl: not Linux)."""
    try:
        prctl = _CFunction(_ctypes.dlsym(_ctypes.dlopen(None), "prctl"))  # type: ignore[arg-type]
    except (AttributeError, OSError):
        return False
    return bool(prctl(option, value, 0, 0, 0) == 0)


def _become_subreaper() -> bool:
    return _prctl(_PR_SET_CHILD_SUBREAPER, 1)


def _exec(
    argv: list[str], env: dict[bytes, bytes], status_fd: int, to_default: list[int], mark: bool
) -> None:
    """Replace this process with `argv`, searched on `env`'s PATH as `subprocess` does, with the
    signals `to_default` and the two Python ignores at their default, and no_new_privs when
    `mark`. Never returns: when the exec fails, writes why to `status_fd` and exits 127. (Not
    posix_spawn: glibc's leaves its internal signals 32 and 33 ignored in the command.)"""
    try:
        for signum in (*to_default, *_RESTORED):
            _signal.signal(signum, _signal.SIG_DFL)
        if mark and not _prctl(_PR_SET_NO_NEW_PRIVS, 1):
            posix.write(status_fd, b"cannot set no_new_privs (prctl failed)")
            return
        error: OSError | None = None
        for path in _candidates(argv[0], env):
            try:
                posix.execve(path, argv, env)
            except OSError as exc:  # try the next directory; report the first telling error
                if error is None or error.errno in (errno.ENOENT, errno.ENOTDIR):
                    error = exc
        if error is not None:
            posix.write(status_fd, (error.strerror or str(error)).encode())
    finally:
        posix._exit(127)


def _candidates(name: str, env: dict[bytes, bytes]) -> list[str]:
    if "/" in name:
        return [name]
    path = env.get(b"PATH", b"/bin:/usr/bin").decode("utf-8", "surrogateescape")
    return [f"{directory or '.'}/{name}" for directory in path.split(":")]


def _ignore_signals() -> list[int]:
    """Ignore every signal that can be; return those the command must get at their default:
    all but the ones this process inherited as ignored (the command inherits those too)."""
    to_default: list[int] = []
    for signum in _signal.valid_signals():
        if signum in _UNIGNORABLE:
            continue
        inherited_ignored = signum not in _RESTORED and _signal.getsignal(signum) is _signal.SIG_IGN
        try:
            _signal.signal(signum, _signal.SIG_IGN)
        except (OSError, ValueError):  # reserved by the C library: leave it alone
            continue
        if not inherited_ignored:
            to_default.append(signum)
    return to_default


def _detach_stdin_stdout() -> None:
    """Drop this process's ends of the command's stdin and stdout, so that they close when the
    command's processes close them (stderr stays, for this script's own errors)."""
    try:
        null = posix.open("/dev/null", posix.O_RDWR)
    except OSError:  # no /dev/null here: keep them, which only delays end-of-file
        return
    posix.dup2(null, 0)
    posix.dup2(null, 1)
    posix.close(null)


def _wait_for(pid: int) -> int:
    """Reap children (orphans included) until `pid` exits; return its wait status."""
    while True:
        reaped, status = posix.waitpid(-1, 0)
        if reaped == pid:
            return status


def _kill_leftovers(me: int) -> None:
    pause = 0.0005
    give_up = time.monotonic() + _CLEANUP_S
    while _has_children() and time.monotonic() < give_up:
        for pid in descendants(me):
            try:  # noqa: SIM105  (contextlib would be one more import at every start)
                posix.kill(pid, _signal.SIGKILL)
            except OSError:  # gone meanwhile, or not ours to signal
                pass
        time.sleep(pause)
        pause = min(pause * 2, 0.02)


def _has_children() -> bool:
    """Reap every child that has exited; return whether any child is left."""
    while True:
        try:
            pid, _ = posix.waitpid(-1, posix.WNOHANG)
        except ChildProcessError:
            return False
        if pid == 0:
            return True


def children() -> dict[int, list[int]]:
    """Every process's children, by parent PID, from one walk of /proc (empty without it)."""
    table: dict[int, list[int]] = {}
    try:
        names = posix.listdir("/proc")
    except OSError:
        return table
    for name in names:
        if not name.isdigit():
            continue
        try:
            stat = _read(f"/proc/{name}/stat")
        except OSError:  # gone meanwhile
            continue
        # The command name (field 2) may hold spaces and parentheses: parse after the last ')'.
        ppid = int(stat[stat.rfind(b")") + 2 :].split()[1])
        table.setdefault(ppid, []).append(int(name))
    return table


def descendants(root: int, table: dict[int, list[int]] | None = None) -> list[int]:
    """PIDs of every live descendant of `root` (Linux /proc; empty where there is none), from
    `table` (`children()`) or a fresh walk. Best effort. Also what `run_process` kills at a
    timeout (sandbox/_process.py imports it: this module imports only what the interpreter has
    built in, so that costs nothing)."""
    children_of = children() if table is None else table
    found, queue = [], list(children_of.get(root, []))
    while queue:
        pid = queue.pop()
        found.append(pid)
        queue.extend(children_of.get(pid, []))
    return found


def _read(path: str) -> bytes:
    """The whole file at `path` (pathlib and io would cost imports)."""
    fd = posix.open(path, posix.O_RDONLY | posix.O_CLOEXEC)
    try:
        chunks = []
        while chunk := posix.read(fd, 65536):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        posix.close(fd)


if __name__ == "__main__":
    main(sys.argv[1:])
