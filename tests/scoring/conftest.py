from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from loopwright.sandbox import create_workspace, default_sandbox, remove_workspace
from loopwright.scoring import GradeResult, PytestGrader
from loopwright.tasks import Task, apply_overlay
from tests.taskfactory import make_calc_task, write_files


@pytest.fixture(scope="session")
def grader() -> PytestGrader:
    return PytestGrader(default_sandbox("auto"))


@pytest.fixture
def calc_task(tmp_path: Path) -> Task:
    return make_calc_task(tmp_path / "bench")


GradeFn = Callable[..., GradeResult]


@pytest.fixture
def grade_with(tmp_path: Path, grader: PytestGrader, calc_task: Task) -> Iterator[GradeFn]:
    """Grade in a fresh workspace after `core` (calc/core.py text), extra files and deletions land."""
    made = []

    def run(
        core: str | None = None,
        files: dict[str, str] | None = None,
        task: Task | None = None,
        delete: tuple[str, ...] = (),
    ) -> GradeResult:
        task = task or calc_task
        ws = create_workspace(task.repo_dir, tmp_path / "ws")
        made.append(ws)
        if core is not None:
            (ws.path / "calc" / "core.py").write_text(core)
        if files:
            write_files(ws.path, files)
        for rel in delete:
            (ws.path / rel).unlink()
        return grader.grade(ws.path, task)

    yield run
    for ws in made:
        remove_workspace(ws)


__all__ = ["GradeFn", "apply_overlay"]
