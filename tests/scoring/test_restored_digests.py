"""The hidden tests as the test run reads them are the tests as restored: the host takes each
restored file's SHA-256 right after restoration and the guard compares what it reads as it
loads. A file rewritten in between (by a process left running beside the grade: every sandbox
kills the agent's processes before grading, so this is defence in depth) is `tamper:`.

Simulated here by rewriting the hidden test file with passing stubs just after the kit is
written, i.e. after the host read it and before the graded process starts. Without the check the
stubs pass and the run scores 1.0 with no code for the task.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from loopwright.scoring import _grader
from tests.evaluation.test_local_task_dir import PASSING_STUBS
from tests.scoring.conftest import GradeFn
from tests.taskfactory import GOLD

HIDDEN = "tests/test_ops_hidden.py"


def test_a_test_file_rewritten_after_restoration_is_tamper(
    grade_with: GradeFn, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace: list[Path] = []  # the one being graded, as `_step` gets it
    original_kit = _grader.write_kit

    def then_rewrite(private: Path, *args: Any, **kwargs: Any) -> Any:
        kit = original_kit(private, *args, **kwargs)
        (workspace[0] / HIDDEN).write_text(PASSING_STUBS)
        return kit

    original_step = _grader.PytestGrader._step

    def step(self: Any, where: Path, *args: Any, **kwargs: Any) -> Any:
        workspace[:] = [where]
        return original_step(self, where, *args, **kwargs)

    monkeypatch.setattr(_grader, "write_kit", then_rewrite)
    monkeypatch.setattr(_grader.PytestGrader, "_step", step)
    grade = grade_with()  # no code for the task: mul and div are missing
    assert grade.invalid and grade.invalid_reason is not None, grade
    assert grade.invalid_reason.startswith("tamper:"), grade.invalid_reason
    assert "changed after the tests were restored" in grade.invalid_reason
    assert grade.score == 0.0


def test_the_gold_with_its_tests_untouched_still_scores_one(grade_with: GradeFn) -> None:
    grade = grade_with(core=GOLD)
    assert not grade.invalid, grade.invalid_reason
    assert grade.score == 1.0
