"""The grader kinds besides pytest, chosen by a task's `[grading]` table: `unittest` (its
verbose output parsed) and `command` (any language: a junit file, a reward file, or the exit
code), and `grader_for`, which picks a task's kind.

Both restore the hidden tests and neutralise hooks exactly as the pytest grader does
(`restore_tests`), run in the grader's sandbox with the grade timeout, and never raise. What
they cannot do is what the pytest grader's guard plugin and canaries do: watch the test process
from inside. docs/task-format.md ("[grading]") says what holds against a hostile agent.
"""

from __future__ import annotations

import math
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from loopwright.sandbox import CommandResult, Sandbox, TaskEnvironment, default_sandbox
from loopwright.scoring._grader import PytestGrader, score_cases
from loopwright.scoring._guard import failed_grade, mark_tampered
from loopwright.scoring._junit import JunitReport, parse_junit
from loopwright.scoring._protocol import Grader
from loopwright.scoring._restore import TaskTests, restore_tests
from loopwright.scoring._result import TAMPER_PREFIX, GradeResult
from loopwright.scoring._unittest import UnittestReport, parse_unittest
from loopwright.tasks import Task

__all__ = ["OUTPUT_ENV", "CommandGrader", "RunnerGrading", "UnittestGrader", "grader_for"]

OUTPUT_ENV = "LOOPWRIGHT_OUTPUT"
"""The variable naming the command's private output directory (outside the workspace, fresh
and empty for every grade): where `junit` and `reward` files are read from."""

_TAIL_CHARS = 2000
_REWARD_CAP = 64  # bytes: a reward file holds one number


def grader_for(task: Task, sandbox: Sandbox | None = None) -> Grader:
    """The grader of the kind `task.toml`'s `[grading] runner` names, running in `sandbox`
    (default: the default sandbox): pytest (the default), unittest or command."""
    runner = task.spec.grading.runner
    if runner == "unittest":
        return UnittestGrader(sandbox)
    if runner == "command":
        return CommandGrader(sandbox)
    return PytestGrader(sandbox)


class _RunnerGrader:
    """What the unittest and command graders share: restore, run in a private directory, score."""

    name: ClassVar[str]

    def __init__(self, sandbox: Sandbox | None = None, *, python: str | None = None) -> None:
        """`python` runs the tests (unittest) or is `$PYTHON` (command): default the sandbox's
        interpreter (a task environment's when it runs in one)."""
        self.sandbox = sandbox if sandbox is not None else default_sandbox()
        self.python = python or self.sandbox.interpreter()

    def capture(self, task: Task) -> RunnerGrading:
        """The task's tests copied now (`TaskTests.capture`). Raises OSError when unreadable."""
        return RunnerGrading(self, task, TaskTests.capture(task))

    def within(self, environment: TaskEnvironment, workspace: Path) -> _RunnerGrader:
        """A grader of this kind for `workspace`, running in `environment` (`Sandbox.within`)."""
        return type(self)(self.sandbox.within(environment, workspace))

    def grade(self, workspace: Path, task: Task, tests: TaskTests | None = None) -> GradeResult:
        """Restore tests in `workspace` (modifies it), run this kind's command, return the grade.
        As `PytestGrader.grade`: an agent that rewrote the task's files on disk (unsandboxed)
        gets a `tamper:` grade and the files are put back. Never raises."""
        started = time.perf_counter()
        try:
            source = tests if tests is not None else TaskTests.capture(task)
            poisoned = self._task_changes(task, tests)
            workspace = workspace.resolve()
            restored = list(restore_tests(workspace, task, source).actions)
            private = Path(tempfile.mkdtemp(prefix="lw-grade-"))
            try:
                grade = self._run(workspace, task, private, restored, started)
            finally:
                shutil.rmtree(private, ignore_errors=True)
        except Exception as exc:  # noqa: BLE001  the boundary: a grade that could not be taken is data
            return failed_grade(
                task, f"grading failed: {type(exc).__name__}: {exc}", self.sandbox.name
            )
        if poisoned:
            return mark_tampered(grade, "the agent rewrote the task's own files: " + poisoned)
        return grade

    def _task_changes(self, task: Task, tests: TaskTests | None) -> str:
        if tests is None or self.sandbox.isolated:
            return ""
        changed = tests.changes_on_disk(task)
        if changed:
            tests.write_back(task)
        return ", ".join(changed[:5]) + (" ..." if len(changed) > 5 else "")

    def _run(
        self, workspace: Path, task: Task, private: Path, restored: list[str], started: float
    ) -> GradeResult:
        raise NotImplementedError


@dataclass(frozen=True)
class RunnerGrading:
    """One task's grading by a unittest or command grader, against the tests captured before."""

    grader: _RunnerGrader
    task: Task
    tests: TaskTests

    def grade(self, workspace: Path) -> GradeResult:
        """`grader.grade(workspace, task, tests)`: never raises."""
        return self.grader.grade(workspace, self.task, self.tests)


class UnittestGrader(_RunnerGrader):
    """Runs `python -m unittest -v -b` on the modules of the task's test ids (`pkg.mod.Class.test`
    -> `pkg.mod`) in the workspace, and reads per-test outcomes from its verbose output.

    Invalid when the run timed out, printed no results or more than the output cap, or ended
    without its `Ran N tests` summary (the code under test cut it short: `tamper:`), or when
    the number of tests its lines name differs from that N, or its exit code contradicts the
    outcomes it printed (both `tamper:`: lines were forged)."""

    name = "unittest"

    def _run(
        self, workspace: Path, task: Task, private: Path, restored: list[str], started: float
    ) -> GradeResult:
        modules = list(dict.fromkeys(test_id.rsplit(".", 2)[0] for test_id in task.test_ids))
        result = self.sandbox.run(
            [self.python, "-B", "-E", "-s", "-m", "unittest", "-v", "-b", *modules],
            cwd=workspace,
            timeout_s=task.spec.timeouts.grade,
            env={"LANG": "C.UTF-8", "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1"},
            network=task.spec.allow_internet,
        )
        parsed = parse_unittest(result.stderr)
        return score_cases(
            task,
            parsed.report,
            _unittest_problem(result, parsed),
            result,
            restored=restored,
            duration_s=time.perf_counter() - started,
        )


