"""The Sandbox contract shared by every implementation: CommandResult, the ABC, and the checks and
clean environment that every `run` starts from."""

from __future__ import annotations

import os
import shutil
import sys
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType, TracebackType
from typing import TYPE_CHECKING, final

from loopwright.errors import SandboxError, UsageError

if TYPE_CHECKING:
    from loopwright.sandbox._environment import TaskEnvironment

__all__ = [
    "CLEAN_VARIABLES",
    "DEFAULT_OUTPUT_CAP",
    "FALLBACK_PATH",
    "CommandResult",
    "RunRequest",
    "Sandbox",
    "build_env",
    "check_binary",
    "check_request",
    "host_path",
    "resolve_dir",
    "resolve_existing",
    "with_defaults",
]

DEFAULT_OUTPUT_CAP = 1_000_000
"""Bytes of stdout (and, separately, of stderr) kept by default."""

CLEAN_VARIABLES: Mapping[str, str] = MappingProxyType(
    {"LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0"}
)
"""The variables every command gets when the caller gives no environment (with PATH and HOME)."""

FALLBACK_PATH = "/usr/local/bin:/usr/bin:/bin"
"""The PATH a command gets where this process has none."""


@dataclass(frozen=True, slots=True)
class CommandResult:
    """What happened when a command ran in a sandbox. A non-zero exit is a result, not an error.

    `argv` is the command as the caller gave it (without any sandbox wrapper). `exit_code` is
    None when the command was killed at its timeout, 128+N when it died of signal N
    (as a shell reports it, in every sandbox).
    `stdout`/`stderr` are decoded as UTF-8 with errors replaced; each keeps at most the output
    cap in bytes, and when more was written the excess is dropped, a marker is appended and
    `truncated` is True. `sandbox` names the sandbox that ran it ("bubblewrap", "local", ...).
    `channel` is what the command wrote to its outcome channel (`Sandbox.run(channel=True)`),
    None when none was asked for or the sandbox cannot pass one.
    """

    argv: tuple[str, ...]
    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool
    truncated: bool
    duration_s: float
    sandbox: str
    channel: bytes | None = None

    @property
    def ok(self) -> bool:
        """True when the command finished in time with exit code 0."""
        return self.exit_code == 0 and not self.timed_out


@dataclass(frozen=True, slots=True)
class RunRequest:
    """A `Sandbox.run` call after its checks: `argv` non-empty, `timeout_s` and `output_cap`
    positive, `cwd` an existing directory and every `writable` and `readonly` path existing,
    all resolved (symlinks followed). The other fields are the caller's, as given."""

    argv: tuple[str, ...]
    cwd: Path
    timeout_s: float
    writable: tuple[Path, ...]
    readonly: tuple[Path, ...]
    env: Mapping[str, str] | None
    output_cap: int
    network: bool
    stdin: str | None
    channel: bool = False

    @property
    def stdin_bytes(self) -> bytes | None:
        """`stdin` encoded as UTF-8, None when there is none."""
        return self.stdin.encode() if self.stdin is not None else None


