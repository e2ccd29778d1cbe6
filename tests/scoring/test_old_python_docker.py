"""The grading kit on an old Python in the container sandbox: a SWE-bench-shaped task graded by
PyPy 3.9 (no `sys.stdlib_module_names`) inside a container.

The image is built here, offline: FROM the test image (tests/containers.py), with this machine's
PyPy 3.9 (Debian's `pypy3`, its standard library and the shared libraries it loads) and a pytest
that runs on 3.9, unpacked from the wheels .ci/run downloads (LOOPWRIGHT_TEST_OLD_WHEELS).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from loopwright.sandbox import DockerSandbox
from loopwright.scoring import PytestGrader, validate_benchmark
from loopwright.tasks import load_benchmark_dir
from loopwright.tasks.importers import ImportOptions, import_swebench
from tests.containers import docker_sandbox_or_skip, image_tag, settings
from tests.tasks.importfixtures import make_fixture, write_jsonl

PYPY = Path("/usr/bin/pypy3.9")
STDLIB = Path("/usr/lib/pypy3.9")
SITE = "usr/local/lib/pypy3.9/dist-packages"  # on PyPy's own sys.path (Debian's layout)
WHEELS = Path(os.environ.get("LOOPWRIGHT_TEST_OLD_WHEELS", "/nonexistent"))

pytestmark = [
    pytest.mark.docker,
    pytest.mark.skipif(
        not PYPY.is_file() or not WHEELS.is_dir(),
        reason="needs pypy3 and the wheels .ci/run downloads into LOOPWRIGHT_TEST_OLD_WHEELS",
    ),
]


def _libraries(binary: Path) -> list[Path]:
    listed = subprocess.run(["ldd", str(binary)], capture_output=True, text=True, check=True)
    return [Path(p) for p in (line.split("=> ")[-1].split(" (")[0].strip()
                              for line in listed.stdout.splitlines()) if p.startswith("/")]  # fmt: skip


def pypy_image(docker: DockerSandbox, work: Path) -> str:
    """The test image with PyPy 3.9 and pytest for it; built once per content."""
    wheels = sorted(WHEELS.glob("*.whl"))
    digest = hashlib.sha256(
        "".join([image_tag(), *(w.name for w in wheels), str(PYPY.stat().st_size)]).encode()
    ).hexdigest()[:12]
    tag = f"localhost/loopwright-test-pypy39:{digest}"
    if docker.engine.image_exists(tag):
        return tag
    root = work / "context" / "root"
    (root / "usr" / "bin").mkdir(parents=True)
    shutil.copy2(PYPY, root / "usr" / "bin" / "pypy3.9")
    shutil.copytree(STDLIB, root / STDLIB.relative_to("/"), symlinks=True)
    for lib in _libraries(PYPY):
        target = root / lib.relative_to("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(lib.resolve(), target)
    for wheel in wheels:  # pure-Python wheels: unpacking is installing
        with zipfile.ZipFile(wheel) as archive:
            archive.extractall(root / SITE)
    (work / "context" / "Dockerfile").write_text(f"FROM {image_tag()}\nCOPY root/ /\n")
    docker.engine.call("build", "--pull=never", "-t", tag, str(work / "context"), timeout_s=900)
    return tag


def test_a_swebench_task_validates_with_pypy_3_9_in_the_container_sandbox(tmp_path: Path) -> None:
    docker = docker_sandbox_or_skip()
    tag = pypy_image(docker, tmp_path)
    fx = make_fixture(tmp_path / "fixture")
    out = tmp_path / "out"
    report = import_swebench(
        write_jsonl(tmp_path / "rows.jsonl", [fx.instance()]), out, ImportOptions(repos=fx.repos)
    )
    assert not report.skipped, report.skipped
    chosen = settings(tag).model_copy(update={"python": "/usr/bin/pypy3.9"})
    sandbox = DockerSandbox(chosen)
    try:
        checks = {
            c.variant: c for c in validate_benchmark(load_benchmark_dir(out), PytestGrader(sandbox))
        }
    finally:
        sandbox.close()
    gold = checks["gold"].grade
    assert gold is not None, {v: c.problem for v, c in checks.items()}
    assert (gold.score, gold.invalid) == (1.0, False), (gold.invalid_reason, gold.output_tail)
    assert all(c.ok for c in checks.values()), {v: c.problem for v, c in checks.items()}
