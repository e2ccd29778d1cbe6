from __future__ import annotations

import secrets
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from loopwright.sandbox import (
    BubblewrapSandbox,
    DockerSandbox,
    LocalSandbox,
    Sandbox,
    bubblewrap_available,
)
from tests.containers import docker_sandbox_or_skip

NO_BWRAP = "bubblewrap does not work here (bubblewrap_available() is False)"
needs_bwrap = pytest.mark.skipif(not bubblewrap_available(), reason=NO_BWRAP)

KINDS = [
    pytest.param("local", id="local"),
    pytest.param("bubblewrap", id="bubblewrap", marks=needs_bwrap),
    # skipped, saying why, where no container engine works
    pytest.param("docker", id="docker", marks=pytest.mark.docker),
]


def make_sandbox(kind: str) -> Sandbox:
    if kind == "docker":
        return docker_sandbox_or_skip()
    return BubblewrapSandbox() if kind == "bubblewrap" else LocalSandbox()


@pytest.fixture(params=KINDS)
def sandbox(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    """Each shared-behaviour test runs once per sandbox (the containers a test started are
    removed after it)."""
    chosen = make_sandbox(request.param)
    yield chosen
    chosen.close()


@pytest.fixture
def bwrap() -> Sandbox:
    if not bubblewrap_available():
        pytest.skip(NO_BWRAP)
    return BubblewrapSandbox()


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """A directory to run commands in (stands in for a workspace)."""
    path = tmp_path / "work"
    path.mkdir()
    return path


def py(code: str) -> list[str]:
    """argv running `code` with this test run's Python (which must work inside every sandbox)."""
    return [sys.executable, "-c", code]


def sleep_marker() -> str:
    """A `sleep` duration unique to one test, so its processes can be found in /proc."""
    return f"1000.{secrets.randbelow(10**9):09d}"


def processes_with(marker: str) -> list[int]:
    """PIDs of live processes whose argv contains `marker` as an argument."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            args = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if marker.encode() in args:
            found.append(int(entry.name))
    return found


def wait_until(check: Callable[[], bool], timeout_s: float = 5.0) -> bool:
    """Poll `check` until it holds or `timeout_s` passes; return its last value."""
    end = time.monotonic() + timeout_s
    while not check() and time.monotonic() < end:
        time.sleep(0.02)
    return check()


@pytest.fixture
def docker() -> DockerSandbox:
    """The container sandbox on the test image (skipped, saying why, where no engine works); a
    test module may narrow it by defining its own `docker`."""
    return docker_sandbox_or_skip()


@pytest.fixture
def ws(tmp_path: Path, docker: DockerSandbox) -> Iterator[Path]:
    """A workspace directory; its container is removed when the test ends."""
    path = tmp_path / "ws"
    path.mkdir()
    yield path
    docker.release(path)
