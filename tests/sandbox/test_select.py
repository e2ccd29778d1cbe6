"""Choosing a sandbox by name, and the one loud warning when commands run unsandboxed."""

from __future__ import annotations

from pathlib import Path

import pytest

import loopwright.sandbox as sandbox_pkg
from loopwright.errors import ConfigError, MissingDependencyError
from loopwright.sandbox import (
    BubblewrapSandbox,
    DockerSandbox,
    LocalSandbox,
    _bwrap,
    _select,
    bubblewrap_available,
    default_sandbox,
    sandbox_kinds,
)
from tests.containers import engine_problem, settings
from tests.sandbox.conftest import needs_bwrap


@pytest.fixture
def no_bwrap(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pretend bubblewrap does not work here, with the warning not yet given."""
    monkeypatch.setattr(_bwrap, "bubblewrap_available", lambda: False)
    monkeypatch.setattr(_bwrap, "bubblewrap_problem", lambda: "bwrap is not on PATH")
    monkeypatch.setattr(_select, "_warned", False)


def test_the_public_names_are_pinned() -> None:
    assert sorted(sandbox_pkg.__all__) == [
        "BINARY_SIZES",
        "BubblewrapSandbox",
        "BuiltImage",
        "CHANNEL_ENV",
        "CHANNEL_OVERFLOW",
        "CommandResult",
        "ContainerSettings",
        "DEFAULT_OUTPUT_CAP",
        "DiffEvidence",
        "DockerSandbox",
        "ENV_CACHE_VARIABLE",
        "ENV_IMAGE_REPOSITORY",
        "ENV_MANIFEST",
        "ENV_PREFIX_INSIDE",
        "Engine",
        "EnvImageBuilder",
        "EnvManifest",
        "EnvironmentBuildError",
        "EnvironmentCache",
        "EnvironmentSandbox",
        "IMAGE_REPOSITORY",
        "ImageBuilder",
        "LocalSandbox",
        "NO_DIFF",
        "Prepared",
        "RunRequest",
        "Sandbox",
        "TaskContainers",
        "TaskEnvironment",
        "WORKDIR",
        "Workspace",
        "attach_task_container",
        "bubblewrap_available",
        "bubblewrap_problem",
        "create_workspace",
        "default_env_cache",
        "default_sandbox",
        "environment_key",
        "find_uv",
        "image_key",
        "needs_environment",
        "needs_image_build",
        "prepare_env_images",
        "prepare_environments",
        "prepare_images",
        "process_descendants",
        "remove_workspace",
        "sandbox_kinds",
        "task_environment",
    ]


def test_an_unknown_kind_is_a_config_error_listing_the_known_ones() -> None:
    with pytest.raises(ConfigError) as err:
        default_sandbox("nope")
    message = str(err.value)
    assert "'nope'" in message
    assert all(kind in message for kind in ("auto", "bubblewrap", "local", "docker"))
    assert sandbox_kinds()[0] == "auto"


@needs_bwrap
def test_auto_picks_bubblewrap_where_it_works(capsys: pytest.CaptureFixture[str]) -> None:
    chosen = default_sandbox("auto")
    assert isinstance(chosen, BubblewrapSandbox) and chosen.isolated
    assert capsys.readouterr().err == ""


def test_local_is_local_without_a_warning(capsys: pytest.CaptureFixture[str]) -> None:
    chosen = default_sandbox("local")
    assert isinstance(chosen, LocalSandbox) and not chosen.isolated
    assert capsys.readouterr().err == ""


@pytest.mark.docker
def test_docker_without_a_default_image_refuses_a_workspace_with_none(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Tasks that bring their own image need no default; a workspace with none is refused
    when its container would start, saying how to name one."""
    problem = engine_problem()
    if problem is not None:
        pytest.skip(problem)
    monkeypatch.delenv("LOOPWRIGHT_CONTAINER_IMAGE", raising=False)
    sandbox = DockerSandbox(settings(""))  # what default_sandbox("docker") now builds
    with pytest.raises(ConfigError, match="needs an image") as err:
        sandbox.run(["true"], cwd=tmp_path, timeout_s=30)
    assert "LOOPWRIGHT_CONTAINER_IMAGE" in str(err.value)


def test_docker_without_a_working_engine_is_a_missing_dependency(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("LOOPWRIGHT_CONTAINER_IMAGE", "some-image")
    monkeypatch.setenv("LOOPWRIGHT_CONTAINER_CLI", "no-such-container-cli")
    with pytest.raises(MissingDependencyError, match="no container engine works here") as err:
        default_sandbox("docker")
    assert "no-such-container-cli: not on PATH" in str(err.value)


@pytest.mark.usefixtures("no_bwrap")
def test_auto_falls_back_to_local_with_one_warning_per_process(
    capsys: pytest.CaptureFixture[str],
) -> None:
    first, second = default_sandbox("auto"), default_sandbox()
    assert isinstance(first, LocalSandbox) and isinstance(second, LocalSandbox)
    err = capsys.readouterr().err
    assert err.count("UNSANDBOXED") == 1
    assert "apt-get install bubblewrap" in err
    assert "network and files outside the workspace are reachable" in err


@pytest.mark.usefixtures("no_bwrap")
def test_asking_for_bubblewrap_where_it_does_not_work_says_how_to_install_it() -> None:
    with pytest.raises(MissingDependencyError, match="apt-get install bubblewrap"):
        default_sandbox("bubblewrap")


def test_the_availability_probe_runs_once() -> None:
    _bwrap.bubblewrap_problem.cache_clear()
    first = bubblewrap_available()
    assert bubblewrap_available() == first
    assert _bwrap.bubblewrap_problem.cache_info().hits >= 1
