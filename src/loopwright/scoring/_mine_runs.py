"""Every test outcome of a mined candidate's test files, run by the pytest grader, and
FAIL_TO_PASS / PASS_TO_PASS worked out from runs before and after the change.

A grade reports only the test ids a task lists; mining does not know them yet, so this asks the
grader for every outcome of its own run (`PytestGrader.outcomes`: same sandbox, private kit,
guard, junit parsing, invalid-run rules) on the candidate's test files.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from loopwright.sandbox import (
    DockerSandbox,
    TaskEnvironment,
    attach_task_container,
    create_workspace,
    remove_workspace,
)
from loopwright.scoring._grader import PytestGrader
from loopwright.scoring._junit import Outcome
from loopwright.scoring._restore import TaskTests, restore_tests
from loopwright.tasks import Task, apply_overlay

__all__ = ["NO_TESTS_RAN", "Split", "TestRun", "run_test_files", "split_outcomes"]


@dataclass(frozen=True, slots=True)
class TestRun:
    """The outcome of every test the run reported (pytest node ids), or why the run is invalid."""

    __test__ = False  # not a pytest test class

    outcomes: dict[str, Outcome]
    invalid: str | None = None

    def passed(self, test_id: str) -> bool:
        """True when `test_id` passed (xfail counts as passed; absent counts as failed)."""
        outcome = self.outcomes.get(test_id, Outcome.MISSING)
        return self.invalid is None and outcome.counts_as_pass


def run_test_files(
    task: Task,
    overlay: Path | None,
    grader: PytestGrader,
    parent: Path,
    environment: TaskEnvironment | None = None,
) -> TestRun:
    """Run the files of `task`'s test ids on its repo with `overlay` applied (None: the repo as
    is) and the hidden tests restored, in a fresh workspace under `parent`, in `environment`
    when given (under the container sandbox, in a container of the task's own image when its
    `[environment]` names one, as grading does). Never raises: a run that could not be made is
    an invalid TestRun saying why."""
    workspace = create_workspace(task.repo_dir, parent)
    try:
        table = task.spec.environment
        if table is not None and table.container and isinstance(grader.sandbox, DockerSandbox):
            attach_task_container(grader.sandbox, task, workspace.path)
        placed = grader.within(environment, workspace.path) if environment else grader
        tests = TaskTests.capture(task)
        if overlay is not None:
            apply_overlay(overlay, workspace.path)
        path = workspace.path.resolve()
        restored = restore_tests(path, task, tests)
        # Every case the run reports: mining needs them all, not the listed ids only.
        cases, invalid = placed.outcomes(path, task, restored.conftests)
    except Exception as exc:  # noqa: BLE001  the boundary: a run that could not be made is data
        return TestRun({}, f"{type(exc).__name__}: {exc}")
    finally:
        grader.sandbox.release(workspace.path)
        remove_workspace(workspace)
    if invalid is not None:
        return TestRun({}, invalid)
    return TestRun({i: o for i, o in cases.items() if "::" in i})  # canaries have no "::"


NO_TESTS_RAN = (
    "no test ran, before or after the change: its test files collect no test (an import "
    "error, such as a dependency the environment lacks: give one with --env-spec)"
)


@dataclass(frozen=True, slots=True)
class Split:
    """FAIL_TO_PASS and PASS_TO_PASS from runs before and after a change; `unstable` are ids
    whose outcome differed between runs of the same state; `reason` says why there is no
    FAIL_TO_PASS when there is none."""

    fail_to_pass: list[str]
    pass_to_pass: list[str]
    unstable: list[str]
    reason: str | None


def split_outcomes(before: Sequence[TestRun], after: Sequence[TestRun]) -> Split:
    """FAIL_TO_PASS: failing in every run before, passing in every run after; PASS_TO_PASS:
    passing in every run of both. An id that passes in some runs of one state and not in others
    is unstable and in neither list. Runs that report no test at all give NO_TESTS_RAN as the
    reason (not "every test already passes at base"). Deterministic; ids sorted."""
    for label, runs in (("at base", before), ("with the change", after)):
        bad = next((r.invalid for r in runs if r.invalid is not None), None)
        if bad is not None:
            return Split([], [], [], f"the tests could not run {label}: {bad}")
    ids = sorted({i for run in (*before, *after) for i in run.outcomes})
    unstable = [i for i in ids if _mixed(before, i) or _mixed(after, i)]
    steady = [i for i in ids if i not in unstable]
    f2p = [i for i in steady if after[0].passed(i) and not before[0].passed(i)]
    p2p = [i for i in steady if after[0].passed(i) and before[0].passed(i)]
    reason = None
    if not f2p:
        failing = [i for i in ids if not before[0].passed(i)]
        flipped = [i for i in failing if after[0].passed(i)]
        if not ids:
            reason = NO_TESTS_RAN
        elif not failing:
            reason = "every test already passes at base"
        elif not flipped:
            reason = "the tests failing at base fail with the change too: " + _few(failing)
        else:
            reason = f"its fail-to-pass tests are unstable over {len(before)} runs: " + _few(
                flipped
            )
    return Split(f2p, p2p, unstable, reason)


def _mixed(runs: Sequence[TestRun], test_id: str) -> bool:
    return len({run.passed(test_id) for run in runs}) > 1


def _few(ids: list[str]) -> str:
    return ", ".join(ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")
