"""Build small synthetic tasks on disk for tests: a `calc` package missing `mul` and `div`."""

from __future__ import annotations

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
