"""BubblewrapSandbox: the system and the Python environment read-only, the workspace, a private
/tmp, nothing else of the machine's files; no network, own PID namespace.

bwrap is started in a new session like any command (so the shared timeout kills it); inside,
`--die-with-parent` and the PID namespace make everything the command started die with it.
"""

from __future__ import annotations

import copy
import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path, PurePath, PurePosixPath

from loopwright.errors import MissingDependencyError
from loopwright.sandbox._base import (
    CommandResult,
    RunRequest,
    Sandbox,
    build_env,
    check_binary,
    resolve_existing,
)
from loopwright.sandbox._environment import WORKDIR, TaskEnvironment, environment_variables
from loopwright.sandbox._process import run_process, to_result

__all__ = [
    "INSTALL_HINT",
    "BubblewrapSandbox",
    "bubblewrap_available",
    "bubblewrap_problem",
    "bwrap_argv",
]

INSTALL_HINT = (
    "apt-get install bubblewrap  (Fedora: dnf install bubblewrap; Arch: pacman -S bubblewrap)"
)
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
"""The directories of the operating system a sandboxed command sees (read-only)."""
# loopwright's own package directory, covered where a bind would show it (a non-editable
# install in the environment): its bundled benchmarks hold solutions and hidden tests.
_MASKED = (Path(__file__).resolve().parents[1],)
_HOME = "/tmp"  # the private tmpfs: writable, empty at start, gone afterwards
_PROBE_TIMEOUT_S = 10.0


class BubblewrapSandbox(Sandbox):
    """Runs each command under bubblewrap. Isolated: the command sees the system directories
    (`SYSTEM_DIRS`) and this Python's environment read-only, `cwd` and the `writable` paths
    read-write, the `readonly` paths read-only, a private, empty tmpfs /tmp (its HOME unless the
    env names one), fresh /dev and /proc, and nothing else: no home directory, no task
    directory, no run directory, not loopwright's own package (masked where the environment
    would show it). No network unless `network=True` (loopback only otherwise), its own PID,
    IPC and UTS namespaces, no capabilities, and a new session (no terminal injection). Raises
    MissingDependencyError when `bwrap` is not installed; whether it works here is
    `bubblewrap_available()`'s question.
    """

    name = "bubblewrap"
    isolated = True

    def __init__(self, bwrap: str | None = None) -> None:
        found = shutil.which(bwrap or "bwrap")
        if found is None:
            raise MissingDependencyError(
                "bubblewrap (bwrap) is not installed",
                got=f"no {bwrap or 'bwrap'!r} on PATH",
                fix=f"install it: {INSTALL_HINT}; or choose the local sandbox (unsandboxed)",
            )
        self.bwrap = found
        self._interpreter = _interpreter_paths()
        self._workspace: Path | None = None

    def within(self, environment: TaskEnvironment, workspace: Path) -> BubblewrapSandbox:
        """This sandbox running every command in `environment`: its prefix and base Python shown
        read-only instead of loopwright's interpreter, its variables and PATH (see
        `environment_variables`), and `workspace` bound read-write at `WORKDIR` (a `cwd` inside
        it is entered there), so that editable installs made at `WORKDIR` import this
        workspace's code. Never modifies this sandbox."""
        placed = copy.copy(self)
        placed.environment = environment
        placed._workspace = workspace.resolve()
        return placed

    def visible(self, path: Path) -> str:
        """`path` as a command sees it: under `WORKDIR` when inside the placed workspace."""
        if self._workspace is not None and path.is_relative_to(self._workspace):
            return str(WORKDIR.joinpath(path.relative_to(self._workspace)))
        return str(path)

    def _execute(self, request: RunRequest) -> CommandResult:
        """`cwd` and `writable` are bound read-write at their resolved paths, `readonly`
        read-only; the command runs in the resolved `cwd`. HOME defaults to /tmp."""
        full_env, python = self._variables(request.env)
        check_binary(request.argv, cwd=request.cwd, path=full_env["PATH"])
        shown = [(p, p) for p in request.readonly]
        shown += [*python, *_hidden_binary(request.argv[0], request.cwd, full_env["PATH"])]
        wrapped = bwrap_argv(
            self.bwrap,
            request.argv,
            cwd=request.cwd,
            writable=request.writable,
            network=request.network,
            readonly=shown,
            masked=_MASKED,
            relocated=None if self._workspace is None else (self._workspace, WORKDIR),
        )
        outcome = run_process(
            wrapped,
            cwd=request.cwd,
            env=full_env,
            timeout_s=request.timeout_s,
            output_cap=request.output_cap,
            stdin=request.stdin_bytes,
            channel=request.channel,  # bwrap passes inherited descriptors on, numbers kept
        )
        return to_result(request.argv, outcome, self.name)

    def _variables(self, env: Mapping[str, str] | None) -> tuple[dict[str, str], list[_Pair]]:
        """The command's variables and the Python installation to show read-only: loopwright's
        own, or the task environment's (never both)."""
        if self.environment is None:
            return build_env(env, home=_HOME), self._interpreter
        variables = environment_variables(self.environment, env, workspace=str(WORKDIR), home=_HOME)
        shown = [resolve_existing(p, "environment directory") for p in self.environment.shown]
        return variables, [(p, p) for p in shown]


