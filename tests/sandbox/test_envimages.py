"""A task's Python `[environment]` under the container sandbox: built into a derived image (FROM
the sandbox's image, the image's own Python, the repo at /testbed), once per content, reused
after; agents and the grader run in it, and cannot write it.

The task (tests/sandbox/envfactory.py) depends on a distribution the test builds as a wheel and
installs with `--no-index --find-links`; its own package is installed editable, so a gold grade
of 1.0 needs both the dependency and the workspace's code (mounted over the image's copy)."""

from __future__ import annotations

import json
import pickle
import secrets
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from loopwright.cli import main
from loopwright.errors import ConfigError
from loopwright.models import ToolCall
from loopwright.sandbox import (
    ENV_PREFIX_INSIDE,
    DockerSandbox,
    Engine,
    EnvImageBuilder,
    EnvironmentBuildError,
    EnvironmentCache,
    _envimages,
    create_workspace,
    remove_workspace,
)
from loopwright.tasks import Task, load_task
from tests.containers import set_cli_container_env

from .envfactory import make_env_task
from .test_environments import PROBE, _run

pytestmark = pytest.mark.docker


def env_task(parent: Path, *, install: tuple[str, ...] | None = None) -> Task:
    """The envcalc task with a nonce in its environment/ directory: every test run builds its
    image afresh (the tag is content-addressed)."""
    task = make_env_task(parent) if install is None else make_env_task(parent, install=install)
    (task.root / "environment" / "nonce.txt").write_text(secrets.token_hex(8))
    return load_task(task.root)


@pytest.fixture
def builder(docker: DockerSandbox, tmp_path: Path) -> EnvImageBuilder:
    return EnvImageBuilder.for_sandbox(docker, tmp_path / "locks")


@pytest.fixture
def dropped(builder: EnvImageBuilder) -> Iterator[list[str]]:
    """Tags to remove from the engine when the test ends."""
    tags: list[str] = []
    yield tags
    for tag in tags:
        if builder.engine.image_exists(tag):
            builder.engine.call("rmi", "-f", tag)


