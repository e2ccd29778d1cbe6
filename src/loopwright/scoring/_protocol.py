"""The Grader protocol: what `run_task` calls to grade a finished workspace.

A grader kind is one implementation: `PytestGrader` (a task's hidden tests, run by pytest),
`UnittestGrader` and `CommandGrader` (the runners a task.toml's `[grading]` table may choose;
`grader_for` picks a task's) and the A/B harness's brief checks (`harness.BriefGrader`). Another
kind is a new class with these two methods, handed to `TaskRunSpec.grader` or
`Evaluator.grader`; nothing else in the evaluation stack changes.

Grading has two steps because the agent is an adversary that may rewrite the task's own files
on disk where the sandbox does not isolate: `capture(task)` runs before the agent starts and
keeps what grading needs (hidden tests, checks) in memory; the returned `Grading` grades the
finished workspace against that copy.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol, runtime_checkable

from loopwright.sandbox import Sandbox
from loopwright.scoring._result import GradeResult
from loopwright.tasks import Task

__all__ = ["Grader", "Grading"]


@runtime_checkable
class Grading(Protocol):
    """The grading of one task, its hidden material captured before the agent started."""

    def grade(self, workspace: Path) -> GradeResult:
        """Grade `workspace` (it may be modified: tests restored, hooks removed).

        Never raises: a run that could not be graded is an invalid GradeResult saying why, and
        a result the code under test could have forged is invalid with a reason starting
        `tamper:` (it counts as a zero). Deterministic for deterministic code under test.
        """
        ...


@runtime_checkable
class Grader(Protocol):
    """Grades finished workspaces of tasks; one Grader may grade many."""

    @property
    def name(self) -> str:
        """The grader kind ("pytest", ...): part of a fitness-cache key unless it is pytest."""
        ...

    @property
    def sandbox(self) -> Sandbox:
        """Where it runs what it grades with (a container sandbox's workspace is released
        through it once graded)."""
        ...

    def capture(self, task: Task) -> Grading:
        """Read what grading `task` needs from its directory now, before any agent runs.
        Raises OSError when the task's files cannot be read."""
        ...
