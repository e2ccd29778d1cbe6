"""The pytest grader: restore the tests, run pytest in the sandbox, parse junit, score with partial
credit. The default implementation of the Grader protocol (scoring/_protocol.py)."""

from __future__ import annotations

import shlex
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from loopwright.sandbox import CommandResult, Sandbox, TaskEnvironment, default_sandbox
from loopwright.scoring._guard import failed_grade, guard_verdict, mark_tampered
from loopwright.scoring._junit import JunitReport, Outcome, parse_junit
from loopwright.scoring._kit import BOOT, RECORD_ENV, Kit, write_kit
from loopwright.scoring._restore import TaskTests, restore_tests
from loopwright.scoring._result import GradeResult, TestResult
from loopwright.tasks import Task, node_files

__all__ = ["PytestGrader"]

_TAIL_CHARS = 2000
# pytest's exit codes: 0 all passed, 1 some failed, 2 interrupted, 3 internal error,
# 4 usage error, 5 no tests collected.
_EXIT_MEANING = {2: "interrupted", 3: "internal error", 4: "usage error", 5: "no tests collected"}


@dataclass(frozen=True, slots=True)
class _Run:
    result: CommandResult
    report: JunitReport | None
    problem: str | None  # why the junit could not be read
    tamper: str | None = None  # what the guard and the canaries say was forged, if anything


class PytestGrader:
    """Grades a workspace against a task's hidden tests, run by pytest (the `Grader` protocol's
    default kind, "pytest"). One PytestGrader may grade many workspaces.

    The rules are the anchors' (SWE-bench, FeatureBench): tests restored from the task, agent
    hooks removed, pytest run with the grader's own config (`-c`, so agent ini files are inert),
    isolated Python (`-I`: no PYTHONPATH, no user site), plugin autoload off, the workspace last
    on `sys.path` (nothing in it can shadow a module pytest or the standard library provides),
    no conftest above the workspace, no bytecode read from or written to the workspace, junit
    (xunit1) written to a fresh private directory and parsed with the standard library. A guard
    plugin and canary tests from a private read-only kit detect a run the code under test
    forged or cut short: such a grade is invalid with a reason starting `tamper:`.
    Grading never raises: any failure, a bad workspace included, is an invalid grade saying why.
    """

    name = "pytest"

    def __init__(self, sandbox: Sandbox | None = None, *, python: str | None = None) -> None:
        """`python` runs the tests: default the sandbox's task environment's interpreter when
        it runs in one (`Sandbox.within`), else loopwright's own."""
        self.sandbox = sandbox if sandbox is not None else default_sandbox()
        self.python = python or self.sandbox.interpreter()

    def capture(self, task: Task) -> PytestGrading:
        """The task's tests copied now (`TaskTests.capture`), to grade a workspace with later.
        Raises OSError when they cannot be read."""
        return PytestGrading(self, task, TaskTests.capture(task))

    def within(self, environment: TaskEnvironment, workspace: Path) -> PytestGrader:
        """A grader for `workspace` whose tests run in `environment` (its interpreter, in this
        grader's sandbox placed in it; see `Sandbox.within`)."""
        return PytestGrader(self.sandbox.within(environment, workspace))

    def grade(self, workspace: Path, task: Task, tests: TaskTests | None = None) -> GradeResult:
        """Restore tests in `workspace` (modifies it), run them, and return the grade.

        `tests` is the copy of the task's tests taken before the agent started (default: read
        the task now). Where the sandbox does not isolate, the task directory is compared with
        that copy: an agent that rewrote the task's tests on disk gets a `tamper:` grade, and
        the task's files are put back so that later runs are not poisoned.
        """
        started = time.perf_counter()
        try:
            source = tests if tests is not None else TaskTests.capture(task)
            poisoned = self._task_changes(task, tests)
            workspace = workspace.resolve()
            restored = restore_tests(workspace, task, source)
            private = Path(tempfile.mkdtemp(prefix="lw-grade-"))
            try:
                run = self._run_pytest(workspace, task, private, restored.conftests)
            finally:
                shutil.rmtree(private, ignore_errors=True)
        except Exception as exc:  # noqa: BLE001  the boundary: a grade that could not be taken is data
            return failed_grade(
                task, f"grading failed: {type(exc).__name__}: {exc}", self.sandbox.name
            )
        grade = _score(task, run, list(restored.actions), time.perf_counter() - started)
        if poisoned:
            return mark_tampered(grade, "the agent rewrote the task's own files: " + poisoned)
        return grade

    def outcomes(
        self, workspace: Path, task: Task, conftests: tuple[Path, ...] = ()
    ) -> tuple[dict[str, Outcome], str | None]:
        """Every case the grader's run of `task` in `workspace` reports, by junit id, with no
        invalid reason; or ({}, why the run is invalid). The tests must be restored already
        (`restore_tests`; `conftests` its conftest list). The same run as `grade` (sandbox,
        private kit, guard, junit parsing, invalid-run rules) for a caller that does not know
        the test ids yet (mining), so it scores nothing. Raises what the run raises."""
        private = Path(tempfile.mkdtemp(prefix="lw-grade-"))
        try:
            run = self._run_pytest(workspace.resolve(), task, private, conftests)
        finally:
            shutil.rmtree(private, ignore_errors=True)
        reason = _invalid_reason(run)
        if reason is not None or run.report is None:
            return {}, reason or "no junit report"
        return {case_id: case.outcome for case_id, case in run.report.cases.items()}, None

    def _task_changes(self, task: Task, tests: TaskTests | None) -> str:
        if tests is None or self.sandbox.isolated:
            return ""
        changed = tests.changes_on_disk(task)
        if changed:
            tests.write_back(task)
        return ", ".join(changed[:5]) + (" ..." if len(changed) > 5 else "")

    def _run_pytest(
        self, workspace: Path, task: Task, private: Path, conftests: tuple[Path, ...]
    ) -> _Run:
        seen = self.sandbox.visible
        kit = write_kit(private, [p.relative_to(workspace) for p in conftests])
        environment = self.sandbox.environment
        paths = environment.import_paths(seen(workspace)) if environment else [seen(workspace)]
        flags = ["-I", "-S", "-B"] if environment else ["-I", "-B"]
        result = self.sandbox.run(
            [self.python, *flags, "-c", BOOT, str(kit.directory), "\n".join(paths),
             *self._pytest_args(seen(workspace), task, kit)],
            cwd=workspace,
            timeout_s=task.spec.timeouts.grade,
            writable=[kit.out],
            readonly=[kit.directory],
            env={"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "LANG": "C.UTF-8", "PYTHONHASHSEED": "0",
                 RECORD_ENV: str(kit.record)},
            network=task.spec.allow_internet,
        )  # fmt: skip
        report, problem = None, None
        if not kit.junit.is_file():
            problem = "pytest wrote no junit XML"
        else:
            try:
                report = parse_junit(kit.junit, canaries=kit.canaries)
            except ValueError as exc:
                problem = str(exc)
        return _Run(result, report, problem, guard_verdict(kit, result, report))

    def _pytest_args(self, workspace: str, task: Task, kit: Kit) -> list[str]:
        extra = shlex.split(task.spec.test_cmd)[3:]  # after "python -m pytest"
        return [
            *extra,
            "-c",
            str(kit.ini),
            "--rootdir",
            workspace,
            "--confcutdir",
            workspace,
            "--import-mode=append",
            "-p",
            "no:cacheprovider",
            "-p",
            "pytest_timeout",
            "-p",
            kit.plugin,
            f"--timeout={task.spec.timeouts.per_test:g}",
            "-o",
            "junit_family=xunit1",
            f"--junitxml={kit.junit}",
            "--continue-on-collection-errors",
            "-q",
            *node_files(task.test_ids),
        ]


