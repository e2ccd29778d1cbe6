"""The container sandbox (podman or docker CLI) on a locally built image: the shared contract,
what the container shows and hides, limits, and that every container goes away, even after its
owner was killed with SIGKILL."""

from __future__ import annotations

import multiprocessing
import os
import pickle
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from loopwright.errors import SandboxError, UsageError
from loopwright.sandbox import DockerSandbox, Engine
from loopwright.sandbox._engine import LABEL
from tests.containers import docker_sandbox_or_skip, image_tag, settings
from tests.sandbox.conftest import processes_with, sleep_marker, wait_until

pytestmark = pytest.mark.docker


def containers_of(engine: Engine, workspace: Path) -> list[str]:
    out = engine.call("ps", "-a", "-q", "--filter", f"label=loopwright.workspace={workspace}")
    return out.split()


def test_exit_code_streams_and_the_fixed_workdir(docker: DockerSandbox, ws: Path) -> None:
    result = docker.run(["sh", "-c", "pwd; echo err >&2; exit 3"], cwd=ws, timeout_s=60)
    assert (result.exit_code, result.stdout, result.stderr) == (3, "/testbed\n", "err\n")
    assert result.argv == ("sh", "-c", "pwd; echo err >&2; exit 3")
    assert result.sandbox == "docker" and docker.isolated


def test_a_subdirectory_runs_in_the_same_container_at_its_place(
    docker: DockerSandbox, ws: Path
) -> None:
    (ws / "pkg").mkdir()
    docker.run(["sh", "-c", "echo 1 > /tmp/mark"], cwd=ws, timeout_s=60)
    result = docker.run(["sh", "-c", "pwd; cat /tmp/mark"], cwd=ws / "pkg", timeout_s=60)
    assert result.stdout == "/testbed/pkg\n1\n"
    assert len(containers_of(docker.engine, ws)) == 1


def test_stdin_is_passed_and_otherwise_empty(docker: DockerSandbox, ws: Path) -> None:
    assert docker.run(["cat"], cwd=ws, timeout_s=60, stdin="hello").stdout == "hello"
    assert docker.run(["cat"], cwd=ws, timeout_s=60).stdout == ""


