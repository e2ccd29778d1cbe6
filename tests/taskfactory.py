"""Build small synthetic tasks on disk for tests: a `calc` package missing `mul` and `div`."""

from __future__ import annotations

import difflib
import textwrap
from pathlib import Path

from loopwright.tasks import Task, load_task

REPO = {
    "calc/__init__.py": "from calc.core import add\n",
    "calc/core.py": "def add(a, b):\n    return a + b\n",
    "tests/test_add.py": """
        from calc.core import add

        def test_add():
            assert add(2, 3) == 5

        def test_add_negative():
            assert add(-2, 3) == 1
    """,
}

HIDDEN = {
    "test_ops_hidden.py": """
        import unittest

        import pytest

        from calc import core


        def test_mul():
            assert core.mul(3, 4) == 12


        @pytest.mark.parametrize("a,b,want", [(6, 3, 2), (1, 4, 0.25)], ids=["six by [3]", "one by four"])
        def test_div(a, b, want):
            assert core.div(a, b) == want


        def test_div_by_zero():
            with pytest.raises(ZeroDivisionError):
                core.div(1, 0)


        class TestMulCase(unittest.TestCase):
            def test_mul_zero(self):
                self.assertEqual(core.mul(5, 0), 0)

            def test_mul_table(self):
                for a in range(1, 4):
                    with self.subTest(a=a):
                        self.assertEqual(core.mul(a, a), a * a)
    """,
}

F2P = [
    "tests/test_ops_hidden.py::test_mul",
    "tests/test_ops_hidden.py::test_div[six by [3]]",
    "tests/test_ops_hidden.py::test_div[one by four]",
    "tests/test_ops_hidden.py::test_div_by_zero",
    "tests/test_ops_hidden.py::TestMulCase::test_mul_zero",
    "tests/test_ops_hidden.py::TestMulCase::test_mul_table",
]
P2P = ["tests/test_add.py::test_add", "tests/test_add.py::test_add_negative"]

GOLD = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n\n\ndef div(a, b):\n    return a / b\n"
# mul right, div missing: 3 of the 6 fail_to_pass tests pass.
PARTIAL = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n"
# mul wrong for a == 2 only: test_mul_table fails in one subtest.
SUBTEST_BUG = GOLD.replace("return a * b", "return 5 if (a, b) == (2, 2) else a * b")

TOML = """
schema_version = 1
id = "{task_id}"
level = 1
summary = "Add mul and div to calc"
fail_to_pass = {f2p}
pass_to_pass = {p2p}

[timeouts]
agent = 60
grade = {grade_timeout}
per_test = {per_test}

[[flawed]]
name = "only-mul"
kind = "partial_feature"
description = "Adds mul but not div."
"""


def write_files(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")


def make_calc_task(
    parent: Path,
    task_id: str = "calc-ops",
    *,
    grade_timeout: float = 60,
    per_test: float = 10,
    extra_hidden: dict[str, str] | None = None,
    extra_f2p: list[str] | None = None,
) -> Task:
    """Write the calc task under `parent` and load it. 6 fail_to_pass tests, 2 pass_to_pass."""
    root = parent / task_id
    write_files(root / "repo", REPO)
    write_files(root / "tests", {**HIDDEN, **(extra_hidden or {})})
    write_files(root / "solution", {"calc/core.py": GOLD})
    write_files(root / "flawed" / "only-mul", {"calc/core.py": PARTIAL})
    (root / "instruction.md").write_text(
        "Add `mul(a, b)` and `div(a, b)` to `calc/core.py`. `div` raises ZeroDivisionError on 0.\n"
    )
    f2p = F2P + (extra_f2p or [])
    (root / "task.toml").write_text(
        TOML.format(
            task_id=task_id,
            f2p=repr(f2p),
            p2p=repr(P2P),
            grade_timeout=grade_timeout,
            per_test=per_test,
        )
    )
    return load_task(root)


# A task whose hidden tests sit in two directories: they add `test_mul` to the existing
# tests/test_add.py and a new calc/tests/test_div.py. Laid out as a tree or as a git patch.
ANYWHERE_ADD_TESTS = """
from calc.core import add


def test_add():
    assert add(2, 3) == 5


def test_mul():
    from calc.core import mul

    assert mul(3, 4) == 12
"""
ANYWHERE_DIV_TESTS = """
import pytest

from calc import core


def test_div():
    assert core.div(6, 3) == 2


def test_div_by_zero():
    with pytest.raises(ZeroDivisionError):
        core.div(1, 0)
"""
ANYWHERE_F2P = [
    "tests/test_add.py::test_mul",
    "calc/tests/test_div.py::test_div",
    "calc/tests/test_div.py::test_div_by_zero",
]
ANYWHERE_TOML = """
schema_version = 1
id = "{task_id}"
level = 1
hidden_tests_layout = "{layout}"
fail_to_pass = {f2p}
pass_to_pass = ["tests/test_add.py::test_add"]

[[flawed]]
name = "only-mul"
kind = "partial_feature"
description = "Adds mul but not div."
"""


def anywhere_hidden() -> dict[str, str]:
    """The hidden tests as they land in the workspace (workspace-relative path -> text)."""
    return {
        "tests/test_add.py": textwrap.dedent(ANYWHERE_ADD_TESTS).lstrip("\n"),
        "calc/tests/test_div.py": textwrap.dedent(ANYWHERE_DIV_TESTS).lstrip("\n"),
    }


def git_patch(repo: Path, files: dict[str, str]) -> str:
    """A `git diff`-style patch turning `repo`'s versions of `files` into the given texts."""
    chunks = []
    for rel, text in files.items():
        old_path = repo / rel
        old = old_path.read_text().splitlines(keepends=True) if old_path.is_file() else []
        header = [f"diff --git a/{rel} b/{rel}\n"]
        if not old:
            header.append("new file mode 100644\n")
        lines = difflib.unified_diff(
            old,
            text.splitlines(keepends=True),
            fromfile=f"a/{rel}" if old else "/dev/null",
            tofile=f"b/{rel}",
        )
        chunks.append("".join(header) + "".join(lines))
    return "".join(chunks)


def make_anywhere_task(parent: Path, layout: str, task_id: str = "calc-anywhere") -> Task:
    """The calc task with hidden tests in two directories, one of them modifying a visible test
    file; `layout` is "tree" or "patch". 3 fail_to_pass tests (only-mul passes 1), 1 pass_to_pass."""
    root = parent / task_id
    write_files(root / "repo", {k: v for k, v in REPO.items()})
    hidden = anywhere_hidden()
    if layout == "tree":
        for rel, text in hidden.items():
            (root / "tests" / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / "tests" / rel).write_text(text)
    else:
        (root / "tests.patch").write_text(git_patch(root / "repo", hidden))
    write_files(root / "solution", {"calc/core.py": GOLD})
    write_files(root / "flawed" / "only-mul", {"calc/core.py": PARTIAL})
    (root / "instruction.md").write_text("Add `mul(a, b)` and `div(a, b)` to `calc/core.py`.\n")
    (root / "task.toml").write_text(
        ANYWHERE_TOML.format(task_id=task_id, layout=layout, f2p=repr(ANYWHERE_F2P))
    )
    return load_task(root)