_Pair = tuple[Path, Path]


def bwrap_argv(
    bwrap: str,
    argv: Sequence[str],
    *,
    cwd: Path,
    writable: Iterable[Path] = (),
    network: bool = False,
    readonly: Iterable[tuple[Path, Path]] = (),
    masked: Iterable[Path] = (),
    relocated: tuple[Path, PurePosixPath] | None = None,
) -> list[str]:
    """The full bwrap command line for `argv`. Pure but for reading which system directories
    exist; paths must already be resolved.

    The new root shows the system directories read-only (`SYSTEM_DIRS`), fresh /dev and /proc,
    a private /tmp, and nothing else until bound: `readonly` holds (source, destination) pairs
    bound read-only (the Python environment, the kit of a grade), `cwd` and `writable` are bound
    read-write, parents before children so that no bind hides another; each `masked` directory
    is covered with an empty tmpfs (loopwright's own package, whose bundled tasks hold answers).
    `relocated` (host directory, destination) is bound read-write at the destination instead
    of its own path (a task environment's workspace at `WORKDIR`); `cwd` and `writable` paths
    inside it are reached through it, and a `cwd` inside it is entered there.
    """
    inside = relocated[0] if relocated is not None else None
    rw = sorted(
        {p for p in (cwd, *writable) if inside is None or not _within(p, inside)}, key=_depth
    )
    args = [bwrap, *_isolation_flags(network=network)]
    kept = _not_yet_visible(readonly, [*map(Path, SYSTEM_DIRS), *rw])
    for src, dst in kept:
        args += ["--ro-bind", str(src), str(dst)]
    for path in rw:
        args += ["--bind", str(path), str(path)]
    shown = [*map(Path, SYSTEM_DIRS), *rw, *(dst for _, dst in kept)]
    chdir = str(cwd)
    if relocated is not None:
        args += ["--bind", str(relocated[0]), str(relocated[1])]
        if cwd.is_relative_to(relocated[0]):
            chdir = str(relocated[1].joinpath(cwd.relative_to(relocated[0])))
    for path in sorted(set(masked), key=_depth):
        if any(_within(path, place) for place in shown):
            args += ["--tmpfs", str(path)]
    return [*args, "--chdir", chdir, "--", *argv]


def _depth(path: Path) -> tuple[int, str]:
    return len(path.parts), str(path)


def _within(path: PurePath, place: PurePath) -> bool:
    """`path.is_relative_to(place)` for absolute, normalised paths (what bwrap_argv is given),
    on their strings: pathlib's answers by raising and catching, for every pair of every grade."""
    inner, outer = str(path), str(place)
    return inner == outer or outer == "/" or inner.startswith(outer + "/")


