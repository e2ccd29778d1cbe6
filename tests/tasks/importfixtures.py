"""A small git repository made in the test (`acme/calc`, three commits) and SWE-bench,
FeatureBench and v5 task-repository sources pointing at it."""

from __future__ import annotations

import json
import subprocess
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = "acme/calc"
OPS = "def add(a, b):\n    return a + b\n"
OPS_GOLD = OPS + "\n\ndef mul(a, b):\n    return a * b\n"
TEST_OPS = textwrap.dedent(
    """\
    import pytest

    from calc.ops import add


    def test_add():
        assert add(2, 3) == 5


    @pytest.mark.skip(reason="flaky upstream")
    def test_skipped():
        assert False
    """
)
TEST_OPS_HIDDEN = TEST_OPS + textwrap.dedent(
    """\


    def test_mul():
        from calc.ops import mul

        assert mul(3, 4) == 12
    """
)
TEST_EXTRA = textwrap.dedent(
    """\
    from calc.ops import mul


    def test_mul_zero():
        assert mul(5, 0) == 0


    class TestMul:
        def test_negative(self):
            assert mul(-2, 3) == -6
    """
)
F2P = ["tests/test_ops.py::test_mul", "tests/test_extra.py::test_mul_zero"]
P2P = ["tests/test_ops.py::test_add", "tests/test_ops.py::test_skipped"]


@dataclass(frozen=True)
class Fixture:
    """The clones folder, the base commit (no `mul`), the feature commit, the patches."""

    repos: Path
    clone: Path
    base: str
    feature: str
    gold_patch: str
    test_patch: str

    def instance(self, **fields: Any) -> dict[str, Any]:
        """A SWE-bench instance of the fixture (FAIL_TO_PASS/PASS_TO_PASS as JSON strings,
        as the dataset stores them); `fields` override."""
        record: dict[str, Any] = {
            "instance_id": "acme__calc-1",
            "repo": REPO,
            "base_commit": self.base,
            "patch": self.gold_patch,
            "test_patch": self.test_patch,
            "problem_statement": "Add mul(a, b) to calc.ops.\n\nIt multiplies two numbers.",
            "hints_text": "Look at add.",
            "FAIL_TO_PASS": json.dumps(F2P),
            "PASS_TO_PASS": json.dumps(P2P),
            "version": "0.1",
            "environment_setup_commit": self.base,
            "created_at": "2024-01-01T00:00:00Z",
        }
        record.update(fields)
        return record


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=cwd, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return done.stdout


def _commit(clone: Path, files: dict[str, str], message: str) -> str:
    for rel, text in files.items():
        (clone / rel).parent.mkdir(parents=True, exist_ok=True)
        (clone / rel).write_text(text)
    git(clone, "add", "-A")
    git(clone, "commit", "-q", "-m", message)
    return git(clone, "rev-parse", "HEAD").strip()


def make_fixture(root: Path) -> Fixture:
    """`root/repos/acme__calc`: commit 1 (add + its tests), commit 2 (the base: a README),
    commit 3 (mul with its tests: the feature)."""
    repos = root / "repos"
    clone = repos / "acme__calc"
    clone.mkdir(parents=True)
    git(clone, "init", "-q", "-b", "main")
    files = {"calc/__init__.py": "", "calc/ops.py": OPS, "tests/test_ops.py": TEST_OPS}
    _commit(clone, files, "add")
    base = _commit(clone, {"README.md": "calc\n"}, "readme")
    feature = _commit(
        clone,
        {
            "calc/ops.py": OPS_GOLD,
            "tests/test_ops.py": TEST_OPS_HIDDEN,
            "tests/test_extra.py": TEST_EXTRA,
        },
        "mul",
    )
    gold = git(clone, "diff", base, feature, "--", "calc")
    tests = git(clone, "diff", base, feature, "--", "tests")
    return Fixture(repos, clone, base, feature, gold, tests)


def write_json(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps(records, indent=1))
    return path


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def write_v5(root: Path, fx: Fixture) -> Path:
    """A SWE-bench v5 task repository holding the fixture's instance."""
    task = root / "tasks" / "acme__calc-1"
    task.mkdir(parents=True)
    (root / "sweb.yaml").write_text("name: calc-tasks\nversion: 5\n")
    meta = {
        "instance_id": "acme__calc-1",
        "repo": REPO,
        "base_commit": fx.base,
        "version": "0.1",
        "log_parser": "pytest",
        "eval_type": "pass_and_fail",
    }
    (task / "task.yaml").write_text("".join(f"{k}: '{v}'\n" for k, v in meta.items()))
    (task / "tests.json").write_text(json.dumps({"FAIL_TO_PASS": F2P, "PASS_TO_PASS": P2P}))
    (task / "problem_statement.md").write_text("Add mul(a, b) to calc.ops.\n")
    (task / "gold.patch").write_text(fx.gold_patch)
    (task / "test.patch").write_text(fx.test_patch)
    (task / "eval.sh").write_text("#!/bin/sh\npytest tests\n")
    (task / "Dockerfile").write_text("FROM python:3.11-slim\nWORKDIR /testbed\n")
    return root


UNIT_TESTS = textwrap.dedent(
    """\
    import unittest

    from calc.ops import add


    class TestOps(unittest.TestCase):
        def test_add(self):
            self.assertEqual(add(2, 3), 5)

        @unittest.skip("flaky upstream")
        def test_skipped(self):
            '''A skipped one.'''
            self.fail()
    """
)
UNIT_TESTS_HIDDEN = UNIT_TESTS + (
    "\n"
    "    def test_mul(self):\n"
    "        from calc.ops import mul\n"
    "\n"
    "        self.assertEqual(mul(3, 4), 12)\n"
)


def make_unittest_fixture(root: Path) -> Fixture:
    """`root/repos/acme__units`: the calc repo with Django-style unittest tests."""
    repos = root / "repos"
    clone = repos / "acme__units"
    clone.mkdir(parents=True)
    git(clone, "init", "-q", "-b", "main")
    files = {
        "calc/__init__.py": "",
        "calc/ops.py": OPS,
        "tests/__init__.py": "",
        "tests/test_ops.py": UNIT_TESTS,
    }
    base = _commit(clone, files, "add")
    feature = _commit(
        clone, {"calc/ops.py": OPS_GOLD, "tests/test_ops.py": UNIT_TESTS_HIDDEN}, "mul"
    )
    gold = git(clone, "diff", base, feature, "--", "calc")
    tests = git(clone, "diff", base, feature, "--", "tests")
    return Fixture(repos, clone, base, feature, gold, tests)
