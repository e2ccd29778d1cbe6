"""Tasks graded by the unittest and command runners (`[grading] runner`), built on disk for
tests: the calc package missing `mul` and `div`, with a gold solution and a flawed variant that
adds only `mul` (1 of 3 fail_to_pass checks)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from loopwright.tasks import Task, load_task
from tests.taskfactory import GOLD, PARTIAL, write_files

REPO = {
    "calc/__init__.py": "",
    "calc/core.py": "def add(a, b):\n    return a + b\n",
    "tests/__init__.py": "",
    "tests/test_add.py": """
        import unittest

        from calc.core import add


        class TestAdd(unittest.TestCase):
            def test_add(self):
                self.assertEqual(add(2, 3), 5)
    """,
}

HIDDEN_UNITTEST = {
    "test_ops_hidden.py": """
        import unittest

        from calc import core


        class TestOps(unittest.TestCase):
            def test_mul(self):
                self.assertEqual(core.mul(3, 4), 12)

            def test_div(self):
                \"\"\"div divides.\"\"\"
                for a, b in [(6, 3), (1, 4)]:
                    with self.subTest(a=a, b=b):
                        self.assertEqual(core.div(a, b), a / b)

            def test_div_by_zero(self):
                with self.assertRaises(ZeroDivisionError):
                    core.div(1, 0)
    """,
}

# The reward variant's hidden checker: the fraction of checks passing, written as the reward.
CHECKER = """
    import os
    import sys

    sys.path.insert(0, os.getcwd())  # the workspace: the code under test
    checks = 0
    try:
        from calc import core
        checks += core.mul(3, 4) == 12
        checks += core.div(6, 3) == 2
        checks += core.div(1, 4) == 0.25
    except Exception:
        pass
    with open(os.path.join(os.environ["LOOPWRIGHT_OUTPUT"], "reward.txt"), "w") as f:
        f.write(str(checks / 3))
"""

UNITTEST_TOML = """
schema_version = 1
id = "{task_id}"
level = 1
fail_to_pass = [
  "tests.test_ops_hidden.TestOps.test_mul",
  "tests.test_ops_hidden.TestOps.test_div",
  "tests.test_ops_hidden.TestOps.test_div_by_zero",
]
pass_to_pass = ["tests.test_add.TestAdd.test_add"]

[grading]
runner = "unittest"
"""

COMMAND_TOML = """
schema_version = 1
id = "{task_id}"
level = 1
{ids}

[grading]
runner = "command"
command = '{command}'
{source}
"""

FLAWED = """
[[flawed]]
name = "only-mul"
kind = "partial_feature"
description = "Adds mul but not div."
"""

JUNIT_COMMAND = (
    '"$PYTHON" -m pytest -q -p no:cacheprovider -o junit_family=xunit1 '
    '--junitxml="$LOOPWRIGHT_OUTPUT/junit.xml" tests'
)
JUNIT_IDS = """
fail_to_pass = [
  "tests.test_ops_hidden.TestOps.test_mul",
  "tests.test_ops_hidden.TestOps.test_div",
  "tests.test_ops_hidden.TestOps.test_div_by_zero",
]
pass_to_pass = ["tests.test_add.TestAdd.test_add"]
"""


def make_task(parent: Path, task_id: str, toml: str, hidden: dict[str, str]) -> Task:
    root = parent / task_id
    write_files(root / "repo", REPO)
    write_files(root / "tests", hidden)
    write_files(root / "solution", {"calc/core.py": GOLD})
    write_files(root / "flawed" / "only-mul", {"calc/core.py": PARTIAL})
    (root / "instruction.md").write_text("Add `mul(a, b)` and `div(a, b)` to `calc/core.py`.\n")
    (root / "task.toml").write_text(textwrap.dedent(toml).format(task_id=task_id) + FLAWED)
    return load_task(root)


def unittest_task(parent: Path, task_id: str = "calc-unittest") -> Task:
    return make_task(parent, task_id, UNITTEST_TOML, HIDDEN_UNITTEST)


def command_task(
    parent: Path,
    task_id: str = "calc-reward",
    *,
    command: str = '"$PYTHON" tests/check.py',
    source: str = 'reward = "reward.txt"',
    ids: str = "",
    hidden: dict[str, str] | None = None,
) -> Task:
    toml = COMMAND_TOML.replace("{ids}", ids).replace("{command}", command)
    toml = toml.replace("{source}", source)
    return make_task(parent, task_id, toml, hidden or {"check.py": CHECKER})


def junit_task(parent: Path, task_id: str = "calc-junit") -> Task:
    return command_task(
        parent,
        task_id,
        command=JUNIT_COMMAND,
        source='junit = "junit.xml"',
        ids=JUNIT_IDS,
        hidden=HIDDEN_UNITTEST,
    )