class Sandbox(ABC):
    """Runs commands with a wall-clock timeout, an output cap and a clean environment.

    Subclasses set `name` (recorded in every CommandResult) and `isolated` (True only when
    network and filesystem isolation are enforced). A sandbox is a context manager; `close()`
    releases whatever it holds (nothing, for the local and bubblewrap sandboxes) and is
    idempotent. Sandboxes are safe to share between threads: `run` keeps no state.
    """

    name: str
    isolated: bool
    channels: bool = True
    """Whether `run(channel=True)` gives the command an outcome channel here."""

    python: str | None = None
    """The Python that loopwright's own commands run inside this sandbox (the grader, the agents'
    `run_tests` tool); None: loopwright's own interpreter, which the sandbox shows."""

    environment: TaskEnvironment | None = None
    """The task environment commands run in (see `within`); None: loopwright's own Python."""

    def within(self, environment: TaskEnvironment, workspace: Path) -> Sandbox:
        """This sandbox running every command in `environment`, for runs in `workspace`.

        The default wraps this sandbox (`EnvironmentSandbox`): the environment's variables and
        read-only directories, the workspace at its own path. A sandbox that can place the
        workspace at a fixed path (bubblewrap: `WORKDIR`) overrides this; `visible` then maps
        paths. Never modifies this sandbox."""
        from loopwright.sandbox._environment import EnvironmentSandbox

        return EnvironmentSandbox(self, environment, workspace.resolve())

    def relay_dir(self, workspace: Path) -> tuple[Path, str] | None:
        """A host directory where a unix socket can be bound that commands run for `workspace`
        can connect to, and the path they see it at; None (the default) when commands see the
        host's own paths (bubblewrap shows a command's writable paths in place, local is the
        host). The container sandbox overrides it: its containers have no network, so a model
        relay reaches them only through such a socket."""
        del workspace
        return None

    def visible(self, path: Path) -> str:
        """`path` (a host path, resolved) as a command run by this sandbox sees it. The same
        path, unless the sandbox places the workspace elsewhere (see `within`)."""
        return str(path)

    def interpreter(self) -> str:
        """The Python loopwright's own commands run with in this sandbox (the grader, the
        agents' `run_tests` tool, the A/B check runner): the task environment's when commands
        run in one, else the sandbox's own (a container's), else loopwright's interpreter."""
        if self.environment is not None:
            return self.environment.python
        return self.python or sys.executable

    @final
    def run(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        timeout_s: float,
        writable: Sequence[Path] = (),
        readonly: Sequence[Path] = (),
        env: Mapping[str, str] | None = None,
        output_cap: int = DEFAULT_OUTPUT_CAP,
        network: bool = False,
        stdin: str | None = None,
        channel: bool = False,
    ) -> CommandResult:
        """Run `argv` in `cwd` and return its result; never raises because the command failed.

        `cwd` and every path in `writable` must exist; they are resolved (symlinks followed)
        and are the only places an isolated sandbox lets the command write. `readonly` paths
        must exist too; an isolated sandbox shows them read-only, at their resolved paths
        (it shows nothing of the user's files beyond these, `cwd`, `writable` and the Python
        environment). `env` None means
        a minimal clean environment (see `build_env`); a mapping is used as given, plus PATH
        and HOME when it lacks them. The command and everything it started are killed when
        `timeout_s` passes. `network` allows network access where the sandbox can deny it.
        `stdin` is written to the command's standard input (else it reads /dev/null).
        `channel` gives the command an outcome channel: the write end of a pipe that this
        process drains while the command runs, its descriptor number in the command's
        `CHANNEL_ENV` variable; what was written comes back as `CommandResult.channel`
        (append-only: nothing the command does later takes back what it wrote). A sandbox
        that cannot pass a descriptor (`channels` False: the docker CLI) sets no variable
        and returns `channel=None`.

        Raises SandboxError when the command cannot be started at all (binary not found,
        `cwd` missing); UsageError for an empty argv or a non-positive timeout or cap.
        These checks are made here, once, for every sandbox (argv, timeout and cap first, then
        `cwd`, `writable`, `readonly`); the sandbox's `_execute` runs the checked `RunRequest`.
        """
        request = RunRequest(
            argv=check_request(argv, timeout_s=timeout_s, output_cap=output_cap),
            cwd=resolve_dir(cwd, "cwd"),
            timeout_s=timeout_s,
            writable=tuple(resolve_existing(p, "writable path") for p in writable),
            readonly=tuple(resolve_existing(p, "read-only path") for p in readonly),
            env=env,
            output_cap=output_cap,
            network=network,
            stdin=stdin,
            channel=channel,
        )
        return self._execute(request)

    @abstractmethod
    def _execute(self, request: RunRequest) -> CommandResult:
        """Run a request `run` has checked, as `run` describes; the per-sandbox part."""

    def release(self, workspace: Path) -> None:  # noqa: B027 - as close(): most hold nothing
        """Release what the sandbox holds for `workspace` (a container): its commands are done.
        Idempotent. The base sandbox holds nothing."""

    def close(self) -> None:  # noqa: B027 - a no-op default is the point: most sandboxes hold nothing
        """Release what the sandbox holds. Idempotent. The base sandbox holds nothing."""

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, isolated={self.isolated})"


