"""`[environment] packages_before`: an environment built for an old commit gets the package
versions of its era. A loopback package index (the JSON simple API with upload times, as PyPI
serves it) offers `eradep` 1.0 (uploaded 2019) and 2.0 (uploaded 2024); the same table builds
1.0 with `packages_before` in 2021 and 2.0 without it. Offline: the index is this test's."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from loopwright.sandbox import EnvironmentCache, find_uv
from loopwright.tasks import Task, load_task
from tests.containers import docker_sandbox_or_skip, settings

from .envfactory import build_wheel, write

UPLOADS = {"1.0": "2019-06-01T00:00:00.000000Z", "2.0": "2024-06-01T00:00:00.000000Z"}
JSON_TYPE = "application/vnd.pypi.simple.v1+json"


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The URL of a loopback simple index serving eradep 1.0 and 2.0 with upload times."""
    wheels = {
        version: build_wheel(
            tmp_path_factory.mktemp("wheels"), "eradep", version,
            {"eradep.py": f"VERSION = {version!r}\n"},
        ).read_bytes()
        for version in UPLOADS
    }  # fmt: skip

    class Index(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            port = self.server.server_address[1]
            if self.path.rstrip("/") == "/simple/eradep":
                files = [
                    {
                        "filename": f"eradep-{v}-py3-none-any.whl",
                        "url": f"http://127.0.0.1:{port}/files/eradep-{v}-py3-none-any.whl",
                        "hashes": {"sha256": hashlib.sha256(wheels[v]).hexdigest()},
                        "upload-time": UPLOADS[v],
                    }
                    for v in UPLOADS
                ]
                meta = {"api-version": "1.1"}
                body = json.dumps({"meta": meta, "name": "eradep", "files": files}).encode()
                self._send(body, JSON_TYPE)
            elif self.path.startswith("/files/eradep-"):
                version = self.path.split("-")[1]
                self._send(wheels[version], "application/octet-stream")
            else:
                self.send_error(404)

        def _send(self, body: bytes, kind: str) -> None:
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Index)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/simple/"
    finally:
        server.shutdown()
        server.server_close()


def era_task(parent: Path, index: str, before: str | None, requirements: str = '"eradep"') -> Task:
    """A task whose hidden test passes only with eradep 1.0 (the era of its commit)."""
    root = parent / "era"
    pin = f'packages_before = "{before}"\n' if before else ""
    write(root, {
        "task.toml": f"""
            id = "era"
            level = 1
            fail_to_pass = ["tests/test_era.py::test_era"]

            [environment]
            requirements = [{requirements}]
            env = {{ PIP_INDEX_URL = "{index}", UV_INDEX_URL = "{index}" }}
            {pin}
        """,
        "instruction.md": "Nothing to do.\n",
        "repo/README.md": "era\n",
        "tests/test_era.py": "import eradep\n\n\ndef test_era():\n    assert eradep.VERSION == '1.0'\n",
        "solution/README.md": "era\n",
    })  # fmt: skip
    return load_task(root)


def installed(cache: EnvironmentCache, task: Task) -> list[str]:
    prefix = cache.ensure(task).environment.prefix
    return sorted(p.name for p in prefix.glob("lib/*/site-packages/eradep-*.dist-info"))


BUILDERS = [
    "pip",
    pytest.param(
        "uv", marks=pytest.mark.skipif(find_uv() is None, reason="uv is not installed here")
    ),
]


@pytest.mark.parametrize("builder", BUILDERS)
def test_packages_before_installs_the_versions_of_the_commits_era(
    index: str, tmp_path: Path, builder: str
) -> None:
    cache = EnvironmentCache(tmp_path / "cache", builder=builder)  # type: ignore[arg-type]
    pinned = era_task(tmp_path / "pinned", index, "2021-01-01T00:00:00Z")
    assert installed(cache, pinned) == ["eradep-1.0.dist-info"]
    latest = era_task(tmp_path / "latest", index, None)
    assert installed(cache, latest) == ["eradep-2.0.dist-info"]


def test_a_table_without_packages_before_keeps_its_key(tmp_path: Path) -> None:
    """Tables written before packages_before existed keep their environment keys (and so the
    environments already built for them)."""
    from loopwright.sandbox._envcache import environment_inputs

    task = era_task(tmp_path, "http://127.0.0.1:1/simple/", None)
    assert "packages_before" not in json.dumps(environment_inputs(task)["table"])


@pytest.mark.docker
def test_the_container_sandbox_image_gets_a_pip_that_knows_the_date(tmp_path: Path) -> None:
    """The image build exports the same PIP_UPLOADED_PRIOR_TO; the test image's venv pip
    (Debian's ensurepip, 23.0) lacks the option, so loopwright's own pip replaces it, leaving
    one pip. (The image build has no route to this test's loopback index: the effect of the
    date on what is installed is shown above, with the same pip and variable.)"""
    from loopwright.sandbox._envimages import ENV_PREFIX_INSIDE, EnvImageBuilder

    sandbox = docker_sandbox_or_skip()
    builder = EnvImageBuilder.for_sandbox(sandbox, tmp_path / "locks")
    task = era_task(tmp_path, "http://127.0.0.1:1/simple/", "2021-01-01T00:00:00Z", "")
    built = builder.ensure(task)
    try:
        site = f"{ENV_PREFIX_INSIDE}/lib/python3*/site-packages"
        shown = sandbox.engine.call(
            "run", "--rm", "--network", "none", *settings().run_flags, built.tag, "sh", "-c",
            f"ls -d {site}/pip-*.dist-info; {ENV_PREFIX_INSIDE}/bin/python -m pip install --help",
            timeout_s=120,
        )  # fmt: skip
        assert shown.count(".dist-info") == 1 and "--uploaded-prior-to" in shown, shown
    finally:
        sandbox.engine.call("rmi", "-f", built.tag)
