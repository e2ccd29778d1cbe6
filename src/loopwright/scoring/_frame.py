"""The frame every test-runner grader shares (pytest, unittest, command): restore the hidden tests,
run one command in the sandbox with a fresh private directory, read what it left, build the grade.

A grader kind is a `RunGrader` that supplies only its `Step` (the command, and how to read its
result into a `Verdict`); restoring, the tamper check of the task's own files, the sandbox call
(workspace, grade timeout, the task's network setting), the private directory, scoring and the
never-raise boundary live here, once.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Self, TypedDict

from loopwright._caller import carried
from loopwright._scratch import memory_scratch
from loopwright.sandbox import CommandResult, Sandbox, TaskEnvironment, default_sandbox
from loopwright.scoring._audit import audit_change, mark_suspect
from loopwright.scoring._guard import failed_grade, mark_tampered
from loopwright.scoring._junit import JunitReport, Outcome
from loopwright.scoring._restore import TaskTests, restore_tests
from loopwright.scoring._result import GradeResult, TestResult
from loopwright.tasks import Task

__all__ = [
    "HOST_MARGIN_S",
    "RunGrader",
    "RunnerGrading",
    "Step",
    "Verdict",
    "score_cases",
    "whole_grade",
]

_TAIL_CHARS = 2000
HOST_MARGIN_S = 120.0
"""How long a grade's host-side steps may take beyond the task's grade timeout before the grade
is given up as `grading failed:` (they take well under a second; waiting longer only means a
workspace file blocked the host)."""


@dataclass(frozen=True, slots=True)
class Verdict:
    """What one grading run says. `reason` set: the run cannot be trusted (the grade is invalid,
    every test counted failed). `value` None: per-test outcomes, read from `report` (a listed
    test it lacks is missing); a number: the score of the whole run, without per-test outcomes."""

    result: CommandResult
    reason: str | None
    report: JunitReport | None = None
    value: float | None = None

    def grade(self, task: Task, restored: list[str], duration_s: float) -> GradeResult:
        """The grade of `task` this verdict gives (`score_cases` or `whole_grade`)."""
        if self.value is None:
            return score_cases(
                task,
                self.report,
                self.reason,
                self.result,
                restored=restored,
                duration_s=duration_s,
            )
        return whole_grade(
            task, self.value, self.reason, self.result, restored=restored, duration_s=duration_s
        )


@dataclass(frozen=True, slots=True)
class Step:
    """A grader kind's part of one grade: the command to run in the workspace (`argv` with exactly
    the variables `env`; `writable` and `readonly` paths beside the workspace, in the private
    directory) and `read`, which turns its result into a Verdict (reading what it left in the
    private directory, which exists until `read` returns)."""

    argv: list[str]
    env: Mapping[str, str]
    read: Callable[[CommandResult], Verdict]
    writable: tuple[Path, ...] = ()
    readonly: tuple[Path, ...] = ()
    channel: bool = False  # give the command an outcome channel (`Sandbox.run`)


class RunGrader(ABC):
    """A grader that restores the task's hidden tests, runs one command and scores what it
    reports; subclasses set `name` and give their `Step` (`_step`). One may grade many
    workspaces."""

    name: ClassVar[str]

    def __init__(self, sandbox: Sandbox | None = None, *, python: str | None = None) -> None:
        """`python` runs the tests (pytest, unittest) or is `$PYTHON` (command): default the
        sandbox's interpreter (its task environment's when it runs in one, `Sandbox.within`)."""
        self.sandbox = sandbox if sandbox is not None else default_sandbox()
        self.python = python or self.sandbox.interpreter()

    def capture(self, task: Task) -> RunnerGrading:
        """The task's tests copied now (`TaskTests.capture`), to grade a workspace with later.
        Raises OSError when they cannot be read."""
        return RunnerGrading(self, task, TaskTests.capture(task, whole=not self.sandbox.isolated))

    def within(self, environment: TaskEnvironment, workspace: Path) -> Self:
        """A grader of this kind for `workspace` whose tests run in `environment` (its
        interpreter, in this grader's sandbox placed in it; see `Sandbox.within`)."""
        return type(self)(self.sandbox.within(environment, workspace))

    def grade(self, workspace: Path, task: Task, tests: TaskTests | None = None) -> GradeResult:
        """Restore tests in `workspace` (modifies it), run this kind's command, return the grade.

        `tests` is the copy of the task's tests taken before the agent started (default: read
        the task now). Where the sandbox does not isolate, the task directory is compared with
        that copy: an agent that rewrote the task's tests on disk gets a `tamper:` grade, and
        the task's files are put back so that later runs are not poisoned. Never raises: any
        failure, a bad workspace included, is an invalid grade saying why. Always returns: the
        host-side work (restoring, sniffing config files, reading results) has a deadline of
        the task's grade timeout plus `HOST_MARGIN_S`, after which the grade is `grading
        failed:` (the worker left blocked is a daemon thread).
        """
        deadline = task.spec.timeouts.grade + HOST_MARGIN_S
        box: list[GradeResult] = []

        def grade() -> None:
            box.append(self._grade(workspace, task, tests))

        worker = threading.Thread(
            target=carried(grade),
            name=f"grade-{task.id}",
            daemon=True,
        )
        worker.start()
        worker.join(deadline)
        if box:
            return box[0]
        return failed_grade(
            task,
            f"grading failed: grading did not finish within {deadline:.0f}s (the grade timeout "
            f"plus {HOST_MARGIN_S:.0f}s): something in the workspace blocked the host",
            self.sandbox.name,
        )

    def _grade(self, workspace: Path, task: Task, tests: TaskTests | None) -> GradeResult:
        started = time.perf_counter()
        try:
            source = tests if tests is not None else TaskTests.capture(task)
            poisoned = self._task_changes(task, tests)
            workspace = workspace.resolve()
            findings = audit_change(workspace, task, source.repo_file)  # before restoring
            restored = restore_tests(workspace, task, source)
            verdict = self.verdict(workspace, task, restored.conftests)
            grade = verdict.grade(task, list(restored.actions), time.perf_counter() - started)
        except Exception as exc:  # noqa: BLE001  the boundary: a grade that could not be taken is data
            return failed_grade(
                task, f"grading failed: {type(exc).__name__}: {exc}", self.sandbox.name
            )
        if poisoned:
            return mark_tampered(grade, "the agent rewrote the task's own files: " + poisoned)
        return mark_suspect(grade, findings) if findings else grade

    def verdict(self, workspace: Path, task: Task, conftests: tuple[Path, ...] = ()) -> Verdict:
        """Run this kind's command for `task` once in `workspace` (resolved; its tests restored
        already, `conftests` the restore's conftest list) with a fresh private directory, removed
        afterwards, and read the result. Raises what the run raises. The private directory is
        in memory-backed storage where there is some (`_scratch.memory_scratch`), else in the
        system temp dir."""
        private = Path(tempfile.mkdtemp(prefix="lw-grade-", dir=memory_scratch()))
        try:
            step = self._step(workspace, task, private, conftests)
            result = self.sandbox.run(
                step.argv,
                cwd=workspace,
                timeout_s=task.spec.timeouts.grade,
                writable=step.writable,
                readonly=step.readonly,
                env=step.env,
                network=task.spec.allow_internet,
                channel=step.channel,
            )
            return step.read(result)
        finally:
            shutil.rmtree(private, ignore_errors=True)

    @abstractmethod
    def _step(
        self, workspace: Path, task: Task, private: Path, conftests: tuple[Path, ...]
    ) -> Step:
        """This kind's command for `task` in `workspace`, its files in `private` (fresh, empty)."""

    def _task_changes(self, task: Task, tests: TaskTests | None) -> str:
        """What the agent changed in the task directory (put back now), or ""."""
        if tests is None or self.sandbox.isolated:
            return ""
        changed = tests.changes_on_disk(task)
        if not changed:
            return ""
        lost = tests.write_back(task, changed)
        said = ", ".join(changed[:5]) + (" ..." if len(changed) > 5 else "")
        return said + (f" (could not be put back: {', '.join(lost[:5])})" if lost else "")


@dataclass(frozen=True)
class RunnerGrading:
    """One task's grading by `grader` (pytest, unittest or command), against the copy of its
    tests taken before the agent started."""

    grader: RunGrader
    task: Task
    tests: TaskTests

    def grade(self, workspace: Path) -> GradeResult:
        """`grader.grade(workspace, task, tests)`: never raises."""
        return self.grader.grade(workspace, self.task, self.tests)


def _counts(outcome: Outcome, fail_to_pass: bool, rules: str) -> bool:
    """Whether `outcome` counts as a pass: passed and xfailed do; under the `swebench` rules a
    skipped pass_to_pass test counts as kept too (the harness counts it neither passed nor
    failed, so it never breaks resolution); a skipped fail_to_pass test fails under both."""
    if outcome.counts_as_pass:
        return True
    return rules == "swebench" and not fail_to_pass and outcome is Outcome.SKIPPED


def score_cases(
    task: Task,
    report: JunitReport | None,
    reason: str | None,
    result: CommandResult,
    *,
    restored: list[str],
    duration_s: float,
) -> GradeResult:
    """The grade of one test run: each listed test id's outcome in `report` (missing when
    absent), partial credit over fail_to_pass; invalid, every test counted failed, when
    `reason` says why the run cannot be trusted. Shared by the grader kinds that report
    per-test outcomes."""
    f2p = set(task.spec.fail_to_pass)
    rules = task.spec.grading.rules
    tests = []
    for test_id in task.test_ids:
        case = report.case(test_id) if report is not None else None
        outcome = case.outcome if case is not None else Outcome.MISSING
        tests.append(
            TestResult(
                id=test_id,
                outcome=outcome,
                fail_to_pass=test_id in f2p,
                passed=_counts(outcome, test_id in f2p, rules) and reason is None,
                duration_s=case.duration_s if case else 0.0,
                message=case.message if case else "",
            )
        )
    f2p_passed = sum(t.passed for t in tests if t.fail_to_pass)
    p2p_passed = sum(t.passed for t in tests if not t.fail_to_pass)
    f2p_total, p2p_total = len(task.spec.fail_to_pass), len(task.spec.pass_to_pass)
    return GradeResult(
        task_id=task.id,
        score=f2p_passed / f2p_total,
        resolved=reason is None and f2p_passed == f2p_total and p2p_passed == p2p_total,
        invalid=reason is not None,
        invalid_reason=reason,
        f2p_passed=f2p_passed,
        f2p_total=f2p_total,
        p2p_passed=p2p_passed,
        p2p_total=p2p_total,
        tests=tests,
        collection_errors=list(report.collection_errors) if report else [],
        **_run_fields(result, restored, duration_s),
    )


def whole_grade(
    task: Task,
    value: float,
    reason: str | None,
    result: CommandResult,
    *,
    restored: list[str],
    duration_s: float,
) -> GradeResult:
    """A grade without per-test outcomes: the score is `value` (0.0 when invalid, `reason`
    saying why); resolved at 1.0."""
    score = value if reason is None else 0.0
    return GradeResult(
        task_id=task.id,
        score=score,
        resolved=reason is None and score == 1.0,
        invalid=reason is not None,
        invalid_reason=reason,
        f2p_passed=0,
        f2p_total=0,
        p2p_passed=0,
        p2p_total=0,
        tests=[],
        **_run_fields(result, restored, duration_s),
    )


class _RunFields(TypedDict):
    restored: list[str]
    exit_code: int | None
    timed_out: bool
    sandbox: str
    duration_s: float
    pytest_duration_s: float
    output_tail: str


def _run_fields(result: CommandResult, restored: list[str], duration_s: float) -> _RunFields:
    """What every grade records of its run: the restore's actions, the command's exit and
    sandbox, both durations and the end of its output (stdout, then stderr)."""
    out = result.stdout + ("\n" + result.stderr if result.stderr else "")
    return _RunFields(
        restored=restored,
        exit_code=result.exit_code,
        timed_out=result.timed_out,
        sandbox=result.sandbox,
        duration_s=round(duration_s, 4),
        pytest_duration_s=round(result.duration_s, 4),
        output_tail=out[-_TAIL_CHARS:],
    )