def build_env(env: Mapping[str, str] | None, *, home: str) -> dict[str, str]:
    """The environment a command gets. Deterministic given the parent's PATH.

    None: PATH (this Python's bin directory, then the parent's PATH, else a standard one;
    so `python` is the environment's interpreter, which a sandbox shows), HOME=`home`, LANG=C.UTF-8,
    PYTHONDONTWRITEBYTECODE=1, PYTHONHASHSEED=0, and nothing else, so the parent's secrets
    (API keys, tokens) never reach the command. A mapping: exactly its items, plus PATH and
    HOME=`home` when it has none.
    """
    return with_defaults(env, {"PATH": _with_interpreter(host_path()), "HOME": home})


def with_defaults(env: Mapping[str, str] | None, required: Mapping[str, str]) -> dict[str, str]:
    """`env` None: `required` and `CLEAN_VARIABLES`, nothing else; a mapping: exactly its items,
    plus each of `required` it lacks. What every sandbox starts a command's variables from."""
    built = {**required, **CLEAN_VARIABLES} if env is None else dict(env)
    for name, value in required.items():
        built.setdefault(name, value)
    return built


def host_path() -> str:
    """This process's PATH, else a standard one."""
    return os.environ.get("PATH") or FALLBACK_PATH


def _with_interpreter(path: str) -> str:
    bindir = str(Path(sys.executable).parent) if sys.executable else ""
    if not bindir or path.split(os.pathsep)[0] == bindir:
        return path
    return bindir + os.pathsep + path


def check_binary(args: tuple[str, ...], *, cwd: Path, path: str) -> None:
    """SandboxError naming `args[0]` unless it is found on `path` (or, when it contains a slash,
    exists relative to `cwd`) and is executable. Sandboxes that start the command through a
    wrapper (bwrap) check this before starting, so a missing binary is an error, not an exit."""
    binary = args[0]
    if "/" in binary:
        found = cwd / binary  # an absolute `binary` replaces cwd
        if not (found.is_file() and os.access(found, os.X_OK)):
            raise SandboxError(f"cannot start {binary!r}: no such executable file")
    elif shutil.which(binary, path=path) is None:
        raise SandboxError(f"cannot start {binary!r}: not found on PATH ({path})")


def check_request(argv: Sequence[str], *, timeout_s: float, output_cap: int) -> tuple[str, ...]:
    """argv as a tuple; UsageError for an empty argv or a timeout or cap that is not positive."""
    args = tuple(argv)
    if not args or not args[0]:
        raise UsageError("cannot run an empty command", got=repr(argv), fix="pass argv[0]")
    if timeout_s <= 0:
        raise UsageError("timeout_s must be positive", got=repr(timeout_s))
    if output_cap <= 0:
        raise UsageError("output_cap must be positive", got=repr(output_cap))
    return args


def resolve_existing(path: Path, what: str) -> Path:
    """`path` made absolute with symlinks resolved; SandboxError naming `what` unless it exists."""
    try:
        return Path(path).resolve(strict=True)
    except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop
        raise SandboxError(
            f"cannot start the command: {what} {str(path)!r} does not exist"
        ) from exc


def resolve_dir(path: Path, what: str) -> Path:
    """`path` made absolute with symlinks resolved; SandboxError unless it is an existing directory."""
    resolved = resolve_existing(path, what)
    if not resolved.is_dir():
        raise SandboxError(f"cannot start the command: {what} {str(path)!r} is not a directory")
    return resolved
