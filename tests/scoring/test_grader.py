from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from loopwright import _scratch
from loopwright._scratch import memory_scratch
from loopwright.sandbox import CommandResult
from loopwright.scoring import JunitCase, JunitReport, Outcome, PytestGrader
from loopwright.scoring._grader import _invalid_reason, _Run
from loopwright.tasks import Task, load_task
from tests.scoring.conftest import GradeFn
from tests.taskfactory import GOLD, PARTIAL, SUBTEST_BUG, make_calc_task


def test_gold_scores_one_and_resolves(grade_with: GradeFn) -> None:
    grade = grade_with(GOLD)
    assert (grade.score, grade.resolved, grade.invalid) == (1.0, True, False)
    assert (grade.f2p_passed, grade.f2p_total, grade.p2p_passed, grade.p2p_total) == (6, 6, 2, 2)
    assert all(t.outcome is Outcome.PASSED for t in grade.tests)


def test_untouched_repo_scores_zero_with_the_regressions_passing(grade_with: GradeFn) -> None:
    grade = grade_with()
    assert grade.score == 0.0
    assert not grade.resolved and not grade.invalid
    assert grade.p2p_passed == 2


def test_partial_feature_gets_partial_credit(grade_with: GradeFn) -> None:
    grade = grade_with(PARTIAL)
    assert grade.score == pytest.approx(3 / 6)
    passing = {t.id for t in grade.tests if t.fail_to_pass and t.passed}
    assert passing == {
        "tests/test_ops_hidden.py::test_mul",
        "tests/test_ops_hidden.py::TestMulCase::test_mul_zero",
        "tests/test_ops_hidden.py::TestMulCase::test_mul_table",
    }


def test_failed_subtest_fails_its_parent_test(grade_with: GradeFn) -> None:
    grade = grade_with(SUBTEST_BUG)
    by_id = {t.id: t for t in grade.tests}
    assert by_id["tests/test_ops_hidden.py::TestMulCase::test_mul_table"].outcome is Outcome.FAILED
    assert grade.score == pytest.approx(5 / 6)
    assert not grade.resolved


def test_parametrised_ids_with_spaces_and_brackets_are_graded(grade_with: GradeFn) -> None:
    core = GOLD.replace("return a / b", "return 2 if a == 6 else 0")  # right for [six by [3]] only
    by_id = {t.id: t for t in grade_with(core).tests}
    assert by_id["tests/test_ops_hidden.py::test_div[six by [3]]"].passed
    assert not by_id["tests/test_ops_hidden.py::test_div[one by four]"].passed


def test_a_skip_raised_by_the_code_under_test_counts_as_failed(grade_with: GradeFn) -> None:
    core = GOLD.replace("return a * b", "import pytest; pytest.skip('not today')")
    grade = grade_with(core)
    by_id = {t.id: t for t in grade.tests}
    assert by_id["tests/test_ops_hidden.py::test_mul"].outcome is Outcome.SKIPPED
    assert not by_id["tests/test_ops_hidden.py::test_mul"].passed
    assert grade.score < 1.0


def test_xfail_in_the_hidden_tests_counts_as_passed(tmp_path: Path, grade_with: GradeFn) -> None:
    task = make_calc_task(
        tmp_path / "xf",
        extra_hidden={
            "test_known_hidden.py": "import pytest\n\n@pytest.mark.xfail(reason='known')\ndef test_known():\n    assert False\n"
        },
        extra_f2p=["tests/test_known_hidden.py::test_known"],
    )
    grade = grade_with(GOLD, task=task)
    by_id = {t.id: t for t in grade.tests}
    assert by_id["tests/test_known_hidden.py::test_known"].outcome is Outcome.XFAILED
    assert grade.score == 1.0 and grade.resolved


def test_import_error_in_the_code_scores_zero_not_invalid(grade_with: GradeFn) -> None:
    grade = grade_with("import nonexistent_module_xyz\n")
    assert grade.score == 0.0
    assert not grade.invalid
    assert grade.collection_errors  # every test file failed to import
    assert {t.outcome for t in grade.tests} == {Outcome.MISSING}


def test_a_test_that_hangs_is_failed_by_the_per_test_timeout(
    tmp_path: Path, grade_with: GradeFn
) -> None:
    task = make_calc_task(tmp_path / "slow", per_test=1)
    # Only test_mul multiplies 3 by 4; it hangs, the other tests must still run and pass.
    core = GOLD.replace(
        "return a * b", "import time; time.sleep(60 if (a, b) == (3, 4) else 0); return a * b"
    )
    grade = grade_with(core, task=task)
    by_id = {t.id: t for t in grade.tests}
    assert by_id["tests/test_ops_hidden.py::test_mul"].outcome is Outcome.FAILED
    assert "Timeout" in by_id["tests/test_ops_hidden.py::test_mul"].message
    assert grade.score == 5 / 6
    assert not grade.invalid