def _unittest_problem(result: CommandResult, parsed: UnittestReport) -> str | None:
    report = parsed.report
    if result.timed_out:
        return f"unittest timed out after {result.duration_s:.0f}s (the grade timeout)"
    if result.truncated:
        return "unittest's output was cut at the output cap: its results cannot be read"
    if parsed.ran is None:
        return (
            f"{TAMPER_PREFIX} the test process ended before unittest finished "
            f"(exit code {result.exit_code}): the code under test stopped it"
        )
    if parsed.ran != parsed.reported:
        return (
            f"{TAMPER_PREFIX} unittest ran {parsed.ran} tests but its output names "
            f"{parsed.reported}: test lines were forged"
        )
    if report.empty:
        return f"no test results parsed (exit code {result.exit_code})"
    if result.exit_code == 0 and report.any_failure:
        return f"{TAMPER_PREFIX} exit code 0 but unittest reported failures"
    if result.exit_code != 0 and not report.any_failure:
        return f"{TAMPER_PREFIX} exit code {result.exit_code} but unittest reported no failure"
    return None


class CommandGrader(_RunnerGrader):
    """Runs the task's `[grading] command` with `sh -c` in the workspace, with `$PYTHON` (the
    sandbox's interpreter) and `$LOOPWRIGHT_OUTPUT` (a fresh private directory outside the
    workspace, the one place besides the workspace it may write) set.

    Per-test outcomes come from the junit XML file `junit` under `$LOOPWRIGHT_OUTPUT` (ids
    `classname.name`), or the score from the reward file `reward` there (a number in [0, 1];
    resolved at 1.0), or with neither from the exit code (0: 1.0, else 0.0). A timed-out run
    and a junit or reward file that is missing or garbled make the grade invalid, not zero.
    """

    name = "command"

    def _run(
        self, workspace: Path, task: Task, private: Path, restored: list[str], started: float
    ) -> GradeResult:
        table = task.spec.grading
        out = private / "out"
        out.mkdir()
        result = self.sandbox.run(
            ["sh", "-c", table.command or "false"],
            cwd=workspace,
            timeout_s=task.spec.timeouts.grade,
            writable=[out],
            env={
                "LANG": "C.UTF-8",
                "PYTHONHASHSEED": "0",
                "PYTHONDONTWRITEBYTECODE": "1",
                "PYTHON": self.python,
                OUTPUT_ENV: str(out),
            },
            network=task.spec.allow_internet,
        )
        duration = time.perf_counter() - started
        if table.junit is not None:
            report, reason = _read_junit(out, table.junit, result)
            return score_cases(task, report, reason, result, restored=restored, duration_s=duration)
        if table.reward is not None:
            value, reason = _read_reward(out, table.reward, result)
        else:
            value = 1.0 if result.exit_code == 0 else 0.0
            reason = _timeout(result)
        return _whole_grade(task, value, reason, result, restored, duration)


def _timeout(result: CommandResult) -> str | None:
    if result.timed_out:
        return f"the grading command timed out after {result.duration_s:.0f}s (the grade timeout)"
    return None


def _read_junit(
    out: Path, rel: str, result: CommandResult
) -> tuple[JunitReport | None, str | None]:
    reason = _timeout(result)
    if reason is not None:
        return None, reason
    path = out / rel
    if not path.is_file():
        return (
            None,
            f"the command wrote no junit XML at ${OUTPUT_ENV}/{rel} (exit code {result.exit_code})",
        )
    try:
        report = parse_junit(path, node_ids=False)
    except ValueError as exc:
        return None, str(exc)
    if report.empty:
        return report, f"no test results in the junit XML (exit code {result.exit_code})"
    return report, None


def _read_reward(out: Path, rel: str, result: CommandResult) -> tuple[float, str | None]:
    reason = _timeout(result)
    if reason is not None:
        return 0.0, reason
    path = out / rel
    if not path.is_file():  # a regular file: a FIFO or a device is never read
        return (
            0.0,
            f"the command wrote no reward file at ${OUTPUT_ENV}/{rel} (exit code {result.exit_code})",
        )
    with path.open("rb") as handle:
        raw = handle.read(_REWARD_CAP + 1)
    try:
        value = float(raw.decode("utf-8").strip())
    except (UnicodeDecodeError, ValueError):
        value = math.nan
    if len(raw) > _REWARD_CAP or not 0.0 <= value <= 1.0:
        return 0.0, f"the reward file does not hold a number in [0, 1]: {raw[:_REWARD_CAP]!r}"
    return value, None


def _whole_grade(
    task: Task,
    value: float,
    reason: str | None,
    result: CommandResult,
    restored: list[str],
    duration_s: float,
) -> GradeResult:
    """A grade without per-test outcomes: the score is `value` (0.0 when invalid)."""
    out = result.stdout + ("\n" + result.stderr if result.stderr else "")
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
        restored=restored,
        exit_code=result.exit_code,
        timed_out=result.timed_out,
        sandbox=result.sandbox,
        duration_s=round(duration_s, 4),
        pytest_duration_s=round(result.duration_s, 4),
        output_tail=out[-_TAIL_CHARS:],
    )
