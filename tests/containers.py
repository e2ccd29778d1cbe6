"""The container engine and image the container-sandbox tests use, built here, offline.

The image is a root filesystem made from this machine's own files: the system Python
(/usr/bin/python3, Debian's layout) with its standard library (`venv` and `ensurepip` included, with
the pip and setuptools wheels Debian's ensurepip installs from, so a task environment can be built
in a derived image offline), pytest and pytest-timeout copied from the running
environment, a shell and a few coreutils, and the shared libraries all of them load. It is
imported (`podman import`), not pulled, its Python packages are compiled to bytecode by its own
Python (its root filesystem is read-only in the sandbox), and it is tagged by the digest of what
went into it, so it is built once per machine (about 15 s) and reused by every test, the bench
and `.ci/run` (`python -m tests.containers` prints its tag).

The engine's flags come from LOOPWRIGHT_CONTAINER_GLOBAL_FLAGS / _RUN_FLAGS when set; for podman
without them, the ones this kind of machine needs (runc with cgroupfs, explicit ulimits).
"""

from __future__ import annotations

import functools
import hashlib
import io
import os
import re
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from loopwright.errors import LoopwrightError
from loopwright.sandbox import ContainerSettings, DockerSandbox, Engine

if TYPE_CHECKING:
    import pytest

PODMAN_GLOBAL_FLAGS = ("--runtime", "runc", "--cgroup-manager", "cgroupfs")
PODMAN_RUN_FLAGS = ("--ulimit", "nofile=1024:1024", "--ulimit", "nproc=1024:1024")
PYTHON = Path("/usr/bin/python3").resolve()  # /usr/bin/python3.X
STDLIB = Path("/usr/lib") / PYTHON.name
BINARIES = (
    "dash", "sleep", "cat", "ls", "env", "true", "false", "mkdir", "rm", "cp", "mv", "touch",
    "id", "setsid", "grep", "head", "tail", "wc", "chmod", "find", "kill",
)  # fmt: skip
PACKAGES = (
    "pytest", "_pytest", "pluggy", "iniconfig", "packaging", "pygments", "py.py", "pytest_timeout.py",
)  # fmt: skip
_SKIP_DIRS = {"test", "tests", "idlelib", "tkinter", "turtledemo", "lib2to3"}
WHEELS = Path("/usr/share/python-wheels")  # Debian's ensurepip installs pip from here


def settings(image: str = "") -> ContainerSettings:
    """The container settings of the tests: the environment's, podman's flags by default."""
    base = ContainerSettings.from_env()
    update: dict[str, object] = {"image": image or base.image}
    podman = "podman" in base.cli or (base.cli == "auto" and _docker_down())
    if podman and "LOOPWRIGHT_CONTAINER_GLOBAL_FLAGS" not in os.environ:
        update["global_flags"] = PODMAN_GLOBAL_FLAGS
    if podman and "LOOPWRIGHT_CONTAINER_RUN_FLAGS" not in os.environ:
        update["run_flags"] = PODMAN_RUN_FLAGS
    return base.model_copy(update=update)


@functools.cache
def _docker_down() -> bool:
    try:
        Engine.detect(ContainerSettings(cli="docker"))
    except LoopwrightError:
        return True
    return False


@functools.cache
def engine_problem() -> str | None:
    """Why the container tests cannot run here (no engine, or no system Python to build the
    image from), or None."""
    if not (PYTHON.is_file() and PYTHON.name.startswith("python3.") and STDLIB.is_dir()):
        return f"the test image needs a system Python at /usr/bin/python3 with {STDLIB}"
    try:
        Engine.detect(settings())
    except LoopwrightError as exc:
        return f"no container engine works here ({exc}); install podman and runc"
    return None


@functools.cache
def image_tag() -> str:
    """The tag of the test image, built now unless the engine already has it."""
    engine = Engine.detect(settings())
    files = _rootfs_files()
    digest = hashlib.sha256(Path(__file__).read_bytes())
    for arcname, source in sorted(files.items()):
        digest.update(f"{arcname}\0{source}\0{_stamp(source)}\n".encode())
    tag = f"localhost/loopwright-test:{digest.hexdigest()[:12]}"
    if not engine.image_exists(tag):
        _import(engine, tag, files)
    return tag


def _stamp(source: Path | str) -> str:
    if isinstance(source, str):
        return source  # a symlink's target
    info = source.stat()
    return f"{info.st_size}:{int(info.st_mtime)}"


def _rootfs_files() -> dict[str, Path | str]:
    """arcname -> the host file to copy, or (a str) the target of a symlink to create."""
    files: dict[str, Path | str] = {"bin": "usr/bin", "lib": "usr/lib", "lib64": "usr/lib64"}
    files["usr/bin/python3"] = PYTHON.name
    files["usr/bin/python"] = PYTHON.name
    files["usr/bin/sh"] = "dash"
    binaries = [PYTHON] + [p for name in BINARIES if (p := Path("/usr/bin") / name).is_file()]
    for binary in binaries:
        files[f"usr/bin/{binary.name}"] = binary
    for path in _tree(STDLIB):
        files[path.relative_to("/").as_posix()] = path
    for wheel in sorted(WHEELS.glob("*.whl")) if WHEELS.is_dir() else []:
        files[wheel.relative_to("/").as_posix()] = wheel
    site = Path(next(p for p in sys.path if p.endswith("site-packages")))
    for name in PACKAGES:
        for path in _tree(site / name) if (site / name).is_dir() else [site / name]:
            files[f"usr/lib/python3/dist-packages/{path.relative_to(site).as_posix()}"] = path
    extensions = [p for p in files.values() if isinstance(p, Path) and p.suffix == ".so"]
    for lib in _libraries([*binaries, *extensions]):
        files[_usr(lib)] = lib
    return files