def _not_yet_visible(
    readonly: Iterable[tuple[Path, Path]], shown_as_is: list[Path]
) -> list[tuple[Path, Path]]:
    """The read-only pairs still needed, parents first. A destination inside a directory shown
    as itself (a system directory, a writable bind) or inside another same-path read-only bind
    is already visible (the command's own `/usr/bin/sh` needs no bind of its own)."""
    kept: list[tuple[Path, Path]] = []
    for src, dst in sorted(set(readonly), key=lambda pair: _depth(pair[1])):
        shown = [*shown_as_is, *(d for s, d in kept if s == d)]
        if not any(_within(dst, path) for path in shown):
            kept.append((src, dst))
    return kept


def _isolation_flags(*, network: bool) -> list[str]:
    flags = _system_flags()
    flags += ["--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    flags += ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    flags += ["--die-with-parent", "--new-session"]
    if not network:
        flags.append("--unshare-net")
    if os.geteuid() == 0:
        # As root bwrap keeps every capability unless told otherwise, and CAP_SYS_ADMIN could
        # remount the read-only binds. Unprivileged bwrap already drops them.
        flags += ["--cap-drop", "ALL"]
    return flags


def _system_flags() -> list[str]:
    """Read-only binds of the system directories that exist here; a directory that is a
    symlink (merged /usr: /bin -> usr/bin) is recreated as the same symlink."""
    flags = []
    for name in SYSTEM_DIRS:
        path = Path(name)
        if path.is_symlink():
            flags += ["--symlink", str(path.readlink()), name]
        elif path.is_dir():
            flags += ["--ro-bind", name, name]
    return flags


def _interpreter_paths() -> list[tuple[Path, Path]]:
    """This Python's installation and environment (its prefixes: a virtualenv and the Python it
    was made from), read-only at their own paths, so that `sys.executable` and the packages
    installed for it work inside the sandbox. Not the rest of `sys.path`: an editable install's
    source tree (loopwright's own, with its bundled tasks) stays out of sight."""
    found = []
    for entry in {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}:
        path = Path(entry).resolve()
        if path.is_dir() and path != Path("/"):
            found.append((path, path))
    return found


def _hidden_binary(binary: str, cwd: Path, path: str) -> list[tuple[Path, Path]]:
    """The command's own executable, bound read-only at the path it was found at, when the
    sandbox would not show it otherwise (a stand-in script under /tmp, a tool under $HOME)."""
    located = shutil.which(binary, path=path) if "/" not in binary else str(cwd / binary)
    if located is None:
        return []
    literal = Path(os.path.normpath(cwd / located))  # not resolved: bound at this very path
    return [(literal.resolve(), literal)]


@functools.cache
def bubblewrap_problem() -> str | None:
    """Why bubblewrap cannot sandbox commands here, or None when it can. Cached per process.

    Runs `bwrap <the isolation flags> true` once: bwrap can be installed and still fail, e.g.
    where unprivileged user namespaces are disabled. Clear with `bubblewrap_problem.cache_clear()`.
    """
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return "bwrap is not on PATH"
    true = shutil.which("true") or "/bin/true"
    argv = [bwrap, *_isolation_flags(network=False), "--", true]
    try:
        probe = subprocess.run(
            argv,
            capture_output=True,
            timeout=_PROBE_TIMEOUT_S,
            env=build_env(None, home=_HOME),
            check=False,
            start_new_session=True,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap could not be run: {exc}"
    if probe.returncode != 0:
        detail = probe.stderr.decode("utf-8", errors="replace").strip() or "no message"
        return f"bwrap is installed but fails here (exit {probe.returncode}): {detail}"
    return None


def bubblewrap_available() -> bool:
    """True when `bwrap` is on PATH and a trivial sandboxed `true` works. Cached per process."""
    return bubblewrap_problem() is None