def _counting_builds(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The tags the environment-image builder builds from now on (the builds still happen)."""
    built: list[str] = []
    real: Callable[..., str] = _envimages.engine_build

    def counted(engine: Any, tag: str, *args: Any, **kwargs: Any) -> str:
        built.append(tag)
        return real(engine, tag, *args, **kwargs)

    monkeypatch.setattr(_envimages, "engine_build", counted)
    return built


def test_a_task_with_a_dependency_validates_under_docker_and_the_second_validate_builds_nothing(
    tmp_path: Path,
    builder: EnvImageBuilder,
    dropped: list[str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    set_cli_container_env(monkeypatch)
    task = env_task(tmp_path / "bench")
    dropped.append(builder.tag(task))
    built = _counting_builds(monkeypatch)
    bench, cache = str(tmp_path / "bench"), str(tmp_path / "cache")
    argv = ["bench", "validate", bench, "--sandbox", "docker", "--env-cache", cache, "--json"]
    for run in range(2):
        code = main(argv)
        checks = {c["variant"]: c for c in json.loads(capsys.readouterr().out)}
        assert code == 0, checks
        gold, flawed = checks["gold"], checks["adds"]
        assert (gold["score"], gold["resolved"], gold["invalid"]) == (1.0, True, False), gold
        assert flawed["score"] < 1.0 and not flawed["invalid"], flawed
        assert built == [builder.tag(task)], f"validate #{run + 1} built {built}"
    assert not (tmp_path / "cache").exists() or not any(
        p.is_dir() and p.name != "images" for p in (tmp_path / "cache").iterdir()
    ), "no environment is built on this machine under --sandbox docker"
    assert (
        main(["bench", "prepare", bench, "--sandbox", "docker", "--env-cache", cache, "--json"])
        == 0
    )
    rows = json.loads(capsys.readouterr().out)
    assert [(r["image"], r["built"]) for r in rows] == [(builder.tag(task), False)]
    assert built == [builder.tag(task)]


def test_commands_run_in_the_environment_which_the_agent_cannot_write(
    tmp_path: Path, docker: DockerSandbox, builder: EnvImageBuilder, dropped: list[str]
) -> None:
    task = env_task(tmp_path / "bench")
    dropped.append(builder.tag(task))
    environment = builder.environment(task)
    workspace = create_workspace(task.repo_dir, tmp_path / "ws")
    try:
        (workspace.path / "src" / "envcalc" / "marker.py").write_text("WORKSPACE = True\n")
        placed = docker.within(environment, workspace.path)
        probe = (
            "import os, sys, units, envcalc.marker; "
            "print(sys.prefix, os.environ['VIRTUAL_ENV'], os.environ['ENVCALC_MODE'], "
            "units.FACTOR, envcalc.marker.__file__)"
        )
        seen = placed.run(["python", "-c", probe], cwd=workspace.path, timeout_s=60)
        assert seen.ok, seen.stderr
        env = str(ENV_PREFIX_INSIDE)
        assert seen.stdout.split() == [env, env, "test", "10", "/testbed/src/envcalc/marker.py"], (
            "the workspace's code, the environment's python and dependency, the task's variables"
        )
        site = f"{env}/lib/python3.11/site-packages"
        hostile = (
            f"echo 'import os' > {site}/evil.pth; echo FACTOR = 0 > {site}/units.py; "
            f"rm -rf {env}/bin/python; ls {env}/bin/python"
        )
        attack = placed.run(["sh", "-c", hostile], cwd=workspace.path, timeout_s=60)
        assert "Read-only file system" in attack.stderr, attack.stderr
        after = placed.run(["python", "-c", probe], cwd=workspace.path, timeout_s=60)
        assert after.stdout == seen.stdout, "the environment is unchanged"
    finally:
        docker.release(workspace.path)
        remove_workspace(workspace)


def test_a_failed_build_names_the_step_and_is_not_cached(
    tmp_path: Path, builder: EnvImageBuilder, dropped: list[str]
) -> None:
    task = env_task(tmp_path / "bench", install=("echo the-install-went-wrong && false",))
    tag = builder.tag(task)
    dropped.append(tag)
    for _ in range(2):  # not cached: the second attempt builds (and fails) again
        with pytest.raises(EnvironmentBuildError) as err:
            builder.ensure(task)
        assert "`echo the-install-went-wrong && false` failed" in str(err.value)
        assert "the-install-went-wrong" in (err.value.got or "")
        assert not builder.engine.image_exists(tag)


def test_a_host_index_the_container_cannot_see_is_named_and_a_container_index_is_used(
    tmp_path: Path,
    builder: EnvImageBuilder,
    dropped: list[str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The host's pip is set to an index on its loopback: the notice comes before the build and
    the failed build's fix repeats it; with LOOPWRIGHT_CONTAINER_INDEX_URL the build's pip
    looks there (an address that answers nothing in the container: the build fails, saying
    where it looked)."""
    from loopwright.sandbox._hostindex import INDEX_URL_ENV

    hidden = "http://127.0.0.1:9/hostonly/simple/"
    monkeypatch.setenv("PIP_INDEX_URL", hidden)
    monkeypatch.delenv(INDEX_URL_ENV, raising=False)
    task = env_task(tmp_path / "bench", install=("pip install lwnosuchdist-zz0",))
    dropped.append(builder.tag(task))
    with pytest.raises(EnvironmentBuildError) as failed:
        builder.ensure(task)
    notice = f"cannot see the host's package index {hidden} (set by PIP_INDEX_URL"
    assert notice in (failed.value.fix or "") and INDEX_URL_ENV in (failed.value.fix or "")
    assert f"notice: task {task.id}'s environment" in capsys.readouterr().err
    given = "http://127.0.0.1:9/given/simple/"
    monkeypatch.setenv(INDEX_URL_ENV, given)
    with pytest.raises(EnvironmentBuildError) as looked:
        builder.ensure(task)
    assert given in (looked.value.got or "") and "cannot see" not in (looked.value.fix or "")


def test_an_environment_built_on_this_machine_is_refused_in_a_container(
    tmp_path: Path, docker: DockerSandbox
) -> None:
    """A venv built for this machine's interpreter cannot run in a container: refused at once,
    naming the fix, instead of every grade failing on a missing interpreter."""
    task = make_env_task(tmp_path / "bench", install=())
    prepared = EnvironmentCache(tmp_path / "cache", builder="pip").ensure(task)
    with pytest.raises(ConfigError, match="cannot run in the container sandbox") as err:
        docker.within(prepared.environment, tmp_path)
    assert "into an image" in str(err.value)


def test_a_shipped_sandbox_builds_with_the_engine_and_locks_of_the_machine_it_runs_on(
    tmp_path: Path, docker: DockerSandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As on a Ray worker: the sender's engine path and cache directory need not exist where
    the sandbox is unpickled; the engine is found again and the build locks go to the worker's
    own cache."""
    sent = pickle.loads(pickle.dumps(docker))
    sent.engine = Engine("/nonexistent/head-only/podman", docker.engine.global_flags)
    monkeypatch.setenv("LOOPWRIGHT_ENV_CACHE", str(tmp_path / "worker"))
    worker = pickle.loads(pickle.dumps(sent))
    assert Path(worker.engine.cli).is_file() and worker.engine.kind == docker.engine.kind
    head = tmp_path / "head-file"
    head.write_text("the head's cache path: nothing can be made under it here")
    builder = EnvImageBuilder.for_sandbox(worker, EnvironmentCache(head / "envs").root / "images")
    assert builder.locks == (tmp_path / "worker" / "images").resolve()


def test_a_run_in_the_container_sandbox_runs_agents_and_grader_in_the_environment_image(
    tmp_path: Path, docker: DockerSandbox, dropped: list[str]
) -> None:
    """run_task: the agent's command sees the image's environment (its python, VIRTUAL_ENV, the
    task's variable, the dependency) at /testbed and cannot write it; the gold it writes into
    the workspace is what the grader imports through the editable install."""
    task = env_task(tmp_path / "bench")
    cache = EnvironmentCache(tmp_path / "cache")
    dropped.append(EnvImageBuilder.for_sandbox(docker, cache.root / "images").tag(task))
    assert task.solution_dir is not None
    gold = (task.solution_dir / "src/envcalc/core.py").read_text()
    steps = [
        ToolCall.make("p", "run_command", command=PROBE),
        ToolCall.make("w", "write_file", path="src/envcalc/core.py", content=gold),
    ]
    grade = _run(task, cache, docker, steps, tmp_path / "run")
    assert (grade.score, grade.resolved) == (1.0, True), grade.invalid_reason
    patch = (tmp_path / "run" / "diff.patch").read_text()
    probe = [
        line[1:]
        for line in patch.split("+++ b/probe.txt", 1)[1].splitlines()
        if line.startswith("+") and not line.startswith("+++")
    ]
    assert probe[:5] == [str(ENV_PREFIX_INSIDE), "/testbed", "test", "10", "read-only"], probe
    assert not any(p.is_dir() and p.name != "images" for p in cache.root.iterdir())
