"""Grading a workspace with a brief's hidden checks, and grading the briefs themselves.

`BriefGrader` is the A/B harness's kind of `scoring.Grader`: it runs `_checkrun.py` in the
sandbox with the workspace on its import path (the checks import the produced code and call
it) and returns a `GradeResult` with one test per check: the score (correctness) is the
fraction of checks passed. A report the produced code forged (a check runner function or a
check replaced, canaries with the wrong outcome, a second report) is a `tamper:` grade.
`run_checks` grades one workspace for a brief; `validate_brief` grades the untouched seed, the
known-good and every known-bad solution, so that a brief whose checks cannot tell right from
wrong is caught before it measures anything.
"""

from __future__ import annotations

import json
import secrets
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from pydantic import BaseModel, ConfigDict

from loopwright.harness._briefs import Brief, check_names
from loopwright.harness._rubric import CORRECTNESS_GATE_FLOOR
from loopwright.records import GradeSummary, forfeited
from loopwright.sandbox import CommandResult, Sandbox, create_workspace, remove_workspace
from loopwright.scoring import GradeResult, Outcome, TestResult, mark_tampered
from loopwright.tasks import Task, apply_overlay

__all__ = [
    "BRIEF_GRADER",
    "BriefGrader",
    "BriefGrading",
    "BriefValidation",
    "CheckOutcome",
    "CheckReport",
    "run_checks",
    "tamper_reason",
    "validate_brief",
]

BRIEF_GRADER = "brief-checks"
CHECKS_FILE = "checks.py"
RUNNER = Path(__file__).with_name("_checkrun.py")
_RUNNER_SOURCE = RUNNER.read_text(encoding="utf-8")
PER_CHECK_S = 10.0
_TAIL = 1_000


class CheckOutcome(BaseModel):
    """One hidden check: passed, or the error it failed with."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    passed: bool
    error: str | None = None


@dataclass(frozen=True, slots=True)
class CheckReport:
    """Every check of the brief, in file order (a check that never ran counts as failed)."""

    checks: tuple[CheckOutcome, ...]

    @property
    def correctness(self) -> float:
        """Checks passed over checks owed, in [0, 1]."""
        return sum(c.passed for c in self.checks) / len(self.checks)

    @staticmethod
    def of(grade: GradeResult | GradeSummary) -> CheckReport:
        """The checks of a brief's grade (grade.json, or a CycleRecord's summary of it): a
        failed check's error is its message, or the tamper reason for every check of a
        tampered grade (which passes none)."""
        reason = tamper_reason(grade)
        return CheckReport(
            tuple(
                CheckOutcome(
                    name=t.id,
                    passed=t.passed,
                    error=None if t.passed else (reason or t.message or None),
                )
                for t in grade.tests
            )
        )


def tamper_reason(grade: GradeResult | GradeSummary) -> str | None:
    """The grade's `tamper:` or `suspect:` reason (`records.forfeited`), or None when it is
    neither."""
    reason = grade.invalid_reason or ""
    return reason if grade.invalid and forfeited(reason) else None


@dataclass(frozen=True)
class BriefGrader:
    """Grades a workspace with the hidden checks of the brief the task was made from
    (`Brief.task()`: `checks.py` beside its `repo/`), in `sandbox`. Implements
    `scoring.Grader`; picklable."""

    sandbox: Sandbox
    name: ClassVar[str] = BRIEF_GRADER

    def capture(self, task: Task) -> BriefGrading:
        """The brief's checks.py read now (before the agent): what is graded later is this
        copy. Raises OSError when it cannot be read, ConfigError when it does not parse."""
        source = (task.root / CHECKS_FILE).read_text(encoding="utf-8")
        names = check_names(source, task.root / CHECKS_FILE)
        return BriefGrading(self.sandbox, task, source, names)


@dataclass(frozen=True)
class BriefGrading:
    """One brief's grading: its checks' source and names, captured before the agent ran."""

    sandbox: Sandbox
    task: Task
    source: str
    names: tuple[str, ...]

    def grade(self, workspace: Path) -> GradeResult:
        """Run the checks against `workspace` within the brief's check timeout (each check at
        most PER_CHECK_S). Never raises for what the produced code does: a crash, a hang or
        missing output fails the checks that did not report; a forged report is a `tamper:`
        grade; so is a checks.py the agent rewrote on disk (it is put back)."""
        started = time.perf_counter()
        run = _ChecksRun.of(self, workspace)
        grade = _grade_result(self, run, time.perf_counter() - started)
        tamper = run.tamper or self._rewritten()
        return grade if tamper is None else mark_tampered(grade, tamper)

    def _rewritten(self) -> str | None:
        """Where the sandbox does not isolate, what an agent did to the brief's checks.py."""
        if self.sandbox.isolated:
            return None
        path = self.task.root / CHECKS_FILE
        try:
            now = path.read_text(encoding="utf-8")
        except OSError:
            now = None
        if now == self.source:
            return None
        path.write_text(self.source, encoding="utf-8")  # later cells must not be poisoned
        return f"the agent rewrote the brief's {CHECKS_FILE}"


