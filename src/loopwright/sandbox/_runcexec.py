"""The fast `exec` path of the container sandbox: `runc exec` straight into a Podman container that
runc runs, instead of `podman exec`.

`podman exec` has conmon run `runc exec --process <file> <container>`, the file being the
container's own process spec with the command's argv, cwd and environment (the container's,
overridden by the command's) put in; runc starts the process with that spec's user,
capabilities, no_new_privs and rlimits and the container's seccomp filter, in the container's
namespaces and cgroup. This path hands runc the same spec itself, read from the container's OCI
bundle (`config.json`, less the `HOSTNAME` variable Podman 4 writes there and leaves out of an
exec's environment): the confinement is runc's either way, only the Podman client and conmon
(about 0.2 s of each exec here) are left out. `tests/sandbox/test_runc_exec.py` runs one probe
through both paths into one container and requires the same capabilities, no_new_privs,
seccomp, ids, groups, cgroup, namespaces, rlimits and environment.

Used only where it provably applies, found once per container, when it starts: loopwright is
root on Linux; the engine is Podman (Docker's runc state belongs to containerd's shim); the
container's init has a parent that is conmon for this container id, whose runtime (`-r`) is
runc; runc's state directory is the `--root` conmon passes to the runtime, else runc's default
for root (`/run/runc`), and `runc --root <it> state <id>` names the container running with the
very init pid Podman wrote to its `--pidfile`. Anything else, or
`LOOPWRIGHT_CONTAINER_FAST_EXEC=0` (`ContainerSettings.fast_exec`), leaves the container on
`podman exec`, silently, with the reason in a debug log (logger `loopwright.sandbox`) and in
`DockerSandbox.exec_path`.
"""

from __future__ import annotations

import copy
import json
import logging
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["RuncExec", "find_runc"]

logger = logging.getLogger("loopwright.sandbox")

RUNC_DEFAULT_ROOT = "/run/runc"  # runc's own default `--root` when run as root
_STATE_TIMEOUT_S = 20.0


@dataclass(frozen=True)
class RuncExec:
    """How to `runc exec` into one container: the runtime, its state directory, the container's
    id and its process spec (from the bundle's `config.json`)."""

    runtime: str
    root: str
    container_id: str
    process: Mapping[str, Any] = field(repr=False)
    global_flags: tuple[str, ...] = ()

    def process_for(self, args: Sequence[str], cwd: str, env: Mapping[str, str]) -> dict[str, Any]:
        """The process spec of one command: the container's, with `args`, `cwd`, no terminal and
        the environment `podman exec` gives: the spec's, but for the `HOSTNAME` Podman adds to
        the runtime spec only, overridden by `env` (one entry a name)."""
        spec: dict[str, Any] = copy.deepcopy(dict(self.process))
        spec["args"] = list(args)
        spec["cwd"] = cwd
        spec["terminal"] = False
        merged = dict(entry.partition("=")[::2] for entry in spec.get("env", []))
        merged.pop("HOSTNAME", None)  # in the runtime spec Podman writes, not in its exec's
        merged.update(env)
        spec["env"] = [f"{key}={value}" for key, value in merged.items()]
        return spec

    def argv(self, process_file: Path, *, preserve_fds: int = 0) -> list[str]:
        """`runc exec` of the spec written at `process_file`, passing on descriptors
        3..3+preserve_fds-1."""
        keep = ["--preserve-fds", str(preserve_fds)] if preserve_fds else []
        return [
            self.runtime, *self.global_flags, "--root", self.root, "exec",
            "--process", str(process_file), *keep, self.container_id,
        ]  # fmt: skip

    def write_process(
        self, path: Path, args: Sequence[str], cwd: str, env: Mapping[str, str]
    ) -> Path:
        """Write the spec of one command at `path` (a host file only this user can read)."""
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(self.process_for(args, cwd, env), handle)
        return path


def find_runc(
    kind: str, container_id: str, init_pid: int | None, *, enabled: bool = True
) -> tuple[RuncExec | None, str]:
    """The fast path into the container `container_id` of engine `kind`, whose init is
    `init_pid` (already checked to be that container's), with "" ; or None with the reason it
    does not apply."""
    found = _find(kind, container_id, init_pid, enabled)
    if isinstance(found, str):
        logger.debug("container %s: podman exec, not runc exec: %s", container_id[:12], found)
        return None, found
    return found, ""