def _tree(root: Path) -> list[Path]:
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in _SKIP_DIRS and d != "__pycache__"]
        found += [Path(dirpath) / name for name in filenames if not name.endswith(".pyc")]
    return found


def _libraries(binaries: list[Path]) -> set[Path]:
    """The shared libraries (and the loader) these binaries load, by the paths ldd names."""
    out = subprocess.run(
        ["ldd", *map(str, binaries)], capture_output=True, text=True, check=False
    ).stdout
    return {Path(m) for m in re.findall(r"(/\S+\.so[.\d]*)\s", out)}


def _usr(path: Path) -> str:
    """Where a library goes in the image's merged /usr (`/lib/x` -> `usr/lib/x`)."""
    rel = path.relative_to("/").as_posix()
    return rel if rel.startswith("usr/") else "usr/" + rel


def _import(engine: Engine, tag: str, files: dict[str, Path | str]) -> None:
    with tempfile.TemporaryDirectory(prefix="lw-image-") as scratch:
        archive = Path(scratch) / "rootfs.tar"
        with tarfile.open(archive, "w") as tar:
            for name in ("tmp", "testbed", "etc", "root"):
                tar.addfile(_dir_info(name))
            for arcname, source in sorted(files.items()):
                if isinstance(source, str):
                    info = tarfile.TarInfo(arcname)
                    info.type, info.linkname = tarfile.SYMTYPE, source
                    tar.addfile(info)
                else:
                    tar.add(str(source.resolve()), arcname=arcname, recursive=False)
            for name, text in _etc().items():
                data = text.encode()
                info = tarfile.TarInfo(name)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
        raw = f"{tag}-uncompiled"
        engine.call(
            "import", "--change", "ENV PATH=/usr/local/bin:/usr/bin:/bin", str(archive), raw,
            timeout_s=600,
        )  # fmt: skip
    _compile(engine, raw, tag)


def _compile(engine: Engine, raw: str, tag: str) -> None:
    """`tag`: `raw` with the bytecode of its Python packages, compiled by its own Python (the
    container sandbox's root filesystem is read-only: without it, every grade would compile
    pytest and the standard library afresh)."""
    name = f"lw-image-build-{os.getpid()}"
    try:
        engine.call(
            "run", "--name", name, "--network", "none", *settings().run_flags, raw,
            "python3", "-m", "compileall", "-q", "-j", "0",
            str(STDLIB), "/usr/lib/python3/dist-packages",
            timeout_s=900,
        )  # fmt: skip
        engine.call("commit", name, tag, timeout_s=600)
    finally:
        engine.remove(name)
        engine.call("rmi", raw)


def _dir_info(name: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.mode = tarfile.DIRTYPE, 0o1777 if name == "tmp" else 0o755
    return info


def _etc() -> dict[str, str]:
    return {
        "etc/passwd": "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534::/:/bin/sh\n",
        "etc/group": "root:x:0:\nnogroup:x:65534:\n",
    }


_SHARED: dict[str, object] = {}


def docker_sandbox_or_skip() -> DockerSandbox:
    """One DockerSandbox on the test image for the whole test session; the test is skipped,
    saying why, where no container engine works (in CI one does: `.ci/run` installs podman)."""
    import pytest

    problem = engine_problem()
    if problem is not None:
        pytest.skip(f"container sandbox tests need a container engine: {problem}")
    sandbox = _SHARED.get("sandbox")
    if not isinstance(sandbox, DockerSandbox):
        sandbox = DockerSandbox(settings(image_tag()))
        _SHARED["sandbox"] = sandbox
    return sandbox


def set_cli_container_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Export the test image's container settings the way the CLI reads them (the
    LOOPWRIGHT_CONTAINER_* variables), for tests that run `loopwright ... --sandbox docker` or
    import with the engine. The CLI named is the engine the sandbox tests detected, never
    "auto": the importer's own lookup takes the first CLI on PATH, and a docker CLI whose daemon
    is down would be given podman's flags and fail where these tests' engine works."""
    chosen = settings(image_tag())
    monkeypatch.setenv("LOOPWRIGHT_CONTAINER_IMAGE", chosen.image)
    monkeypatch.setenv("LOOPWRIGHT_CONTAINER_GLOBAL_FLAGS", " ".join(chosen.global_flags))
    monkeypatch.setenv("LOOPWRIGHT_CONTAINER_RUN_FLAGS", " ".join(chosen.run_flags))
    monkeypatch.setenv("LOOPWRIGHT_CONTAINER_CLI", Engine.detect(chosen).cli)


if __name__ == "__main__":
    problem = engine_problem()
    if problem is not None:
        sys.exit(f"cannot build the test image: {problem}")
    print(image_tag())
