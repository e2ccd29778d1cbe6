from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from loopwright.tasks import Benchmark, Task, load_benchmark
from tests.models.driver import Tools


@pytest.fixture(scope="session")
def mini() -> Benchmark:
    return load_benchmark("mini")


class QuietTools(Tools):
    """The tool contract with run_tests answering "passed" without running pytest: for the
    statistical tests, where only what the sim writes matters."""

    def t_run_tests(self, path: str | None = None) -> str:
        return "exit code 0\n1 passed"


def fresh_tools(task: Task, parent: Path, *, quiet: bool = False) -> Tools:
    """A copy of the task's repo in a new directory under `parent`, with the tool contract."""
    index = len(list(parent.iterdir())) if parent.exists() else 0
    workspace = parent / f"ws{index}"
    shutil.copytree(task.repo_dir, workspace)
    cls = QuietTools if quiet else Tools
    return cls(workspace, task.root / "instruction.md", task.spec.test_dir)