def _find(kind: str, cid: str, init_pid: int | None, enabled: bool) -> RuncExec | str:
    if not enabled:
        return "turned off (LOOPWRIGHT_CONTAINER_FAST_EXEC=0)"
    if kind != "podman":
        return f"the engine is {kind} (only Podman's runc state is used)"
    if sys.platform != "linux" or os.geteuid() != 0:
        return "loopwright is not root (runc's state of rootful Podman is root's)"
    if init_pid is None:
        return "the container's init pid is unknown"
    conmon = _conmon_args(init_pid, cid)
    if isinstance(conmon, str):
        return conmon
    runtime, root, flags = conmon
    if Path(runtime).name != "runc":
        return f"the OCI runtime is {runtime}, not runc"
    state = _state(runtime, root, cid)
    if isinstance(state, str):
        return state
    if state.get("id") != cid or state.get("status") != "running":
        return f"runc's state at {root} does not show {cid[:12]} running"
    if state.get("pid") != init_pid:
        return f"runc's state at {root} names pid {state.get('pid')}, not the init {init_pid}"
    process = _process_spec(Path(str(state.get("bundle", ""))))
    if isinstance(process, str):
        return process
    return RuncExec(runtime, root, cid, process, flags)


def _conmon_args(init_pid: int, cid: str) -> tuple[str, str, tuple[str, ...]] | str:
    """From the command line of the init's parent, conmon for `cid`: the runtime's path, its
    `--root` (runc's default when conmon passes none) and the global flags that must match
    (`--systemd-cgroup`)."""
    try:
        stat = Path(f"/proc/{init_pid}/stat").read_text(encoding="utf-8")
        parent = int(stat.rsplit(")", 1)[-1].split()[1])
        args = Path(f"/proc/{parent}/cmdline").read_bytes().decode("utf-8", "replace")
    except (OSError, ValueError, IndexError) as exc:
        return f"the container's monitor cannot be read: {exc}"
    argv = args.split("\0")
    if Path(argv[0]).name != "conmon":
        return f"the init's parent is {Path(argv[0]).name!r}, not conmon"
    options = _options(argv[1:])
    if options.get("-c", options.get("--cid")) != [cid]:
        return "the init's parent is the monitor of another container"
    runtime = (options.get("-r") or options.get("--runtime") or [""])[-1]
    if not runtime:
        return "conmon names no runtime"
    root, flags = _runtime_args(options.get("--runtime-arg", []))
    return runtime, root or RUNC_DEFAULT_ROOT, flags


def _options(args: Sequence[str]) -> dict[str, list[str]]:
    """conmon's `--name value`, `--name=value` and `-x value` options, each name's values in order."""
    found: dict[str, list[str]] = {}
    i = 0
    while i < len(args):
        arg = args[i]
        if arg.startswith("-") and "=" in arg:
            name, value = arg.split("=", 1)
            found.setdefault(name, []).append(value)
        elif arg.startswith("-") and i + 1 < len(args) and not args[i + 1].startswith("-"):
            found.setdefault(arg, []).append(args[i + 1])
            i += 1
        elif arg.startswith("-") and i + 1 < len(args) and arg == "--runtime-arg":
            found.setdefault(arg, []).append(args[i + 1])  # a runtime flag as its value
            i += 1
        else:
            found.setdefault(arg, [])
        i += 1
    return found


def _runtime_args(values: Sequence[str]) -> tuple[str, tuple[str, ...]]:
    root, flags = "", []
    for i, value in enumerate(values):
        if value.startswith("--root="):
            root = value.split("=", 1)[1]
        elif value == "--root" and i + 1 < len(values):
            root = values[i + 1]
        elif value == "--systemd-cgroup":
            flags.append(value)
    return root, tuple(flags)


def _state(runtime: str, root: str, cid: str) -> dict[str, Any] | str:
    try:
        done = subprocess.run(
            [runtime, "--root", root, "state", cid],
            capture_output=True,
            timeout=_STATE_TIMEOUT_S,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"`runc state` could not be run: {exc}"
    if done.returncode != 0:
        detail = done.stderr.decode("utf-8", "replace").strip()[-300:]
        return f"runc has no state of the container at {root}: {detail}"
    try:
        state = json.loads(done.stdout)
    except ValueError:
        return "`runc state` printed no JSON"
    return state if isinstance(state, dict) else "`runc state` printed no object"


def _process_spec(bundle: Path) -> dict[str, Any] | str:
    try:
        config = json.loads((bundle / "config.json").read_text(encoding="utf-8"))
        process = config["process"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return f"the container's OCI spec cannot be read at {bundle}: {exc}"
    if not isinstance(process, dict):
        return "the container's OCI spec has no process"
    return process
