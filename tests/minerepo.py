"""A git repository with five commits of known mining outcomes, built in a test's tmp_path.

A pure-Python package `calc` (flat layout, no declared dependencies: no environment to build)
with its tests in tests/. After the root commit (never a candidate: nothing to diff against):

| commit | change | verdict |
| --- | --- | --- |
| feature | `mul` and `neg` in calc/core.py (two hunks) + their tests | kept: F2P test_mul, test_neg |
| tests-only | a new test of `add` | dropped: no code change |
| code-only | a docstring in calc/core.py | dropped: no test change |
| already-passing | a comment in core.py + a test of `add` | dropped: passes at base |
| still-failing | a `div` that is wrong + its test | dropped: fails with the change too |
"""

from __future__ import annotations

import os
import subprocess
import textwrap
from pathlib import Path

CORE = """\
def add(a, b):
    return a + b
"""
TESTS = """\
from calc.core import add


def test_add():
    assert add(2, 3) == 5
"""

FEATURE_CORE = """\
def neg(a):
    return -a


def add(a, b):
    return a + b


def mul(a, b):
    return a * b
"""
FEATURE_TESTS = (
    TESTS.replace("from calc.core import add", "from calc import core\nfrom calc.core import add")
    + """

def test_mul():
    assert core.mul(2, 3) == 6


def test_neg():
    assert core.neg(4) == -4
"""
)
EXPECTED_F2P = ["tests/test_core.py::test_mul", "tests/test_core.py::test_neg"]
EXPECTED_P2P = ["tests/test_core.py::test_add"]


def git(repo: Path, *args: str) -> str:
    env = {
        "PATH": os.environ["PATH"], "HOME": str(repo), "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
        "GIT_AUTHOR_DATE": "2024-01-01T00:00:00", "GIT_COMMITTER_DATE": "2024-01-01T00:00:00",
    }  # fmt: skip
    done = subprocess.run(
        ["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def commit(repo: Path, message: str, files: dict[str, str]) -> str:
    """Write `files` (dedented), commit them all with `message`; return the commit id."""
    for rel, text in files.items():
        path = repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def make_mine_repo(repo: Path) -> dict[str, str]:
    """The repository at `repo` (created); commit name -> id."""
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    ids = {"root": commit(repo, "Start calc", {"calc/__init__.py": "", "calc/core.py": CORE,
                                               "tests/test_core.py": TESTS})}  # fmt: skip
    ids["feature"] = commit(
        repo,
        "Add mul and neg to calc\n\nFixes #7: calc cannot multiply or negate.\nNote: neg too.\n\nSigned-off-by: t <t@x>",
        {"calc/core.py": FEATURE_CORE, "tests/test_core.py": FEATURE_TESTS},
    )
    ids["tests-only"] = commit(
        repo, "Test add with zero",
        {"tests/test_zero.py": "from calc.core import add\n\n\ndef test_zero():\n    assert add(0, 0) == 0\n"},
    )  # fmt: skip
    ids["code-only"] = commit(
        repo, "Document mul", {"calc/core.py": FEATURE_CORE.replace("    return a * b", '    """The product."""\n    return a * b')}
    )  # fmt: skip
    core = (repo / "calc/core.py").read_text()
    ids["already-passing"] = commit(
        repo, "Note on add and a test of negatives",
        {"calc/core.py": "# add works for negatives too\n" + core,
         "tests/test_negative.py": "from calc.core import add\n\n\ndef test_negative():\n    assert add(-1, -2) == -3\n"},
    )  # fmt: skip
    core = (repo / "calc/core.py").read_text()
    ids["still-failing"] = commit(
        repo, "Add div",
        {"calc/core.py": core + "\n\ndef div(a, b):\n    return a * b\n",
         "tests/test_div.py": "from calc.core import div\n\n\ndef test_div():\n    assert div(6, 3) == 2\n"},
    )  # fmt: skip
    return ids


# A repository whose code needs a distribution loopwright's Python lacks (`units`, built here as a
# wheel): flat layout and no declared dependencies, so the inferred environment is none and its
# tests cannot import; with `make_env_spec`'s file they run. After the root commit, one commit:
# `scaled` and `offset` in wcalc/core.py (two hunks) and their tests, plus a test that the
# spec's `env` variable reaches the tests (passing before and after: PASS_TO_PASS).
WCALC_CORE = """\
import units


def add(a, b):
    return a + b
"""
WCALC_FEATURE_CORE = """\
import units


def scaled(x):
    return units.FACTOR * x


def add(a, b):
    return a + b


def offset(x):
    return x + units.OFFSET
"""
WCALC_TESTS = """\
from wcalc.core import add


def test_add():
    assert add(2, 3) == 5
"""
WCALC_FEATURE_TESTS = """\
import os

from wcalc import core


def test_add():
    assert core.add(2, 3) == 5


def test_mode_comes_from_the_spec():
    assert os.environ.get("WCALC_MODE") == "mined"


def test_scaled():
    assert core.scaled(3) == 30


def test_offset():
    assert core.offset(1) == 8
"""
WCALC_F2P = ["tests/test_core.py::test_offset", "tests/test_core.py::test_scaled"]
WCALC_P2P = ["tests/test_core.py::test_add", "tests/test_core.py::test_mode_comes_from_the_spec"]
WCALC_SPEC = """\
[environment]
requirements_files = ["environment/requirements.txt"]
env = { WCALC_MODE = "mined" }
"""


def make_wcalc_repo(repo: Path) -> dict[str, str]:
    """The wcalc repository at `repo` (created); commit name ("root", "feature") -> id."""
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    ids = {"root": commit(repo, "Start wcalc", {"wcalc/__init__.py": "", "wcalc/core.py": WCALC_CORE,
                                                "tests/test_core.py": WCALC_TESTS})}  # fmt: skip
    ids["feature"] = commit(
        repo,
        "Add scaled and offset",
        {"wcalc/core.py": WCALC_FEATURE_CORE, "tests/test_core.py": WCALC_FEATURE_TESTS},
    )
    return ids


def make_env_spec(directory: Path, spec: str = WCALC_SPEC) -> Path:
    """`directory/env.toml` holding `spec`, with environment/requirements.txt installing the
    `units` wheel (FACTOR = 10, OFFSET = 7) offline from environment/wheels/."""
    from tests.sandbox.envfactory import build_wheel

    env_dir = directory / "environment"
    build_wheel(env_dir / "wheels", "units", "1.0", {"units.py": "FACTOR = 10\nOFFSET = 7\n"})
    (env_dir / "requirements.txt").write_text("--no-index\n--find-links wheels\nunits==1.0\n")
    (directory / "env.toml").write_text(spec, encoding="utf-8")
    return directory / "env.toml"
