"""The container sandbox's kill after every command, sent from the host into the container's PID
namespace (sandbox/_nskill.py) where this process may: hostile commands that kill their wrapper,
keep a daemon writing, or kill the killer; and the checks that keep the host's own processes out
of its reach."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from loopwright.errors import SandboxError
from loopwright.sandbox import DockerSandbox
from loopwright.sandbox import _docker as docker_module
from loopwright.sandbox import _nskill as nskill
from loopwright.sandbox._nskill import kill_in_namespace, open_pid_namespace, usable

pytestmark = pytest.mark.docker

# A daemon, left by a command that then kills its own wrapper, that rewrites a file every 10 ms.
_BEATING = (
    "(setsid sh -c 'i=0; while :; do i=$((i+1)); echo $i >> /testbed/beat; sleep 0.01; done' &) ;"
    " sleep 0.2; kill -9 $PPID"
)


def _needs_host_kill() -> None:
    if not usable():
        pytest.skip("the host-side kill needs root and nsenter (rootless: the `exec` kill is used)")


def _engine_calls(docker: DockerSandbox, monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, ...]]:
    calls: list[tuple[str, ...]] = []
    original = docker.engine.call

    def spy(*args: str, timeout_s: float = 120.0) -> str:
        calls.append(args)
        return original(*args, timeout_s=timeout_s)

    monkeypatch.setattr(docker.engine, "call", spy)
    return calls


def container_init(docker: DockerSandbox, cid: str) -> int:
    return int(docker.engine.call("inspect", "--format", "{{.State.Pid}}", cid).strip())


def _still(beat: Path) -> bool:
    """True when `beat` does not change over half a second (nothing is writing it)."""
    before = beat.read_text()
    time.sleep(0.5)
    return beat.read_text() == before


def test_a_daemon_that_killed_its_wrapper_writes_nothing_once_the_command_returned(
    docker: DockerSandbox, ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _needs_host_kill()
    docker.run(["true"], cwd=ws, timeout_s=60)  # the container runs
    calls = _engine_calls(docker, monkeypatch)
    docker.run(["sh", "-c", _BEATING], cwd=ws, timeout_s=60)
    assert len((ws / "beat").read_text().split()) > 3  # it was beating
    assert _still(ws / "beat"), "the daemon outlived the command"
    assert not any(c[0] == "exec" for c in calls), calls  # killed from the host, no `exec`
    assert docker.run(["true"], cwd=ws, timeout_s=60).ok


def test_a_daemon_that_kills_everything_it_can_is_gone_before_the_command_returns(
    docker: DockerSandbox, ws: Path
) -> None:
    """It kills the host's killer too (a process in the container may signal it): then the
    sandbox falls back to the engine's `exec`, and removes the container when that fails."""
    hunter = "while :; do kill -KILL -1 2>/dev/null; echo x >> /testbed/beat; done"
    docker.run(["sh", "-c", f"(setsid sh -c '{hunter}' &) ; sleep 30"], cwd=ws, timeout_s=60)
    assert (ws / "beat").read_text().startswith("x")  # it was hunting
    assert _still(ws / "beat"), "a daemon outlived the command"
    assert docker.run(["sh", "-c", "echo ok"], cwd=ws, timeout_s=60).stdout == "ok\n"


def test_a_dead_container_is_forgotten_and_the_next_command_starts_a_fresh_one(
    docker: DockerSandbox, ws: Path
) -> None:
    _needs_host_kill()
    docker.run(["true"], cwd=ws, timeout_s=60)
    container = docker._containers[ws.resolve()]
    assert container.pidns is not None
    docker.engine.remove(container.id)
    assert not kill_in_namespace(container.pidns)  # the namespace is dead: the killer cannot run
    with pytest.raises(SandboxError, match="container is gone"):
        docker.run(["true"], cwd=ws, timeout_s=60)  # the kill falls back to `exec`, which fails
    assert ws.resolve() not in docker._containers
    assert docker.run(["sh", "-c", "echo fresh"], cwd=ws, timeout_s=60).stdout == "fresh\n"


def test_the_host_kill_never_takes_a_namespace_that_is_not_the_containers(
    docker: DockerSandbox, ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pid that is not the container's init (its cgroup does not name the container), or whose
    namespace is this process's own, gives no namespace: a `kill -1` there would hit the host."""
    _needs_host_kill()
    docker.run(["true"], cwd=ws, timeout_s=60)
    container = docker._containers[ws.resolve()]
    assert open_pid_namespace(os.getpid(), container.id) is None
    # Even a process whose cgroup did name the container: its namespace is this process's own.
    monkeypatch.setattr(nskill, "_read_at", lambda directory, name: f"/libpod-{container.id}")
    assert open_pid_namespace(os.getpid(), container.id) is None
    theirs = open_pid_namespace(container_init(docker, container.id), container.id)
    assert theirs is not None
    nskill.close_namespace(theirs)


def test_without_the_host_kill_every_command_is_killed_through_the_engine(
    docker: DockerSandbox, ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(docker_module, "kill_in_namespace", lambda namespace: False)
    calls = _engine_calls(docker, monkeypatch)
    docker.run(["sh", "-c", _BEATING], cwd=ws, timeout_s=60)
    assert _still(ws / "beat"), "the daemon outlived the command"
    if usable():
        assert any(c[0] == "exec" for c in calls), calls