@dataclass(frozen=True)
class _ChecksRun:
    result: CommandResult
    reported: dict[str, CheckOutcome]
    tamper: str | None

    @staticmethod
    def of(grading: BriefGrading, workspace: Path) -> _ChecksRun:
        """Run the check runner on `workspace` in the sandbox and judge its report."""
        spec = grading.task.spec
        nonce = secrets.token_hex(16)
        token = secrets.token_hex(8)
        canaries = {f"lw_canary_{token}_pass": "passed", f"lw_canary_{token}_fail": "failed"}
        settings = {"canaries": canaries, "n": 10 + secrets.randbelow(90)}
        per_check = min(PER_CHECK_S, spec.timeouts.grade)
        python = grading.sandbox.python or sys.executable  # a container runs its own Python
        argv = [python, "-I", "-S", "-B", "-c", _RUNNER_SOURCE, str(workspace),
                f"{per_check:g}"]  # fmt: skip
        stdin = "\n".join(
            [nonce, json.dumps(list(grading.names)), json.dumps(settings), grading.source]
        )
        result = grading.sandbox.run(
            argv, cwd=workspace, timeout_s=spec.timeouts.grade, stdin=stdin
        )
        return _verdict(result, nonce, canaries)


def _verdict(result: CommandResult, nonce: str, canaries: dict[str, str]) -> _ChecksRun:
    """The outcomes the runner reported and what says they were forged, if anything."""
    lines = [line for line in result.stdout.splitlines() if line.startswith(nonce)]
    if not lines:
        return _ChecksRun(result, {}, None)  # no report: the checks did not run
    if len(lines) > 1:
        return _ChecksRun(result, {}, "the check report was written more than once: one is forged")
    try:
        raw = json.loads(lines[0][len(nonce) :])
        outcomes = [CheckOutcome.model_validate(item) for item in raw.get("checks", [])]
        seen, findings = dict(raw.get("canaries", {})), [str(f) for f in raw.get("tamper", [])]
    except (ValueError, TypeError, AttributeError):
        return _ChecksRun(result, {}, None)  # no readable report: the checks did not run
    reported = {o.name: o for o in outcomes}
    if findings:
        return _ChecksRun(result, reported, f"{findings[0]} while the checks ran")
    for name, expected in canaries.items():
        got = seen.get(name, "missing")
        if got != expected:
            tamper = (
                f"canary check {name} was reported {got}, expected {expected}: "
                "check outcomes were forged"
            )
            return _ChecksRun(result, reported, tamper)
    return _ChecksRun(result, reported, None)


def _grade_result(grading: BriefGrading, run: _ChecksRun, duration_s: float) -> GradeResult:
    result, timeout = run.result, grading.task.spec.timeouts.grade
    if result.timed_out:
        missing = f"the checks were killed after {timeout:g}s"
    else:
        missing = f"did not run (exit code {result.exit_code}): {result.stderr[-_TAIL:].strip()}"
    tests = [_test(name, run.reported.get(name), missing) for name in grading.names]
    passed = sum(t.passed for t in tests)
    out = result.stdout + ("\n" + result.stderr if result.stderr else "")
    return GradeResult(
        task_id=grading.task.id,
        score=passed / len(tests),
        resolved=passed == len(tests),
        invalid=False,
        f2p_passed=passed,
        f2p_total=len(tests),
        p2p_passed=0,
        p2p_total=0,
        tests=tests,
        exit_code=result.exit_code,
        timed_out=result.timed_out,
        sandbox=result.sandbox,
        duration_s=round(duration_s, 4),
        pytest_duration_s=round(result.duration_s, 4),
        output_tail=out[-_TAIL:],
    )


def _test(name: str, reported: CheckOutcome | None, missing: str) -> TestResult:
    if reported is None:
        return TestResult(
            id=name, outcome=Outcome.MISSING, fail_to_pass=True, passed=False, message=missing
        )
    outcome = Outcome.PASSED if reported.passed else Outcome.FAILED
    return TestResult(
        id=name,
        outcome=outcome,
        fail_to_pass=True,
        passed=reported.passed,
        message=reported.error or "",
    )


def run_checks(brief: Brief, workspace: Path, sandbox: Sandbox) -> CheckReport:
    """Grade `workspace` with the brief's hidden checks, in `sandbox` (see BriefGrading.grade).
    Deterministic for deterministic produced code."""
    return CheckReport.of(BriefGrader(sandbox).capture(brief.task()).grade(workspace))


class BriefValidation(BaseModel):
    """How the brief's checks grade its seed, its known-good and its known-bad solutions, and
    the problems found: `ok` when the good one scores 1.0, every bad one less, and the
    untouched seed below the correctness gate."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    brief: str
    seed: float
    good: float
    bad: dict[str, float]
    problems: list[str]

    @property
    def ok(self) -> bool:
        return not self.problems


def validate_brief(brief: Brief, sandbox: Sandbox) -> BriefValidation:
    """Grade the seed, the solution and each flawed overlay, each in a fresh workspace."""
    seed = _grade(brief, sandbox, None)
    good = _grade(brief, sandbox, brief.solution_dir)
    bad = {f.name: _grade(brief, sandbox, brief.flawed_dir(f.name)) for f in brief.spec.flawed}
    problems = []
    if good < 1.0:
        problems.append(f"the known-good solution scores {good:.3f}, not 1.0")
    problems += [
        f"the checks cannot tell the known-bad {name!r} from the known-good (it scores 1.0)"
        for name, score in bad.items()
        if score >= 1.0
    ]
    if seed >= CORRECTNESS_GATE_FLOOR:
        problems.append(
            f"the untouched seed already scores {seed:.3f} (gate {CORRECTNESS_GATE_FLOOR})"
        )
    return BriefValidation(brief=brief.id, seed=seed, good=good, bad=bad, problems=problems)


def _grade(brief: Brief, sandbox: Sandbox, overlay: Path | None) -> float:
    scratch = Path(tempfile.mkdtemp(prefix="lw-brief-"))
    try:
        workspace = create_workspace(brief.repo_dir, scratch)
        try:
            if overlay is not None:
                apply_overlay(overlay, workspace.path)
            return run_checks(brief, workspace.path, sandbox).correctness
        finally:
            remove_workspace(workspace)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
