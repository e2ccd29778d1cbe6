"""A task environment that pins its own pytest keeps it: loopwright adds only pytest-timeout.

Before, an environment with pytest but without pytest-timeout got loopwright's whole runner
copied over it (two pytest versions' metadata, the task's pin lost). The pinned pytest here is
8.3.5 from the wheels .ci/run downloads (LOOPWRIGHT_TEST_OLD_WHEELS; loopwright's own is newer)."""

from __future__ import annotations

import importlib.metadata
import os
import shutil
from pathlib import Path

import pytest

from loopwright.sandbox import ENV_PREFIX_INSIDE, EnvImageBuilder, EnvironmentCache
from loopwright.tasks import Task, load_task
from tests.containers import docker_sandbox_or_skip, settings
from tests.taskfactory import make_calc_task

WHEELS = Path(os.environ.get("LOOPWRIGHT_TEST_OLD_WHEELS", "/nonexistent"))
PINNED = "8.3.5"


needs_wheels = pytest.mark.skipif(
    not WHEELS.is_dir() or importlib.metadata.version("pytest") == PINNED,
    reason="needs the pytest wheels .ci/run downloads into LOOPWRIGHT_TEST_OLD_WHEELS",
)


def pinned_task(parent: Path) -> Task:
    """The calc task whose environment installs pytest PINNED (offline) and no pytest-timeout."""
    task = make_calc_task(parent)
    shutil.copytree(WHEELS, task.root / "environment" / "wheels")
    (task.root / "environment" / "requirements.txt").write_text(
        f"--no-index\n--find-links wheels\npytest=={PINNED}\n", encoding="utf-8"
    )
    toml = task.root / "task.toml"
    toml.write_text(
        toml.read_text(encoding="utf-8")
        + '\n[environment]\nrequirements_files = ["environment/requirements.txt"]\n',
        encoding="utf-8",
    )
    return load_task(task.root)


@needs_wheels
def test_a_pinned_pytest_is_kept_and_only_pytest_timeout_is_added(tmp_path: Path) -> None:
    cache = EnvironmentCache(tmp_path / "cache", builder="pip")
    prepared = cache.ensure(pinned_task(tmp_path / "bench"))
    site = next(Path(prepared.environment.prefix).glob("lib/*/site-packages"))
    pytests = sorted(p.name for p in site.glob("pytest-*.dist-info"))
    assert pytests == [f"pytest-{PINNED}.dist-info"]
    assert (site / "pytest_timeout.py").is_file()
    assert prepared.manifest.runner_supplied


@needs_wheels
@pytest.mark.docker
def test_a_pinned_pytest_is_kept_in_a_container_environment_image(tmp_path: Path) -> None:
    docker = docker_sandbox_or_skip()
    builder = EnvImageBuilder.for_sandbox(docker, tmp_path / "locks")
    task = pinned_task(tmp_path / "bench")
    tag = builder.ensure(task).tag
    try:
        listing = docker.engine.call(
            "run", "--rm", *settings().run_flags, "--entrypoint", "sh", tag, "-c",
            f"ls {ENV_PREFIX_INSIDE}/lib/*/site-packages",
        )  # fmt: skip
    finally:
        docker.engine.call("rmi", "-f", tag)
    pytests = sorted(n for n in listing.split() if n.startswith("pytest-"))
    assert pytests == [f"pytest-{PINNED}.dist-info"]
    assert "pytest_timeout.py" in listing.split()
