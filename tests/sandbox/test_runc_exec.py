"""The container sandbox's fast exec path (`runc exec` straight into a rootful Podman container,
sandbox/_runcexec.py) confines a command exactly as `podman exec` does: one probe, run through
both paths into one container, sees the same capabilities, no_new_privs, seccomp, ids, groups,
cgroup, namespaces, rlimits and environment. And where it does not apply, it is not used."""

from __future__ import annotations

import json
import os
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from loopwright.sandbox import ContainerSettings, DockerSandbox
from loopwright.sandbox._process import CHANNEL_ENV
from loopwright.sandbox._runcexec import RUNC_DEFAULT_ROOT, _options, _runtime_args, find_runc
from tests.containers import docker_sandbox_or_skip

PROBE = textwrap.dedent(
    """
    import json, os, resource
    status = {}
    for line in open("/proc/self/status"):
        key, _, value = line.partition(":")
        status[key] = value.strip()
    keys = ["CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "NoNewPrivs", "Seccomp",
            "Seccomp_filters", "Uid", "Gid", "Groups"]
    ns = {n: os.readlink("/proc/self/ns/" + n) for n in sorted(os.listdir("/proc/self/ns"))}
    limits = {n: resource.getrlimit(getattr(resource, n))
              for n in sorted(dir(resource)) if n.startswith("RLIMIT_")}
    def read(path):
        try:
            return open(path).read()
        except OSError as exc:
            return "unreadable: " + type(exc).__name__
    print(json.dumps({
        "status": {k: status.get(k) for k in keys},
        "cgroup": read("/proc/self/cgroup"),
        "ns": ns,
        "rlimits": limits,
        "ids": [os.getuid(), os.geteuid(), os.getgid(), os.getegid(), sorted(os.getgroups())],
        "umask": os.umask(0),
        "cwd": os.getcwd(),
        "env": dict(sorted(os.environ.items())),
        "oom_score_adj": read("/proc/self/oom_score_adj"),
        "lsm": read("/proc/self/attr/current"),
        "mounts": read("/proc/self/mountinfo"),
        "root": [os.stat("/").st_dev, os.stat("/").st_ino],
        "fd3": os.path.exists("/proc/self/fd/3"),
    }))
    """
)


@pytest.fixture
def docker() -> DockerSandbox:
    sandbox = docker_sandbox_or_skip()
    if sandbox.engine.kind != "podman" or os.geteuid() != 0:
        pytest.skip("the fast exec path is for rootful Podman (this is not)")
    if "runc" not in sandbox.settings.global_flags or not sandbox.settings.fast_exec:
        pytest.skip("the container tests' Podman runs another runtime, or the fast path is off")
    return sandbox


@contextmanager
def through_podman(docker: DockerSandbox, ws: Path) -> Iterator[None]:
    """The workspace's container reached through `podman exec` for a while, as when the fast
    path does not apply."""
    container = docker._containers[ws.resolve()]
    runc, container.runc = container.runc, None
    try:
        yield
    finally:
        container.runc = runc


def probe(docker: DockerSandbox, ws: Path, **kwargs: Any) -> dict[str, Any]:
    result = docker.run(["python3", "-c", PROBE], cwd=ws / "sub", timeout_s=120, **kwargs)
    assert result.exit_code == 0, result.stderr
    found: dict[str, Any] = json.loads(result.stdout)
    return found


def test_a_command_is_confined_by_runc_exec_exactly_as_by_podman_exec(
    docker: DockerSandbox, ws: Path
) -> None:
    (ws / "sub").mkdir()
    docker.run(["true"], cwd=ws, timeout_s=60)  # the workspace's container: ws, not ws/sub
    env = {"GIVEN": f"{ws}/x", "PATH": "/usr/bin:/bin", "HOME": "/tmp/elsewhere"}
    fast = probe(docker, ws, env=env)
    assert docker.exec_path(ws) == "runc exec"
    with through_podman(docker, ws):
        assert docker.exec_path(ws).startswith("podman exec")
        slow = probe(docker, ws, env=env)
    for key in ("status", "cgroup", "ns", "rlimits", "ids", "umask", "cwd", "env"):
        assert fast[key] == slow[key], key
    assert fast == slow  # and the rest: LSM label, oom_score_adj, mounts, root
    # what both must be, not only the same
    status = fast["status"]
    assert {status[k] for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")} == {
        "0000000000000000"
    }
    assert (status["NoNewPrivs"], status["Seccomp"]) == ("1", "2")
    assert int(status["Seccomp_filters"]) >= 1
    container_id = docker._containers[ws.resolve()].id
    assert all(container_id in line for line in fast["cgroup"].splitlines() if line)
    own = {
        n: str(Path(f"/proc/self/ns/{n}").readlink()) for n in ("mnt", "pid", "net", "ipc", "uts")
    }
    assert all(fast["ns"][n] != own[n] for n in own)
    assert fast["rlimits"]["RLIMIT_NOFILE"] == [1024, 1024]
    assert fast["rlimits"]["RLIMIT_NPROC"] == [1024, 1024]
    assert (fast["cwd"], fast["env"]["GIVEN"], fast["env"]["HOME"]) == (
        "/testbed/sub",
        "/testbed/x",
        "/tmp/elsewhere",
    )