def test_a_run_that_hangs_at_import_is_invalid_at_the_grade_timeout(
    tmp_path: Path, grade_with: GradeFn
) -> None:
    task = make_calc_task(tmp_path / "hang", grade_timeout=2)
    grade = grade_with("import time\ntime.sleep(600)\n", task=task)
    assert grade.invalid and grade.timed_out
    assert "timed out" in (grade.invalid_reason or "")
    assert grade.score == 0.0 and not grade.resolved


def test_code_that_exits_the_interpreter_early_makes_the_grade_invalid(grade_with: GradeFn) -> None:
    grade = grade_with(GOLD + "\nimport os\nos._exit(0)\n")
    assert grade.invalid and grade.tampered
    assert "ended before pytest finished" in (grade.invalid_reason or "")
    assert grade.score == 0.0 and not grade.resolved


def test_grade_result_round_trips_through_json(grade_with: GradeFn) -> None:
    grade = grade_with(PARTIAL)
    again = type(grade).model_validate_json(grade.model_dump_json())
    assert again == grade
    assert again.schema_version == 1


def test_grader_runs_in_the_sandbox_it_was_given(grader: PytestGrader, grade_with: GradeFn) -> None:
    assert grade_with(GOLD).sandbox == grader.sandbox.name


def test_the_grades_private_files_are_in_memory_backed_storage_and_removed_after(
    grader: PytestGrader, grade_with: GradeFn, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The kit and the results directory (a handful of files a grade writes and removes) are
    made in `memory_scratch()` where there is one, else in the system temp dir."""
    seen: list[tuple[Path, ...]] = []
    run = type(grader.sandbox).run

    def spy(self: object, *args: object, **kwargs: object) -> CommandResult:
        seen.append(tuple(kwargs["readonly"]) + tuple(kwargs["writable"]))  # type: ignore[arg-type]
        return run(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(type(grader.sandbox), "run", spy)
    memory = memory_scratch()
    assert grade_with(GOLD).score == 1.0
    kit, out = seen[-1]
    assert kit.parent == out.parent and not kit.parent.exists()  # removed after the grade
    assert memory is None or kit.parent.parent == memory
    monkeypatch.setattr(_scratch, "MEMORY_MIN_FREE", 1 << 62)  # none with that much free
    assert memory_scratch() is None
    assert grade_with(GOLD).score == 1.0
    assert seen[-1][0].parent.parent == Path(tempfile.gettempdir())


def test_task_is_not_modified_by_grading(calc_task: Task, grade_with: GradeFn) -> None:
    before = calc_task.digest
    grade_with(GOLD, files={"tests/test_add.py": "def test_add():\n    assert True\n"})
    fresh = type(calc_task)(
        spec=calc_task.spec, root=calc_task.root, instruction=calc_task.instruction
    )
    assert fresh.digest == before


def test_a_broken_pass_to_pass_test_means_not_resolved(grade_with: GradeFn) -> None:
    """Every fail_to_pass passes, so the score is 1.0; a regression still blocks `resolved`."""
    grade = grade_with(GOLD.replace("return a + b", "return a + b if a >= 0 else 0"))
    assert grade.score == 1.0 and not grade.invalid
    assert (grade.p2p_passed, grade.p2p_total) == (1, 2)
    assert not grade.resolved


def _run(exit_code: int, outcome: Outcome) -> _Run:
    result = CommandResult(("pytest",), exit_code, "", "", False, False, 0.1, "local")
    case = JunitCase("tests/test_x.py::test_a", outcome, 0.0, "")
    return _Run(result, JunitReport({case.test_id: case}, ()), None)


def test_an_exit_code_that_contradicts_the_junit_is_invalid() -> None:
    assert "exit code 1 but the junit XML reports no failure" in (
        _invalid_reason(_run(1, Outcome.PASSED)) or ""
    )
    assert "exit code 0 but the junit XML reports failures" in (
        _invalid_reason(_run(0, Outcome.FAILED)) or ""
    )
    assert _invalid_reason(_run(1, Outcome.FAILED)) is None
    assert _invalid_reason(_run(0, Outcome.PASSED)) is None


def test_a_usage_error_in_the_tasks_test_cmd_is_invalid_not_tamper(
    tmp_path: Path, grade_with: GradeFn
) -> None:
    """pytest refuses the options before any workspace code runs: the task is at fault."""
    task = make_calc_task(tmp_path / "badcmd")
    toml = task.root / "task.toml"
    text = toml.read_text().replace(
        "level = 1\n", 'level = 1\ntest_cmd = "python -m pytest --no-such-option"\n', 1
    )
    toml.write_text(text)
    grade = grade_with(GOLD, task=load_task(task.root))
    assert grade.invalid and not grade.tampered, grade.invalid_reason
    assert grade.exit_code == 4
