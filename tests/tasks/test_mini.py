"""The bundled `mini` benchmark meets the issue's bar (static checks; grading is in tests/scoring)."""

from __future__ import annotations

from loopwright.tasks import FailureKind, load_benchmark


def test_mini_has_at_least_six_tasks_at_each_level() -> None:
    bench = load_benchmark("mini")
    levels = [t.level for t in bench.tasks]
    assert levels.count(1) >= 6
    assert levels.count(2) >= 6


def test_every_mini_task_has_five_hidden_fail_to_pass_tests_and_two_flawed_variants() -> None:
    for task in load_benchmark("mini").tasks:
        hidden = [
            t
            for t in task.spec.fail_to_pass
            if (task.hidden_tests_dir / t.split("::")[0].removeprefix("tests/")).is_file()
        ]
        assert len(hidden) >= 5, task.id
        assert task.spec.pass_to_pass, task.id
        assert len(task.spec.flawed) >= 2, task.id
        assert task.solution_dir is not None, task.id
        visible = list((task.repo_dir / task.spec.test_dir).glob("test_*.py"))
        assert visible, task.id


def test_mini_flawed_variants_cover_several_failure_kinds() -> None:
    kinds = {v.kind for t in load_benchmark("mini").tasks for v in t.spec.flawed}
    assert {
        FailureKind.IMPORT_ERROR,
        FailureKind.MISSED_EDGE_CASE,
        FailureKind.PARTIAL_FEATURE,
        FailureKind.BROKEN_REGRESSION,
    } <= kinds
