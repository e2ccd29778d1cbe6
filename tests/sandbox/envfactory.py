"""Build, offline, a task with an `[environment]`: an `envcalc` package (src layout, installed
editable) that depends on another distribution, `units`, which the test builds as a wheel and the
environment installs with `--no-index --find-links`."""

from __future__ import annotations

import base64
import hashlib
import json
import textwrap
import zipfile
from pathlib import Path

from loopwright.tasks import Task, load_task


def build_wheel(directory: Path, name: str, version: str, modules: dict[str, str]) -> Path:
    """A pure-Python wheel of `modules` (file name -> source), written into `directory`."""
    directory.mkdir(parents=True, exist_ok=True)
    wheel = directory / f"{name}-{version}-py3-none-any.whl"
    info = f"{name}-{version}.dist-info"
    files = dict(modules)
    files[f"{info}/METADATA"] = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    files[f"{info}/WHEEL"] = (
        "Wheel-Version: 1.0\nGenerator: loopwright-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    )
    record = []
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=")
        record.append(f"{path},sha256={digest.decode()},{len(text.encode())}")
    record.append(f"{info}/RECORD,,")
    files[f"{info}/RECORD"] = "\n".join(record) + "\n"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, text in files.items():  # a fixed date: the same wheel, the same bytes
            archive.writestr(zipfile.ZipInfo(path, date_time=(2020, 1, 1, 0, 0, 0)), text)
    return wheel


PYPROJECT = """
    [build-system]
    requires = ["setuptools>=64"]
    build-backend = "setuptools.build_meta"

    [project]
    name = "envcalc"
    version = "0.1"
    dependencies = ["units"]

    [tool.setuptools.packages.find]
    where = ["src"]
"""

REPO = {
    "pyproject.toml": PYPROJECT,
    "setup.py": "from setuptools import setup\n\nsetup()\n",
    "src/envcalc/__init__.py": "",
    "src/envcalc/core.py": """
        import units


        def double(x):
            return 2 * x
    """,
    "tests/test_double.py": """
        from envcalc.core import double


        def test_double():
            assert double(4) == 8
    """,
}

HIDDEN = {
    "test_scaled_hidden.py": """
        import units

        from envcalc.core import scaled


        def test_scaled_uses_the_dependency():
            assert scaled(3) == units.FACTOR * 3


        def test_scaled_zero():
            assert scaled(0) == 0
    """,
}

GOLD = {
    "src/envcalc/core.py": REPO["src/envcalc/core.py"]
    + """

        def scaled(x):
            return units.FACTOR * x
    """
}
FLAWED = {
    "src/envcalc/core.py": REPO["src/envcalc/core.py"]
    + """

        def scaled(x):
            return units.FACTOR + x
    """
}

F2P = [
    "tests/test_scaled_hidden.py::test_scaled_uses_the_dependency",
    "tests/test_scaled_hidden.py::test_scaled_zero",
]

# Offline, with only the setuptools a Python 3.11 venv comes with (pip's editable install would
# need `wheel` from an index): the legacy editable install, which puts the checkout's src/ on
# sys.path through a .pth file. A real task writes `pip install -e .`.
INSTALL = "python setup.py -q develop --no-deps"
# What an editable install amounts to, written by hand: works offline with either builder.
PTH_INSTALL = (
    'python -c "import os, sysconfig; '
    "open(os.path.join(sysconfig.get_path('purelib'), 'envcalc.pth'), 'w')"
    ".write(os.getcwd() + '/src' + chr(10))\""
)


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")


def make_env_task(
    parent: Path, task_id: str = "envcalc", *, install: tuple[str, ...] = (INSTALL,)
) -> Task:
    """The task directory `parent/task_id`: gold scores 1.0 only with the dependency installed
    and the workspace's own code imported through the editable install."""
    root = parent / task_id
    build_wheel(root / "environment" / "wheels", "units", "1.0", {"units.py": "FACTOR = 10\n"})
    write(
        root / "environment", {"requirements.txt": "--no-index\n--find-links wheels\nunits==1.0\n"}
    )
    write(root / "repo", REPO)
    write(root / "tests", HIDDEN)
    write(root / "solution", GOLD)
    write(root / "flawed" / "adds", FLAWED)
    installs = ", ".join(json.dumps(c) for c in install)  # a JSON string is a TOML string
    toml = f"""
        id = "{task_id}"
        level = 1
        fail_to_pass = {F2P!r}
        pass_to_pass = ["tests/test_double.py::test_double"]

        [[flawed]]
        name = "adds"
        kind = "wrong_logic"
        description = "Adds the factor instead of multiplying."

        [environment]
        requirements_files = ["environment/requirements.txt"]
        install = [{installs}]
        env = {{ ENVCALC_MODE = "test" }}
    """
    write(root, {"task.toml": toml, "instruction.md": "Add `scaled(x)` to envcalc.core.\n"})
    return load_task(root)
