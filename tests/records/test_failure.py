from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from loopwright.records import CycleAnalyzer, FailureCategory, NodeEnd, NodeStart
from loopwright.scoring import Outcome
from tests.records.runs import F2P, P2P, Call, RunDir, grade_result, read_call

PATCH = "diff --git a/calc/core.py b/calc/core.py\n+x\n"
WRITE = ("write_file", '{"path": "calc/core.py", "content": "..."}', True)
ALL = set(F2P + P2P)


def builder_run(path: Path, calls: list[Call] | None = None, **agent: object) -> RunDir:
    """A run whose builder reads the task and writes calc/core.py (unless told otherwise)."""
    run = RunDir(path).start()
    run.agent("builder", "builder", calls or [read_call(), Call(tools=(WRITE,))], **agent)  # type: ignore[arg-type]
    return run


def resolved(p: Path) -> None:
    builder_run(p).end().diff(PATCH).grade(grade_result(ALL))


def resolved_without_reading(p: Path) -> None:
    builder_run(p, [Call(tools=(WRITE,))]).end().diff(PATCH).grade(grade_result(ALL))


def invalid_grade(p: Path) -> None:
    run = builder_run(p, status="error", error="boom").end("error", "boom").diff(PATCH)
    run.grade(grade_result(set(), invalid_reason="pytest timed out"))


def agent_error(p: Path) -> None:
    # The model failed on its first turn: the agent never read the task, but it broke first.
    run = builder_run(p, [Call(error="ModelError: 500")], status="error", error="ModelError: 500")
    run.end("error").grade(grade_result(set()))


def runner_error(p: Path) -> None:
    run = builder_run(p).error("runner", "KeyError: 'x'").end("error", "KeyError: 'x'")
    run.diff(PATCH).grade(grade_result(set(P2P)))


def interrupted(p: Path) -> None:
    builder_run(p, status=None).close()


def did_not_read(p: Path) -> None:
    # It wrote code and ran out of time, but it never looked at the instruction.
    run = builder_run(p, [Call(tools=(WRITE,))], status="timeout", error="node timed out")
    run.end("timeout").diff(PATCH).grade(grade_result(set(P2P)))


def failed_read_is_not_a_read(p: Path) -> None:
    bad = Call(tools=(("read_file", '{"path": "/x/instruction.md"}', False),))
    builder_run(p, [bad, Call(tools=(WRITE,))]).end().diff(PATCH).grade(grade_result(set(P2P)))


def run_timeout(p: Path) -> None:
    builder_run(p).end("timeout").diff(PATCH).grade(grade_result(set(P2P)))


def node_timeout(p: Path) -> None:
    run = builder_run(p, status="timeout", error="node builder timed out after 60s")
    run.end().diff(PATCH).grade(grade_result(set(P2P)))


def max_turns(p: Path) -> None:
    builder_run(p, status="max_turns").end().diff(PATCH).grade(grade_result({F2P[0], *P2P}))


def no_change(p: Path) -> None:
    builder_run(p, [read_call()]).end().diff("").grade(grade_result(set(P2P)))


def syntax_error(p: Path) -> None:
    err = "tests/test_calc.py: E   File 'calc/core.py', line 3\nE   SyntaxError: invalid syntax"
    missing = dict.fromkeys(F2P + P2P, Outcome.MISSING)
    grade = grade_result(set(), outcomes=missing, collection_errors=(err,))
    builder_run(p).end().diff(PATCH).grade(grade)


def import_error(p: Path) -> None:
    err = "ImportError while importing test module 'tests/test_calc.py'.\nE   ModuleNotFoundError"
    grade = grade_result(set(), collection_errors=(err,))
    builder_run(p).end().diff(PATCH).grade(grade)


def every_test_missing(p: Path) -> None:
    missing = dict.fromkeys(F2P + P2P, Outcome.MISSING)
    builder_run(p).end().diff(PATCH).grade(grade_result(set(), outcomes=missing))


def regression(p: Path) -> None:
    builder_run(p).end().diff(PATCH).grade(grade_result(set(F2P)))


def partial(p: Path) -> None:
    builder_run(p).end().diff(PATCH).grade(grade_result({F2P[0], *P2P}))


def fn_only_run_is_not_blamed_for_reading(p: Path) -> None:
    # No agent ran (a function node wrote the code), so nobody could have read the task.
    run = RunDir(p).start()
    run.writer.write(NodeStart(t=1.0, node_id="apply", kind="fn", attempt=1))
    run.writer.write(
        NodeEnd(t=2.0, node_id="apply", attempt=1, status="ok", duration_s=1.0, produced=["a.py"])
    )
    run.end().diff(PATCH).grade(grade_result(set(P2P)))


CASES: list[tuple[Callable[[Path], None], FailureCategory]] = [
    (resolved, FailureCategory.NONE),
    (resolved_without_reading, FailureCategory.NONE),
    (invalid_grade, FailureCategory.INVALID_GRADE),
    (agent_error, FailureCategory.AGENT_ERROR),
    (runner_error, FailureCategory.AGENT_ERROR),
    (interrupted, FailureCategory.INTERRUPTED),
    (did_not_read, FailureCategory.DID_NOT_READ_TASK),
    (failed_read_is_not_a_read, FailureCategory.DID_NOT_READ_TASK),
    (run_timeout, FailureCategory.RUN_TIMEOUT),
    (node_timeout, FailureCategory.RUN_TIMEOUT),
    (max_turns, FailureCategory.MAX_TURNS),
    (no_change, FailureCategory.NO_CHANGE),
    (syntax_error, FailureCategory.SYNTAX_ERROR),
    (import_error, FailureCategory.IMPORT_ERROR),
    (every_test_missing, FailureCategory.IMPORT_ERROR),
    (regression, FailureCategory.REGRESSION),
    (partial, FailureCategory.TESTS_FAILING),
    (fn_only_run_is_not_blamed_for_reading, FailureCategory.TESTS_FAILING),
]


@pytest.mark.parametrize(("write", "category"), CASES, ids=[c[0].__name__ for c in CASES])
def test_run_gets_its_failure_category(
    tmp_path: Path, write: Callable[[Path], None], category: FailureCategory
) -> None:
    write(tmp_path)
    assert CycleAnalyzer(tmp_path).analyze().failure_category is category


def test_every_category_is_reachable() -> None:
    assert {c for _, c in CASES} == set(FailureCategory)


@pytest.mark.parametrize(
    ("write", "errored"), [(agent_error, 1), (interrupted, 1), (invalid_grade, 0), (partial, 0)]
)
def test_only_broken_runs_count_as_errored(
    tmp_path: Path, write: Callable[[Path], None], errored: int
) -> None:
    write(tmp_path)
    record = CycleAnalyzer(tmp_path).analyze()
    assert record.experiments[0].verdict == ("errored" if errored else "pending")