def test_the_outcome_channel_reaches_the_command_by_both_paths(
    docker: DockerSandbox, ws: Path
) -> None:
    (ws / "sub").mkdir()
    script = f"import os; os.write(int(os.environ[{CHANNEL_ENV!r}]), b'sent\\n')"
    fast = docker.run(["python3", "-c", script], cwd=ws, timeout_s=60, channel=True)
    with through_podman(docker, ws):
        slow = docker.run(["python3", "-c", script], cwd=ws, timeout_s=60, channel=True)
    assert (fast.exit_code, fast.channel) == (slow.exit_code, slow.channel)
    assert fast.channel == b"sent\n"


def test_the_fast_path_leaves_the_container_running_no_leftover(
    docker: DockerSandbox, ws: Path
) -> None:
    """Each command's process spec is a host file outside every mount, removed afterwards; what
    a command left behind is killed as on the engine's path."""
    started = docker.run(["sh", "-c", "setsid sleep 300 & echo $!"], cwd=ws, timeout_s=60)
    assert started.exit_code == 0
    listing = "import os; print([open(f'/proc/{p}/cmdline').read() for p in os.listdir('/proc') if p.isdigit()])"
    after = docker.run(["python3", "-c", listing], cwd=ws, timeout_s=60)
    assert "300" not in after.stdout and "sleep" in after.stdout  # init's own `sleep 86400`
    stage = docker._containers[ws.resolve()].stage
    assert not list(stage.glob("exec-*.json"))
    listing = docker.run(["sh", "-c", "ls -a /.lw /.lw/ro /.lw/rw"], cwd=ws, timeout_s=60)
    assert "exec-" not in listing.stdout


def test_the_opt_out_and_other_engines_keep_the_engines_exec(tmp_path: Path) -> None:
    assert not ContainerSettings.from_env({"LOOPWRIGHT_CONTAINER_FAST_EXEC": "0"}).fast_exec
    assert ContainerSettings.from_env({}).fast_exec
    cid = "a" * 64
    assert find_runc("podman", cid, 1, enabled=False) == (
        None,
        "turned off (LOOPWRIGHT_CONTAINER_FAST_EXEC=0)",
    )
    assert find_runc("docker", cid, 1)[1].startswith("the engine is docker")
    assert find_runc("podman", cid, None)[0] is None
    if os.geteuid() == 0:  # this process is nobody's container init: its parent is no conmon
        runc, reason = find_runc("podman", cid, os.getpid())
        assert runc is None and "not conmon" in reason


def test_conmons_command_line_is_read_for_the_runtime_and_its_root() -> None:
    argv = [
        "--api-version", "1", "-c", "abc", "-u", "abc", "-r", "/usr/bin/runc", "-b", "/b",
        "--runtime-arg", "--log-format=json", "--runtime-arg", "--log",
        "--runtime-arg=/run/x/oci-log", "--full-attach", "-l", "k8s-file:/l",
        "--exit-command-arg", "--root", "--exit-command-arg", "/var/lib/containers/storage",
    ]  # fmt: skip
    options = _options(argv)
    assert options["-c"] == ["abc"] and options["-r"] == ["/usr/bin/runc"]
    assert _runtime_args(options["--runtime-arg"]) == ("", ())  # conmon passes no --root
    rootless = _options(["--runtime-arg", "--root=/run/user/1000/runc", "--runtime-arg",
                         "--systemd-cgroup"])  # fmt: skip
    assert _runtime_args(rootless["--runtime-arg"]) == (
        "/run/user/1000/runc",
        ("--systemd-cgroup",),
    )
    split = _options(["--runtime-arg", "--root", "--runtime-arg", "/r"])
    assert _runtime_args(split["--runtime-arg"]) == ("/r", ())
    assert RUNC_DEFAULT_ROOT == "/run/runc"