def test_the_environment_is_clean_and_host_paths_in_it_are_rewritten(
    docker: DockerSandbox, ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SECRET_TOKEN", "hunter2")
    plain = docker.run(["env"], cwd=ws, timeout_s=60).stdout
    assert "hunter2" not in plain and "HOME=/tmp" in plain.splitlines()
    given = docker.run(["sh", "-c", "echo $WHERE"], cwd=ws, timeout_s=60, env={"WHERE": f"{ws}/x"})
    assert given.stdout == "/testbed/x\n"


def test_a_missing_binary_and_an_empty_command_raise(docker: DockerSandbox, ws: Path) -> None:
    with pytest.raises(SandboxError, match="no-such-binary"):
        docker.run(["no-such-binary"], cwd=ws, timeout_s=60)
    with pytest.raises(UsageError):
        docker.run([], cwd=ws, timeout_s=60)


def test_a_runaway_command_is_killed_at_its_timeout_with_its_children(
    docker: DockerSandbox, ws: Path
) -> None:
    marker = sleep_marker()
    result = docker.run(["sh", "-c", f"sleep {marker} & sleep {marker}"], cwd=ws, timeout_s=2)
    assert result.timed_out and result.exit_code is None
    assert wait_until(lambda: not processes_with(marker)), processes_with(marker)


def test_nothing_a_command_started_outlives_it_even_when_it_kills_its_parent(
    docker: DockerSandbox, ws: Path
) -> None:
    marker = sleep_marker()
    script = f"setsid sleep {marker} & (sleep {marker} &) ; kill -9 $PPID"
    docker.run(["sh", "-c", script], cwd=ws, timeout_s=60)
    assert wait_until(lambda: not processes_with(marker)), processes_with(marker)
    assert docker.run(["true"], cwd=ws, timeout_s=60).ok  # the container still serves


def test_output_beyond_the_cap_is_dropped(docker: DockerSandbox, ws: Path) -> None:
    code = "import sys; sys.stdout.write('x' * 300_000)"
    result = docker.run(["python3", "-c", code], cwd=ws, timeout_s=60, output_cap=10_000)
    assert result.truncated and result.stdout.startswith("x" * 10_000)
    assert "290000 bytes dropped" in result.stdout


def test_there_is_no_network(docker: DockerSandbox, ws: Path) -> None:
    code = textwrap.dedent("""
        import socket
        try:
            socket.create_connection(("10.255.255.1", 80), timeout=5)
        except OSError as exc:
            print("refused:", exc)
        print(sorted(n for _, n in socket.if_nameindex()))
    """)
    result = docker.run(["python3", "-c", code], cwd=ws, timeout_s=60)
    assert "refused:" in result.stdout and "unreachable" in result.stdout
    assert result.stdout.splitlines()[-1] == "['lo']"


def test_only_the_workspace_of_the_host_is_visible_and_the_system_is_read_only(
    docker: DockerSandbox, ws: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "beside-the-workspace.txt"
    secret.write_text("secret")
    (ws / "mine.txt").write_text("mine")
    script = (
        f"ls {tmp_path} 2>&1; find / -name beside-the-workspace.txt -not -path '/proc/*' "
        "2>/dev/null; cat /testbed/mine.txt; touch /usr/x 2>&1; echo ok > /testbed/new"
    )
    result = docker.run(["sh", "-c", script], cwd=ws, timeout_s=60)
    assert "No such file or directory" in result.stdout
    assert "beside-the-workspace" not in result.stdout
    assert "mine" in result.stdout and "Read-only file system" in result.stdout
    assert (ws / "new").read_text() == "ok\n"


def test_readonly_and_writable_paths_appear_where_the_command_names_them(
    docker: DockerSandbox, ws: Path, tmp_path: Path
) -> None:
    kit, out = tmp_path / "kit", tmp_path / "out"
    kit.mkdir()
    out.mkdir()
    (kit / "plugin.txt").write_text("from the kit")
    script = f"cat {kit}/plugin.txt; echo forged > {kit}/plugin.txt; echo result > {out}/r.txt"
    result = docker.run(["sh", "-c", script], cwd=ws, timeout_s=60, readonly=[kit], writable=[out])
    assert result.stdout == "from the kit"
    assert "Read-only file system" in result.stderr
    assert (kit / "plugin.txt").read_text() == "from the kit"
    assert (out / "r.txt").read_text() == "result\n"


def test_the_limits_of_the_settings_are_set(docker: DockerSandbox, ws: Path) -> None:
    docker.run(["true"], cwd=ws, timeout_s=60)
    (cid,) = containers_of(docker.engine, ws)
    fmt = "{{.HostConfig.PidsLimit}} {{.HostConfig.Memory}} {{.HostConfig.NanoCpus}}"
    limits = docker.engine.call("inspect", "--format", fmt, cid).split()
    s = docker.settings
    assert limits == [str(s.pids_limit), str(4 * 1024**3), str(int(s.cpus * 1e9))]


def test_release_removes_the_container_and_a_removed_workspace_loses_it(
    docker: DockerSandbox, tmp_path: Path
) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    docker.run(["true"], cwd=first, timeout_s=60)
    docker.run(["true"], cwd=second, timeout_s=60)
    assert containers_of(docker.engine, first) and containers_of(docker.engine, second)
    docker.release(first)
    assert containers_of(docker.engine, first) == []
    second.rmdir()
    third = tmp_path / "c"
    third.mkdir()
    docker.run(["true"], cwd=third, timeout_s=60)  # collects the container of a gone workspace
    assert containers_of(docker.engine, second) == []
    docker.release(third)


def test_containers_of_a_killed_loopwright_are_removed_by_the_next_one(tmp_path: Path) -> None:
    docker_sandbox_or_skip()
    workspace = tmp_path / "orphan"
    workspace.mkdir()
    script = textwrap.dedent(f"""
        import sys, time
        from pathlib import Path
        from loopwright.sandbox import DockerSandbox, ContainerSettings
        sandbox = DockerSandbox(ContainerSettings.model_validate_json(sys.argv[1]))
        sandbox.run(["true"], cwd=Path({str(workspace)!r}), timeout_s=60)
        print("started", flush=True)
        time.sleep(600)
    """)
    chosen = settings(image_tag())
    owner = subprocess.Popen(
        [sys.executable, "-c", script, chosen.model_dump_json()],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert owner.stdout is not None and owner.stdout.readline() == "started\n"
    engine = Engine.detect(chosen)
    assert len(containers_of(engine, workspace)) == 1
    os.kill(owner.pid, signal.SIGKILL)
    owner.wait()
    assert len(containers_of(engine, workspace)) == 1  # nothing removed it: its owner is dead
    DockerSandbox(chosen).close()
    assert containers_of(engine, workspace) == []


def test_a_live_owners_containers_are_left_alone(docker: DockerSandbox, ws: Path) -> None:
    docker.run(["true"], cwd=ws, timeout_s=60)
    assert docker.engine.remove_stale() == []
    assert len(containers_of(docker.engine, ws)) == 1


def test_every_container_carries_the_loopwright_label(docker: DockerSandbox, ws: Path) -> None:
    docker.run(["true"], cwd=ws, timeout_s=60)
    (cid,) = containers_of(docker.engine, ws)
    assert cid[:12] in docker.engine.call("ps", "-q", "--filter", f"label={LABEL}")


def test_a_pickled_sandbox_owns_no_containers_and_still_runs(
    docker: DockerSandbox, ws: Path
) -> None:
    docker.run(["true"], cwd=ws, timeout_s=60)
    copy = pickle.loads(pickle.dumps(docker))
    assert copy.run(["sh", "-c", "echo $$ >/dev/null; pwd"], cwd=ws, timeout_s=60).ok
    copy.close()


def test_a_command_needing_the_network_gets_a_fresh_container(
    docker: DockerSandbox, ws: Path
) -> None:
    docker.run(["true"], cwd=ws, timeout_s=60)
    (before,) = containers_of(docker.engine, ws)
    started = time.monotonic()
    docker.run(["true"], cwd=ws, timeout_s=60, network=True)
    (after,) = containers_of(docker.engine, ws)
    assert before != after and time.monotonic() - started < 120


def test_a_container_removed_from_outside_is_an_error_then_replaced(
    docker: DockerSandbox, ws: Path
) -> None:
    docker.run(["true"], cwd=ws, timeout_s=60)
    (cid,) = containers_of(docker.engine, ws)
    docker.engine.remove(cid)
    with pytest.raises(SandboxError, match="container is gone"):
        docker.run(["true"], cwd=ws, timeout_s=60)
    assert docker.run(["true"], cwd=ws, timeout_s=60).ok
    (fresh,) = containers_of(docker.engine, ws)
    assert fresh != cid


def test_an_attached_image_survives_a_change_of_network(docker: DockerSandbox, ws: Path) -> None:
    docker.attach(ws, image=docker.settings.image)
    docker.run(["true"], cwd=ws, timeout_s=60, network=True)
    (cid,) = containers_of(docker.engine, ws)
    image = docker.engine.call("inspect", "--format", "{{.Config.Image}}", cid).strip()
    assert image == docker.settings.image


def _run_and_vanish(sandbox: DockerSandbox, workspace: Path) -> None:
    sandbox.run(["true"], cwd=workspace, timeout_s=60)
    os._exit(0)  # as a pool worker ends: no atexit, no release


def test_close_removes_the_containers_of_a_forked_worker_that_died(
    docker: DockerSandbox, ws: Path
) -> None:
    worker = multiprocessing.get_context("fork").Process(target=_run_and_vanish, args=(docker, ws))
    worker.start()
    worker.join(120)
    assert worker.exitcode == 0
    assert len(containers_of(docker.engine, ws)) == 1  # the worker's, left behind
    docker.close()
    assert containers_of(docker.engine, ws) == []