@dataclass(frozen=True)
class PytestGrading:
    """One task's grading by `grader`, against the copy of its tests taken before the agent."""

    grader: PytestGrader
    task: Task
    tests: TaskTests

    def grade(self, workspace: Path) -> GradeResult:
        """`grader.grade(workspace, task, tests)`: never raises."""
        return self.grader.grade(workspace, self.task, self.tests)


def _invalid_reason(run: _Run) -> str | None:
    result, report = run.result, run.report
    if result.timed_out:
        return f"pytest timed out after {result.duration_s:.0f}s (the grade timeout)"
    if run.tamper is not None:
        return run.tamper
    if report is None:
        return f"{run.problem} (exit code {result.exit_code})"
    if report.empty:
        return f"no test results parsed (exit code {result.exit_code})"
    code = result.exit_code
    if code in _EXIT_MEANING:
        return f"pytest exit code {code} ({_EXIT_MEANING[code]})"
    if code == 0 and report.any_failure:
        return "tamper: exit code 0 but the junit XML reports failures: results are not trustworthy"
    if code == 1 and not report.any_failure:
        return (
            "tamper: exit code 1 but the junit XML reports no failure: results are not trustworthy"
        )
    if code not in (0, 1):
        return f"pytest ended abnormally (exit code {code})"
    return None


def _score(task: Task, run: _Run, restored: list[str], duration_s: float) -> GradeResult:
    return score_cases(
        task,
        run.report,
        _invalid_reason(run),
        run.result,
        restored=restored,
        duration_s=duration_s,
    )


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
    cases = report.cases if report is not None else {}
    f2p = set(task.spec.fail_to_pass)
    rules = task.spec.grading.rules
    tests = []
    for test_id in task.test_ids:
        case = cases.get(test_id)
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
    out = result.stdout + ("\n" + result.stderr if result.stderr else "")
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
        restored=restored,
        exit_code=result.exit_code,
        timed_out=result.timed_out,
        sandbox=result.sandbox,
        duration_s=round(duration_s, 4),
        pytest_duration_s=round(result.duration_s, 4),
        output_tail=out[-_TAIL_CHARS:],
    )
