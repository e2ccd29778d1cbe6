"""The container engine behind the docker sandbox: which CLI (docker or podman), its settings,
and the containers it owns: start, remove, and the removal of containers whose owner died.

Everything goes through the engine's command line (`docker`, or `podman`'s docker-compatible
one) as a subprocess, so Docker and Podman both work and no SDK is needed.
"""

from __future__ import annotations

import os
import shlex
import shutil
import socket
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from loopwright.errors import ConfigError, MissingDependencyError, SandboxError

__all__ = [
    "ENV_PREFIX",
    "LABEL",
    "ContainerSettings",
    "Engine",
    "owner_label",
]

ENV_PREFIX = "LOOPWRIGHT_CONTAINER_"
LABEL = "loopwright.sandbox"
"""Every container loopwright starts carries this label; `owner` and `workspace` labels beside it."""
_OWNER_LABEL = "loopwright.owner"
_WORKSPACE_LABEL = "loopwright.workspace"
_CLI_TIMEOUT_S = 120.0
_PROBE_TIMEOUT_S = 20.0
INSTALL_HINT = "apt-get install podman runc  (or install Docker and start its daemon)"


class ContainerSettings(BaseModel):
    """How the docker sandbox talks to the engine and shapes its containers.

    `cli`: "auto" (docker when its daemon answers, else podman), "docker", "podman" or a path to
    either. `image`: the image every workspace's container runs (it must hold `sh`, `sleep` and,
    for grading, `python` with pytest and pytest-timeout); built locally, nothing is pulled.
    `global_flags` go before the subcommand (podman: `--runtime runc --cgroup-manager cgroupfs`),
    `run_flags` into `run` (`--ulimit nofile=1024:1024`). `python` is the interpreter the grader
    runs inside, and the one a task's Python `[environment]` is built with in a derived image.
    `cpus`, `memory`, `pids_limit` bound each container. `workdir` is where the workspace is
    mounted inside (one fixed path for every workspace). `fast_exec`: run commands with `runc exec`
    straight into the container where that provably applies (rootful Podman with runc;
    sandbox/_runcexec.py), else through the engine's `exec`; False always uses the engine's.
    Read from the environment by `from_env` (LOOPWRIGHT_CONTAINER_<FIELD>).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    cli: str = "auto"
    image: str = ""
    global_flags: tuple[str, ...] = ()
    run_flags: tuple[str, ...] = ()
    python: str = "python3"
    cpus: float = Field(default=2.0, gt=0)
    memory: str = "4g"
    pids_limit: int = Field(default=1024, gt=0)
    workdir: str = "/testbed"
    fast_exec: bool = True

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> ContainerSettings:
        """The settings named by LOOPWRIGHT_CONTAINER_* variables (flags are shell-split), the
        defaults for the rest. ConfigError when a value does not validate."""
        env = os.environ if environ is None else environ
        found: dict[str, object] = {}
        for name in cls.model_fields:
            value = env.get(ENV_PREFIX + name.upper())
            if value is None:
                continue
            found[name] = tuple(shlex.split(value)) if name.endswith("_flags") else value
        try:
            return cls.model_validate(found)
        except ValueError as exc:
            raise ConfigError(
                "invalid container sandbox settings", got=str(exc), fix=f"check {ENV_PREFIX}*"
            ) from exc


class Engine:
    """One container CLI with its global flags. Every call is a subprocess; `SandboxError` when
    the CLI itself fails (the message carries its stderr)."""

    def __init__(self, cli: str, global_flags: Sequence[str] = ()) -> None:
        self.cli = cli
        self.global_flags = tuple(global_flags)
        self.kind: Literal["docker", "podman"] = (
            "podman" if "podman" in Path(cli).name else "docker"
        )

    @classmethod
    def detect(cls, settings: ContainerSettings) -> Engine:
        """The engine `settings.cli` names; for "auto", docker when its daemon answers, else
        podman. MissingDependencyError when none works, saying what each probe said."""
        names = ["docker", "podman"] if settings.cli == "auto" else [settings.cli]
        problems = []
        for name in names:
            found = shutil.which(name)
            if found is None:
                problems.append(f"{name}: not on PATH")
                continue
            engine = cls(found, settings.global_flags)
            problem = engine.problem()
            if problem is None:
                return engine
            problems.append(f"{name}: {problem}")
        raise MissingDependencyError(
            "no container engine works here",
            got="; ".join(problems),
            fix=f"install one: {INSTALL_HINT}; or set {ENV_PREFIX}CLI",
        )

    def argv(self, *args: str) -> list[str]:
        """The full command line of `cli <global flags> args...`."""
        return [self.cli, *self.global_flags, *args]

    def call(self, *args: str, timeout_s: float = _CLI_TIMEOUT_S) -> str:
        """Run the CLI; its stdout. SandboxError when it fails or hangs."""
        try:
            done = subprocess.run(
                self.argv(*args), capture_output=True, timeout=timeout_s, check=False
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise SandboxError(f"{self.kind} {args[0]} could not be run: {exc}") from exc
        if done.returncode != 0:
            detail = done.stderr.decode("utf-8", errors="replace").strip()[-2000:]
            raise SandboxError(f"{self.kind} {args[0]} failed (exit {done.returncode}): {detail}")
        return done.stdout.decode("utf-8", errors="replace")

    def problem(self) -> str | None:
        """Why this engine cannot run containers here (its `version` fails), or None."""
        try:
            self.call("version", "--format", "{{.Server.Version}}", timeout_s=_PROBE_TIMEOUT_S)
        except SandboxError as exc:
            return str(exc)
        return None

    def image_exists(self, image: str) -> bool:
        """True when `image` is present locally (nothing is pulled)."""
        try:
            self.call("image", "inspect", "--format", "{{.Id}}", image)
        except SandboxError:
            return False
        return True

    def remove(self, *containers: str) -> None:
        """Remove the containers at once (killed, not stopped gracefully); missing ones are fine."""
        if containers:
            subprocess.run(
                self.argv("rm", "-f", *containers),
                capture_output=True,
                timeout=_CLI_TIMEOUT_S,
                check=False,
            )

    def owned(self) -> dict[str, str]:
        """Every container loopwright started on this engine: id -> its owner label."""
        ids = self.call("ps", "-a", "-q", "--no-trunc", "--filter", f"label={LABEL}").split()
        if not ids:
            return {}
        try:
            out = self.call(
                "inspect", "--format", f'{{{{.Id}}}} {{{{index .Config.Labels "{_OWNER_LABEL}"}}}}',
                *ids,
            )  # fmt: skip
        except SandboxError:  # one vanished between ps and inspect: ask again next time
            return {}
        pairs = (line.split(" ", 1) for line in out.splitlines() if line.strip())
        return {pair[0]: pair[1] if len(pair) > 1 else "" for pair in pairs}

    def remove_stale(self) -> list[str]:
        """Remove the containers whose owning process (on this host) is gone: left by a
        loopwright that was killed (SIGKILL) or a worker that died. Returns their ids."""
        stale = [cid for cid, owner in self.owned().items() if _owner_is_dead(owner)]
        self.remove(*stale)
        return stale


def labels(workspace: Path) -> list[str]:
    """The `--label` flags of a container this process starts for `workspace`."""
    return [
        "--label", f"{LABEL}=1",
        "--label", f"{_OWNER_LABEL}={owner_label()}",
        "--label", f"{_WORKSPACE_LABEL}={workspace}",
    ]  # fmt: skip


def owner_label(pid: int | None = None) -> str:
    """`host:pid:start` naming this process (or `pid`); the start time tells a reused pid apart."""
    pid = os.getpid() if pid is None else pid
    return f"{socket.gethostname()}:{pid}:{_start_time(pid)}"


def _start_time(pid: int) -> str:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
    except OSError:
        return ""
    return stat.rsplit(")", 1)[-1].split()[19]  # field 22 of stat: start time in clock ticks


def _owner_is_dead(owner: str) -> bool:
    host, _, rest = owner.partition(":")
    pid, _, start = rest.partition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return False  # another machine's, or not ours to judge
    if not start:  # no /proc here: all that can be asked is whether the pid exists
        return not _pid_exists(int(pid))
    return owner_label(int(pid)) != owner


def _pid_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
