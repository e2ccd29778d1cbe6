"""The Grader protocol's contract, for every grader kind loopwright ships (pytest, unittest,
command, and the A/B harness's brief checks): a grader captures a task's hidden material before the agent, grades
the known-good solution 1.0 and resolved and the untouched repository below 1.0, and an agent
that rewrote the hidden material on disk after the capture gets a `tamper:` grade while the
task's files are put back."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from loopwright.harness import BriefGrader, load_brief_suite
from loopwright.sandbox import LocalSandbox, Sandbox, create_workspace, remove_workspace
from loopwright.scoring import CommandGrader, Grader, GradeResult, PytestGrader, UnittestGrader
from loopwright.tasks import Task, apply_overlay
from tests.scoring.runner_tasks import command_task, unittest_task
from tests.taskfactory import make_calc_task


@dataclass(frozen=True)
class Kind:
    """One grader kind on a task of its kind: the task, its gold overlay and a hidden file."""

    grader: Callable[[Sandbox], Grader]
    task: Task
    gold: Path
    hidden: Path


def _pytest_kind(tmp_path: Path) -> Kind:
    task = make_calc_task(tmp_path / "bench")
    assert task.solution_dir is not None
    hidden = sorted(task.hidden_tests_dir.rglob("test_*.py"))[0]
    return Kind(PytestGrader, task, task.solution_dir, hidden)


def _brief_kind(tmp_path: Path) -> Kind:
    root = tmp_path / "suite"
    shutil.copytree(load_brief_suite().root, root, ignore=shutil.ignore_patterns("__pycache__"))
    brief = load_brief_suite(root).get("simple-wordfreq")
    return Kind(BriefGrader, brief.task(), brief.solution_dir, brief.checks_file)


def _unittest_kind(tmp_path: Path) -> Kind:
    task = unittest_task(tmp_path / "bench")
    assert task.solution_dir is not None
    return Kind(
        UnittestGrader, task, task.solution_dir, task.hidden_tests_dir / "test_ops_hidden.py"
    )


def _command_kind(tmp_path: Path) -> Kind:
    task = command_task(tmp_path / "bench")
    assert task.solution_dir is not None
    return Kind(CommandGrader, task, task.solution_dir, task.hidden_tests_dir / "check.py")


KINDS = {
    "pytest": _pytest_kind,
    "brief-checks": _brief_kind,
    "unittest": _unittest_kind,
    "command": _command_kind,
}


@pytest.fixture(params=sorted(KINDS))
def kind(request: pytest.FixtureRequest, tmp_path: Path) -> Kind:
    return KINDS[request.param](tmp_path)


def _grade(kind: Kind, sandbox: Sandbox, parent: Path, overlay: Path | None) -> GradeResult:
    grading = kind.grader(sandbox).capture(kind.task)
    workspace = create_workspace(kind.task.repo_dir, parent)
    try:
        if overlay is not None:
            apply_overlay(overlay, workspace.path)
        return grading.grade(workspace.path)
    finally:
        remove_workspace(workspace)


def test_every_grader_kind_is_a_grader_with_its_own_name(kind: Kind) -> None:
    grader = kind.grader(LocalSandbox())
    assert isinstance(grader, Grader)
    assert grader.name in KINDS


def test_gold_scores_one_and_the_untouched_repo_less(kind: Kind, tmp_path: Path) -> None:
    gold = _grade(kind, LocalSandbox(), tmp_path, kind.gold)
    assert (gold.score, gold.resolved, gold.invalid) == (1.0, True, False)
    untouched = _grade(kind, LocalSandbox(), tmp_path, None)
    assert untouched.score < 1.0 and not untouched.resolved
    assert gold.task_id == untouched.task_id == kind.task.id


def test_hidden_material_rewritten_after_the_capture_is_a_tamper_grade_and_put_back(
    kind: Kind, tmp_path: Path
) -> None:
    """What an unsandboxed agent could do to the task directory while it runs."""
    grading = kind.grader(LocalSandbox()).capture(kind.task)
    original = kind.hidden.read_bytes()
    kind.hidden.write_text("def test_nothing():\n    pass\n\ndef check_nothing():\n    pass\n")
    workspace = create_workspace(kind.task.repo_dir, tmp_path)
    try:
        apply_overlay(kind.gold, workspace.path)
        grade = grading.grade(workspace.path)
    finally:
        remove_workspace(workspace)
    assert grade.tampered and grade.score == 0.0
    assert kind.hidden.read_bytes() == original
