"""`[grading] rules`: under "swebench" a skipped pass_to_pass test is kept (as the SWE-bench
harness counts it) while a skipped fail_to_pass test still fails; the default counts both failed."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from loopwright.sandbox import CommandResult
from loopwright.scoring import GradeResult
from loopwright.scoring._frame import score_cases
from loopwright.scoring._junit import JunitCase, JunitReport, Outcome
from loopwright.tasks import GradingTable, Task
from tests.taskfactory import make_calc_task

RESULT = CommandResult(("pytest",), 0, "", "", False, False, 0.1, "local")


def _grade(task: Task, rules: str, outcomes: dict[str, Outcome]) -> GradeResult:
    spec = task.spec.model_copy(update={"grading": GradingTable(rules=rules)})  # type: ignore[arg-type]
    report = JunitReport({i: JunitCase(i, o, 0.0, "") for i, o in outcomes.items()}, ())
    ruled = dataclasses.replace(task, spec=spec)
    return score_cases(ruled, report, None, RESULT, restored=[], duration_s=0.1)


@pytest.mark.parametrize(("rules", "resolved"), [("swebench", True), ("loopwright", False)])
def test_a_skipped_pass_to_pass_test_is_kept_only_under_the_swebench_rules(
    tmp_path: Path, rules: str, resolved: bool
) -> None:
    task = make_calc_task(tmp_path)
    outcomes = {t: Outcome.PASSED for t in task.spec.fail_to_pass}
    outcomes |= {t: Outcome.SKIPPED for t in task.spec.pass_to_pass}
    grade = _grade(task, rules, outcomes)
    assert grade.score == 1.0 and grade.resolved is resolved
    assert grade.p2p_passed == (len(task.spec.pass_to_pass) if resolved else 0)


@pytest.mark.parametrize("rules", ["swebench", "loopwright"])
def test_a_skipped_or_missing_fail_to_pass_test_fails_under_both_rules(
    tmp_path: Path, rules: str
) -> None:
    task = make_calc_task(tmp_path)
    first, second, *rest = task.spec.fail_to_pass
    outcomes = {first: Outcome.SKIPPED, **{t: Outcome.PASSED for t in rest}}
    outcomes |= {t: Outcome.PASSED for t in task.spec.pass_to_pass}
    grade = _grade(task, rules, outcomes)  # `second` is missing
    assert grade.f2p_passed == len(rest) and not grade.resolved
    failed = {t.id for t in grade.tests if not t.passed}
    assert failed == {first, second}


def test_a_missing_pass_to_pass_test_fails_under_the_swebench_rules(tmp_path: Path) -> None:
    task = make_calc_task(tmp_path)
    outcomes = {t: Outcome.PASSED for t in task.spec.fail_to_pass}
    grade = _grade(task, "swebench", outcomes)
    assert grade.score == 1.0 and not grade.resolved and grade.p2p_passed == 0
