"""DockerSandbox: each workspace gets one long-lived container (docker or podman CLI) that runs
every command for it, the agents' and the grader's; the workspace is mounted at one fixed path.

Commands are `exec`s into the container. Host paths in a command (its argv, cwd and environment
values) are rewritten to where the container shows them: the workspace at `workdir`, other
`readonly` paths copied into a read-only staging mount, other `writable` paths staged in a
writable one and copied back when the command ends. See docs/sandbox.md.
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import os
import shutil
import tempfile
import threading
import weakref
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loopwright._caller import spoken
from loopwright.errors import ConfigError, SandboxError
from loopwright.sandbox._base import CommandResult, RunRequest, Sandbox, resolve_dir, with_defaults
from loopwright.sandbox._engine import ENV_PREFIX, ContainerSettings, Engine, labels
from loopwright.sandbox._environment import EnvironmentSandbox, TaskEnvironment
from loopwright.sandbox._nskill import (
    close_namespace,
    init_pid,
    kill_in_namespace,
    open_pid_namespace,
    usable,
)
from loopwright.sandbox._process import CHANNEL_ENV, run_process, to_result
from loopwright.sandbox._runcexec import RuncExec, find_runc
from loopwright.sandbox._staging import STAGE as _STAGE
from loopwright.sandbox._staging import PathMap, env_flags, staged

__all__ = ["DockerSandbox"]

_RELAY = f"{_STAGE}/relay"  # inside: the relay directory (read-only; sockets bound outside)
_HOME = "/tmp"  # a tmpfs in the container
_NOT_FOUND = "loopwright-sandbox: cannot start"
# PID 1 of every container: a shell that reaps every orphan and survives `kill -KILL -1`.
_INIT = 'trap "exit 0" TERM INT; while :; do sleep 86400 & wait; done'
# Each command: kill what earlier commands left, check the binary, run it, kill what it left.
_WRAPPER = f"""kill -KILL -1 2>/dev/null
command -v "$1" >/dev/null 2>&1 || {{ echo "{_NOT_FOUND} $1: not found in the container" >&2; exit 127; }}
"$@"
status=$?
kill -KILL -1 2>/dev/null
exit $status"""
_KILL_ALL = "kill -KILL -1 2>/dev/null; true"
_CHANNEL_FD = 3  # the first descriptor `--preserve-fds` passes on
_ENGINE_FAILED = {125, 126, 127}  # what `docker exec` / `podman exec` exit with on their own errors
_RUNC_FAILED = 255  # what `runc exec` exits with on its own errors


@dataclass
class _Container:
    id: str
    root: Path  # the workspace on the host
    stage: Path  # host directory holding ro/ and rw/
    network: bool
    shape: _Shape
    pidns: int | None = None  # its PID namespace, open: for the host-side kill (sandbox/_nskill.py)
    runc: RuncExec | None = None  # the fast exec path (sandbox/_runcexec.py), when it applies
    engine_exec_reason: str = ""  # why it does not
    commands: Iterator[int] = field(default_factory=itertools.count)


@dataclass(frozen=True, slots=True)
class _Shape:
    """What a container is made from: its image, where the workspace is mounted, its tmpfs dirs."""

    image: str
    workdir: str
    scratch: tuple[str, ...] = ()


class DockerSandbox(Sandbox):
    """Runs commands in containers through the docker or podman CLI. Isolated.

    One container per workspace, started at the workspace's first command (or by `attach`) and
    removed by `release`, by `close`, when its workspace directory is gone, at interpreter exit,
    and, when loopwright was killed, by the next DockerSandbox on this host (containers are
    labelled with their owning process). The container shows the image (read-only root
    filesystem, a private /tmp), the workspace read-write at `settings.workdir` (or the task's) and nothing else
    of the host; no network unless a command asks for it (`network=True`: the workspace's
    container is then recreated with network), no capabilities, no new privileges, and the CPU,
    memory and process limits of the settings. Before and after every command every process in
    the container but its init is killed, so nothing an agent started is alive when the grader
    restores tests or runs them. Commands for one workspace must not run concurrently.

    Raises MissingDependencyError when no engine works, ConfigError when no image is set or the
    image is not present locally.
    """

    name = "docker"
    isolated = True

    def __init__(self, settings: ContainerSettings | None = None) -> None:
        self.settings = settings if settings is not None else ContainerSettings.from_env()
        self.engine = Engine.detect(self.settings)
        if self.settings.image and not self.engine.image_exists(self.settings.image):
            raise ConfigError(
                f"the image {self.settings.image!r} is not present in {self.engine.kind}",
                got=self.settings.image,
                fix="build it locally first (no registry is used; see docs/sandbox.md)",
            )
        self.python = self.settings.python
        # `podman exec --preserve-fds` passes an outcome channel in; `docker exec` cannot.
        self.channels = self.engine.kind == "podman"
        self.engine.remove_stale()
        self._reset()
        atexit.register(_close_if_alive, weakref.ref(self))

    def _reset(self) -> None:
        self._pid = os.getpid()
        self._host_kill = usable()
        self._lock = threading.Lock()
        self._namespaces = threading.Lock()  # guards each container's `pidns` descriptor
        self._containers: dict[Path, _Container] = {}

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        for name in ("_lock", "_namespaces", "_containers", "_pid"):
            state.pop(name)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Unpickled (a Ray worker): the engine's CLI is found again when the path the sender
        found it at is not on this machine."""
        self.__dict__.update(state)
        if not Path(self.engine.cli).is_file():
            self.engine = Engine.detect(self.settings)
        self._reset()

    def attach(
        self,
        workspace: Path,
        *,
        network: bool = False,
        image: str | None = None,
        workdir: str | None = None,
        scratch: Sequence[str] = (),
    ) -> str:
        """Start `workspace`'s container now (else its first command does), from `image`
        (default: the settings'), the workspace mounted at `workdir` (default: the settings'),
        each absolute directory in `scratch` an empty writable tmpfs; returns its id. A
        container it already has is replaced."""
        root = resolve_dir(workspace, "workspace")
        shape = _Shape(
            image or self.settings.image, workdir or self.settings.workdir, tuple(scratch)
        )
        with self._lock_for_this_process():
            old = self._containers.pop(root, None)
            if old is not None:
                self._remove(old)
            return self._start(root, network, shape).id

    def within(self, environment: TaskEnvironment, workspace: Path) -> Sandbox:
        """This sandbox running every command for `workspace` in `environment`, which must be
        built into an image (`EnvImageBuilder`): the workspace's container is started from that
        image, the workspace at the image's `workdir` (where its editable installs point), and
        each command gets the environment's PATH, VIRTUAL_ENV and variables. The environment is
        part of the container's read-only root filesystem. ConfigError for an environment built
        on this machine (a container does not have it)."""
        if environment.image is None:
            raise ConfigError(
                "a task environment built on this machine cannot run in the container sandbox",
                got=f"the environment at {environment.prefix}",
                fix="let loopwright build it into an image (docs/sandbox.md, 'Task environments "
                f"in the container sandbox'), or use {spoken('sandbox=' + repr('bubblewrap'), '--sandbox bubblewrap')}",
            )
        self.attach(workspace, image=environment.image, workdir=environment.workdir)
        return EnvironmentSandbox(self, environment, workspace.resolve())

    def relay_dir(self, workspace: Path) -> tuple[Path, str]:
        """The relay directory of `workspace`'s container: a unix socket bound in the returned
        host directory is reachable inside at the returned path (a read-only mount: a command
        can connect to a socket there, not replace or remove it). Starts the container without
        network when the workspace has none (one with network is replaced), since a relay is
        for a command that must reach nothing else."""
        container = self._container_for(resolve_dir(workspace, "workspace"), False)
        return container.stage / "relay", _RELAY

    def release(self, workspace: Path) -> None:
        """Remove `workspace`'s container and staging files. Idempotent."""
        root = Path(workspace).resolve()
        with self._lock_for_this_process():
            container = self._containers.pop(root, None)
        if container is not None:
            self._remove(container)

    def close(self) -> None:
        """Remove every container this process started, and those of dead owners (a worker
        process killed at its job's timeout). Idempotent; never raises for the engine."""
        with self._lock_for_this_process():
            gone, self._containers = list(self._containers.values()), {}
        for container in gone:
            self._remove(container)
        with contextlib.suppress(SandboxError):
            self.engine.remove_stale()

    def _execute(self, request: RunRequest) -> CommandResult:
        """`cwd` lies in a workspace (a directory with a container, else it becomes one); the
        command runs at its place under `workdir`. `env` None: the image's environment plus
        HOME=/tmp, LANG, PYTHONDONTWRITEBYTECODE, PYTHONHASHSEED; a mapping: the image's
        environment overridden by it (HOME=/tmp unless it names one)."""
        args, workdir, stdin = request.argv, request.cwd, request.stdin
        channel = request.channel and self.channels
        env = with_defaults(request.env, {"HOME": _HOME})
        if channel:  # the client's descriptor 3 is the command's 3
            env = {**env, CHANNEL_ENV: str(_CHANNEL_FD)}
        container = self._container_for(workdir, request.network)
        number = next(container.commands)
        paths_out = (container.stage, container.root, number, request.writable, request.readonly)
        with staged(*paths_out) as copies:
            paths = PathMap(
                [(container.root, container.shape.workdir)] + [(c.host, c.inside) for c in copies]
            )
            inside = ["sh", "-c", _WRAPPER, "sh", *(paths.inside(a) for a in args)]
            if container.runc is not None:  # the same process spec `podman exec` gives runc
                spec = container.runc.write_process(
                    container.stage / f"exec-{number}.json",
                    inside,
                    paths.inside(str(workdir)),
                    {key: paths.inside(value) for key, value in env.items()},
                )
                command = container.runc.argv(spec, preserve_fds=1 if channel else 0)
            else:
                command = self.engine.argv(
                    "exec", *(["-i"] if stdin is not None else []), "-w", paths.inside(str(workdir)),
                    *(["--preserve-fds", "1"] if channel else []),
                    *env_flags(env, paths), container.id, *inside,
                )  # fmt: skip
            outcome = run_process(
                command,
                cwd=workdir,
                env=dict(os.environ),  # the CLI's own (rootless podman needs XDG_RUNTIME_DIR)
                timeout_s=request.timeout_s,
                output_cap=request.output_cap,
                stdin=request.stdin_bytes,
                channel=channel,
                channel_at=_CHANNEL_FD if channel else None,
            )
            alive = self._kill_all(container)
            (container.stage / f"exec-{number}.json").unlink(missing_ok=True)
        result = to_result(args, outcome, self.name)
        if result.exit_code == 127 and result.stderr.startswith(_NOT_FOUND):
            raise SandboxError(result.stderr.strip())
        failed = _ENGINE_FAILED | ({_RUNC_FAILED} if container.runc is not None else set())
        if not alive and not result.timed_out and result.exit_code in failed:
            raise SandboxError(f"the workspace's container is gone: {result.stderr.strip()}")
        return result

    def _container_for(self, workdir: Path, network: bool) -> _Container:
        with self._lock_for_this_process():
            self._collect()
            found = next(
                (c for c in self._containers.values() if workdir.is_relative_to(c.root)), None
            )
            if found is not None and found.network == network:
                return found
            if found is None:
                shape = _Shape(self.settings.image, self.settings.workdir)
                return self._start(workdir, network, shape)
            del self._containers[found.root]
            self._remove(found)
            return self._start(found.root, network, found.shape)

    @contextmanager
    def _lock_for_this_process(self) -> Iterator[None]:
        if self._pid != os.getpid():  # a forked child owns none of its parent's containers
            self._reset()
        with self._lock:
            yield

    def _start(self, root: Path, network: bool, shape: _Shape) -> _Container:
        """Start a container for `root` (the lock is held) and remember it. ConfigError when
        there is no image to start it from (the task names none, and no default is set)."""
        if not shape.image:
            raise ConfigError(
                "the docker sandbox needs an image for this workspace",
                got=f"no task image and no {ENV_PREFIX}IMAGE",
                fix=f"give the task an [environment] image or dockerfile, or build a default "
                f"image locally and name it in {ENV_PREFIX}IMAGE (docs/sandbox.md)",
            )
        stage = Path(tempfile.mkdtemp(prefix="lw-ctr-"))
        for kind in ("ro", "rw", "relay"):
            (stage / kind).mkdir()
        pidfile = stage / "pid"  # outside every mount: the container cannot write it
        podman_pid = ["--pidfile", str(pidfile)] if self.engine.kind == "podman" else []
        try:
            cid = self.engine.call(
                "run",
                *self._run_flags(root, stage, network, shape),
                *podman_pid,
                "--entrypoint",
                "sh",
                shape.image,
                "-c",
                _INIT,
            ).strip()
        except SandboxError:
            shutil.rmtree(stage, ignore_errors=True)
            raise
        pid = init_pid(self.engine, cid, pidfile) if self._host_kill or pidfile.is_file() else None
        runc, reason = find_runc(self.engine.kind, cid, pid, enabled=self.settings.fast_exec)
        namespace = open_pid_namespace(pid, cid) if self._host_kill and pid is not None else None
        container = _Container(cid, root, stage, network, shape, namespace, runc, reason)
        self._containers[root] = container
        return container

    def exec_path(self, workspace: Path) -> str:
        """How commands reach `workspace`'s running container: "runc exec" (the fast path,
        sandbox/_runcexec.py) or "<engine> exec (<why not runc>)"; "" when it has none."""
        with self._lock_for_this_process():
            container = self._containers.get(Path(workspace).resolve())
        if container is None:
            return ""
        if container.runc is not None:
            return "runc exec"
        return f"{self.engine.kind} exec ({container.engine_exec_reason})"

    def _run_flags(self, root: Path, stage: Path, network: bool, shape: _Shape) -> list[str]:
        s = self.settings
        scratch = [f for d in shape.scratch for f in ("--tmpfs", f"{d}:rw,exec,nosuid,mode=1777")]
        user = ["--user", f"{os.getuid()}:{os.getgid()}"] if self.engine.kind == "docker" else []
        return [
            "-d", "--rm", *labels(root), *([] if network else ["--network", "none"]),
            "--read-only", "--tmpfs", f"{_HOME}:rw,exec,nosuid,mode=1777",
            "--cap-drop", "ALL", "--security-opt", "no-new-privileges",
            "--cpus", f"{s.cpus:g}", "--memory", s.memory, "--pids-limit", str(s.pids_limit),
            "-v", f"{root}:{shape.workdir}:rw", *scratch,
            "-v", f"{stage / 'ro'}:{_STAGE}/ro:ro", "-v", f"{stage / 'rw'}:{_STAGE}/rw:rw",
            "-v", f"{stage / 'relay'}:{_RELAY}:ro",
            "-w", shape.workdir, *user, *s.run_flags,
        ]  # fmt: skip

    def _collect(self) -> None:
        """Remove the containers whose workspace directory is gone (the lock is held)."""
        for root in [r for r in self._containers if not r.exists()]:
            self._remove(self._containers.pop(root))

    def _remove(self, container: _Container) -> None:
        self.engine.remove(container.id)
        with self._namespaces:
            namespace, container.pidns = container.pidns, None
        close_namespace(namespace)
        shutil.rmtree(container.stage, ignore_errors=True)

    def _kill_all(self, container: _Container) -> bool:
        """Kill every process in the container but its init: what a command left behind, even
        when it killed its wrapper or outlived a timeout (`exec` clients do not take their
        processes with them). False when the container is gone (its init was killed, or it was
        removed from outside): it is forgotten, and the workspace's next command starts afresh.
        The kill is sent from the host into the container's PID namespace when this process can
        (sandbox/_nskill.py: the same signal, without an engine `exec`); when that killer did not
        run (the namespace is dead, or a process in the container killed the killer), through
        an `exec` as before, whose failure removes the container."""
        with self._namespaces:  # a copy: a `release` meanwhile cannot close it under us
            namespace = None if container.pidns is None else os.dup(container.pidns)
        if namespace is not None:
            try:
                if kill_in_namespace(namespace):
                    return True
            finally:
                close_namespace(namespace)
        try:
            self.engine.call("exec", container.id, "sh", "-c", _KILL_ALL)
        except SandboxError:
            with self._lock_for_this_process():
                if self._containers.get(container.root) is container:
                    del self._containers[container.root]
            self._remove(container)
            return False
        return True


def _close_if_alive(ref: weakref.ref[DockerSandbox]) -> None:
    sandbox = ref()
    if sandbox is not None and sandbox._pid == os.getpid():
        sandbox.close()
