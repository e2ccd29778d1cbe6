"""Reading the guard's evidence after a test run: was the result forged or cut short?

The guard plugin (scoring/_guard_plugin.py) and the canary tests run inside the test process;
this module judges what they left behind, together with the junit XML and the exit code. A
finding is a reason that starts with `tamper:`; the grade is then invalid and counts as a zero.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from pathlib import Path

from loopwright._fs import read_regular
from loopwright.sandbox import CommandResult
from loopwright.scoring._junit import JunitReport
from loopwright.scoring._kit import Kit
from loopwright.scoring._result import TAMPER_PREFIX, GradeResult
from loopwright.scoring._stream import read_stream, stream_findings
from loopwright.tasks import Task

__all__ = ["failed_grade", "guard_verdict", "mark_tampered"]


def guard_verdict(
    kit: Kit, result: CommandResult, report: JunitReport | None, ids: Collection[str] = ()
) -> str | None:
    """The tamper reason for this run, or None when the guard saw nothing wrong.

    Judged from the outcome stream when the sandbox passed a channel (`result.channel`), held
    against the junit XML for the task's test `ids` and the exit code; else from the guard's
    record file. Not a verdict when the run timed out (the timeout is the reason), when the
    guard never loaded (pytest could not start: no workspace code had run yet), or when the
    process exited normally before pytest finished and before any test ran (a usage error in
    the task's test_cmd): such runs are invalid for their exit code.
    """
    if result.timed_out:
        return None
    if result.channel is not None:
        stream = read_stream(result.channel)
        finding = stream_findings(stream, result.exit_code, report, ids, kit.canaries)
        if finding is not None:
            return f"{TAMPER_PREFIX} {finding}"
        if stream.starts == 0 or not stream.finishes:
            return None
        return _canary_problem(kit, {}, report, junit_only=True)
    if not kit.started_marker.is_file():
        return None
    record = _read_record(kit.record)
    if record is None:
        return (
            f"{TAMPER_PREFIX} the test process ended before pytest finished "
            f"(exit code {result.exit_code}): the code under test stopped it"
        )
    if record.get("finished") is not True:
        return None  # pytest stopped by itself before running tests (a usage error): invalid
    found = record.get("tamper")
    findings = [str(f) for f in found] if isinstance(found, list) else []
    if findings:
        return f"{TAMPER_PREFIX} {findings[0]} while the tests ran"
    status = record.get("exitstatus")
    if status != result.exit_code:
        return (
            f"{TAMPER_PREFIX} the test process exited with code {result.exit_code} "
            f"but pytest finished with {status}"
        )
    if status == 2:
        return f"{TAMPER_PREFIX} the run was interrupted from inside (pytest.exit or KeyboardInterrupt)"
    return _canary_problem(kit, record.get("canaries") or {}, report)


def _read_record(path: Path) -> dict[str, object] | None:
    try:
        data = json.loads(read_regular(path).decode("utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _canary_problem(
    kit: Kit, seen: object, report: JunitReport | None, *, junit_only: bool = False
) -> str | None:
    reported = seen if isinstance(seen, dict) else {}
    for name, expected in () if junit_only else kit.canaries.items():
        got = reported.get(name, "missing")
        if got != expected:
            return (
                f"{TAMPER_PREFIX} canary test {name} was reported {got}, expected {expected}: "
                "test outcomes were forged"
            )
    if report is None:
        return None
    for name, expected in kit.canaries.items():
        case = report.cases.get(name)
        if case is None:
            return (
                f"{TAMPER_PREFIX} the junit XML lacks canary test {name}: pytest did not write it"
            )
        if case.outcome.value != expected:
            return (
                f"{TAMPER_PREFIX} the junit XML reports canary test {name} {case.outcome.value}, "
                f"expected {expected}"
            )
    return None


def failed_grade(task: Task, reason: str, sandbox: str) -> GradeResult:
    """An invalid grade for a run that could not be graded at all, saying why (`sandbox`: the
    name of the sandbox it would have run in). Score 0.0."""
    f2p, p2p = len(task.spec.fail_to_pass), len(task.spec.pass_to_pass)
    return GradeResult(
        task_id=task.id,
        score=0.0,
        resolved=False,
        invalid=True,
        invalid_reason=reason,
        f2p_passed=0,
        f2p_total=f2p,
        p2p_passed=0,
        p2p_total=p2p,
        tests=[],
        exit_code=None,
        sandbox=sandbox,
        duration_s=0.0,
        pytest_duration_s=0.0,
    )


def mark_tampered(grade: GradeResult, finding: str) -> GradeResult:
    """`grade` made invalid for tampering: score 0.0, not resolved, the reason `tamper: finding`."""
    return grade.model_copy(
        update={
            "invalid": True,
            "invalid_reason": f"{TAMPER_PREFIX} {finding}",
            "score": 0.0,
            "resolved": False,
            "tests": [t.model_copy(update={"passed": False}) for t in grade.tests],
            "f2p_passed": 0,
            "p2p_passed": 0,
        }
    )
