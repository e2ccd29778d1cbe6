from __future__ import annotations

import json
from pathlib import Path

import pytest

from loopwright.errors import ConfigError
from loopwright.records import (
    AgentStep,
    CycleAnalyzer,
    CycleRecord,
    ExperimentRecord,
    FailureCategory,
    GateRecord,
    GradeSummary,
    NodeTrace,
    TestOutcomeRecord,
    diff_files,
)
from tests.records.runs import F2P, P2P, Call, RunDir, grade_result, read_call

PATCH = "diff --git a/calc/core.py b/calc/core.py\n--- a/calc/core.py\n+++ b/calc/core.py\n+x\n"
WRITE = ("write_file", '{"path": "calc/core.py", "content": "..."}', True)


def write_reloop_run(path: Path) -> None:
    """study reads the task and writes notes; builder fails the gate twice, passes the third time."""
    run = RunDir(path).start()
    run.agent("study", "researcher", [read_call()], notes=300)
    run.agent("builder", "builder", [read_call(), Call(tools=(WRITE,))], produced=("calc/core.py",))
    run.gate("gate_verify", attempt=1, loops=1)
    bad_write = (WRITE, ("edit_file", '{"path": "../etc"}', False))
    run.agent("builder", "builder", [Call(tools=bad_write)], attempt=2, produced=("calc/core.py",))
    run.gate("gate_verify", attempt=2, loops=2)
    run.agent("builder", "builder", [Call(cached_tokens=50, tools=(WRITE,))], attempt=3)
    run.gate("gate_verify", attempt=3, loops=2, decision="proceed")
    run.end()
    run.diff(PATCH).grade(grade_result(set(F2P + P2P)))
    (path / "instruction.md").write_text("Add mul and div.\n")
    (path / "notes.md").write_text("notes\n")


def builder_step(attempt: int, started: float, end: float, **fields: object) -> AgentStep:
    base: dict[str, object] = {
        "node_id": "builder",
        "role": "builder",
        "attempt": attempt,
        "started_t": started,
        "duration_s": end - started,
        "status": "ok",
        "succeeded": True,
        "error": None,
        "turns": 1,
        "model_errors": 0,
        "tool_calls": 1,
        "tool_errors": 0,
        "input_tokens": 100,
        "output_tokens": 20,
        "cached_tokens": 0,
        "cost_usd": 0.125,
        "notes_chars": 0,
        "read_instruction": False,
        "produced": ["calc/core.py"],
        "summary": "builder done",
    }
    return AgentStep.model_validate(base | fields)


def gate_record(t: float, loops: int, decision: str = "reloop") -> GateRecord:
    passed = decision == "proceed"
    return GateRecord.model_validate(
        {
            "t": t,
            "decision": decision,
            "target": None if passed else "builder",
            "loop_count": loops,
            "max_loops": 3,
            "passed": passed,
            "reason": "all visible tests pass" if passed else "2 tests failed",
        }
    )


def expected_reloop_record() -> CycleRecord:
    steps = [
        AgentStep(
            node_id="study",
            role="researcher",
            attempt=1,
            started_t=1.0,
            duration_s=4.0,
            status="ok",
            succeeded=True,
            error=None,
            turns=1,
            model_errors=0,
            tool_calls=1,
            tool_errors=0,
            input_tokens=100,
            output_tokens=20,
            cached_tokens=0,
            cost_usd=0.125,
            notes_chars=300,
            read_instruction=True,
            produced=[],
            summary="study done",
        ),
        builder_step(
            1,
            6.0,
            11.0,
            turns=2,
            tool_calls=2,
            input_tokens=200,
            output_tokens=40,
            cost_usd=0.25,
            read_instruction=True,
        ),
        builder_step(2, 15.0, 19.0, tool_calls=2, tool_errors=1),
        builder_step(3, 23.0, 26.0, cached_tokens=50, produced=[]),
    ]
    tests = [
        TestOutcomeRecord(id=t, outcome="passed", fail_to_pass=t in F2P, passed=True)
        for t in F2P + P2P
    ]
    grade = GradeSummary(
        score=1.0,
        resolved=True,
        invalid=False,
        invalid_reason=None,
        f2p_passed=2,
        f2p_total=2,
        p2p_passed=1,
        p2p_total=1,
        tests=tests,
        collection_errors=[],
        restored=["removed conftest.py"],
        timed_out=False,
    )
    trace = {
        "study": NodeTrace(
            node_id="study",
            kind="agent",
            role="researcher",
            fired=1,
            attempts=[1],
            statuses=["ok"],
            produced=[],
            duration_s=4.0,
        ),
        "builder": NodeTrace(
            node_id="builder",
            kind="agent",
            role="builder",
            fired=3,
            attempts=[1, 2, 3],
            statuses=["ok", "ok", "ok"],
            produced=["calc/core.py"],
            duration_s=5.0 + 4.0 + 3.0,
        ),
        "gate_verify": NodeTrace(
            node_id="gate_verify",
            kind="gate",
            role="",
            fired=3,
            attempts=[1, 2, 3],
            statuses=["failed", "failed", "ok"],
            produced=[],
            duration_s=6.0,
            decisions=[gate_record(13.0, 1), gate_record(21.0, 2), gate_record(28.0, 2, "proceed")],
            loop_count=2,
        ),
    }
    return CycleRecord(
        run_id="r1",
        task_id="calc-ops",
        task_digest="d1",
        workflow_name="wf",
        workflow_hash="h1",
        model="scripted",
        simulated=False,
        seed=7,
        repetition=0,
        started_at="2025-01-01T00:00:00+00:00",
        run_status="completed",
        run_error=None,
        score_start=0.0,
        score_end=1.0,
        score_delta=1.0,
        steps=steps,
        node_trace=trace,
        gate_loops={"gate_verify": 2},
        grade=grade,
        failure_category=FailureCategory.NONE,
        read_instruction=True,
        diff_files=["calc/core.py"],
        errors=[],
        eval_artifacts=["diff.patch", "events.jsonl", "grade.json", "instruction.md", "notes.md"],
        input_tokens=500,
        output_tokens=100,
        cached_tokens=50,
        total_cost_usd=0.625,
        cost_by_agent={"builder": 0.5, "researcher": 0.125},
        duration_s=30.0,
        experiments=[
            ExperimentRecord(
                id="r1",
                description="workflow wf (h1) on task calc-ops, repetition 0, model scripted",
                score_before=0.0,
                score_after=1.0,
                verdict="pending",
                failure_category=FailureCategory.NONE,
            )
        ],
        frozen_nodes=["gate_verify"],
        mutable_node_ids=["builder", "study"],
    )


def test_reloop_run_gives_the_exact_record(tmp_path: Path) -> None:
    write_reloop_run(tmp_path)
    record = CycleAnalyzer(tmp_path).analyze(
        frozen_nodes=("gate_verify",), mutable_node_ids=("study", "builder")
    )
    assert record == expected_reloop_record()


def test_analysis_is_deterministic_and_ignores_its_own_record(tmp_path: Path) -> None:
    write_reloop_run(tmp_path)
    first = CycleAnalyzer(tmp_path).analyze()
    (tmp_path / "record.json").write_text(first.model_dump_json())
    assert CycleAnalyzer(tmp_path).analyze() == first


def test_unpriced_call_makes_total_cost_unknown_and_drops_that_role(tmp_path: Path) -> None:
    run = RunDir(tmp_path).start()
    run.agent("study", "researcher", [read_call()])
    run.agent("builder", "builder", [Call(cost_usd=None, tools=(WRITE,)), Call()])
    run.end().diff(PATCH).grade(grade_result(set(F2P + P2P)))
    record = CycleAnalyzer(tmp_path).analyze()
    assert record.total_cost_usd is None
    assert record.cost_by_agent == {"researcher": 0.125}
    assert [s.cost_usd for s in record.steps] == [0.125, None]
    assert record.input_tokens == 300


def test_truncated_last_line_is_ignored_and_the_node_is_unfinished(tmp_path: Path) -> None:
    run = RunDir(tmp_path).start()
    run.agent("builder", "builder", [read_call(), Call(tools=(WRITE,))], status=None).close()
    with (tmp_path / "events.jsonl").open("a") as f:
        f.write('{"type": "node_end", "t": 9.0, "node_id": "buil')
    record = CycleAnalyzer(tmp_path).analyze()
    assert record.run_status == "interrupted"
    assert record.grade is None
    assert record.failure_category is FailureCategory.INTERRUPTED
    assert record.duration_s == 5.0  # the last whole event's t
    step = record.steps[0]
    assert (step.status, step.succeeded, step.turns, step.duration_s) == (
        "unfinished",
        False,
        2,
        4.0,
    )
    assert record.errors == ["node builder attempt 1: unfinished"]
    assert record.node_trace["builder"].statuses == ["unfinished"]
    assert record.experiments[0].verdict == "errored"


def test_missing_grade_after_a_completed_run_is_invalid_grade(tmp_path: Path) -> None:
    run = RunDir(tmp_path).start()
    run.agent("builder", "builder", [read_call(), Call(tools=(WRITE,))], produced=("calc/core.py",))
    run.end().diff(PATCH)
    record = CycleAnalyzer(tmp_path).analyze()
    assert record.grade is None
    assert record.score_end == 0.0
    assert record.failure_category is FailureCategory.INVALID_GRADE
    assert "grade.json" not in record.eval_artifacts


def test_unreadable_grade_json_is_recorded_not_raised(tmp_path: Path) -> None:
    run = RunDir(tmp_path).start()
    run.agent("builder", "builder", [read_call(), Call(tools=(WRITE,))])
    run.end().diff(PATCH)
    (tmp_path / "grade.json").write_text('{"schema_version": 1, "sco')
    record = CycleAnalyzer(tmp_path).analyze()
    assert record.grade is None
    assert record.failure_category is FailureCategory.INVALID_GRADE
    assert len(record.errors) == 1
    assert record.errors[0].startswith("grade: grade.json is not JSON")


def test_grade_of_another_schema_version_is_a_config_error(tmp_path: Path) -> None:
    RunDir(tmp_path).start().end()
    raw = json.loads(grade_result(set()).model_dump_json())
    (tmp_path / "grade.json").write_text(json.dumps(raw | {"schema_version": 2}))
    with pytest.raises(ConfigError, match=r"grade\.json has grade schema_version 2"):
        CycleAnalyzer(tmp_path).analyze()


def test_grade_of_another_task_is_a_config_error(tmp_path: Path) -> None:
    RunDir(tmp_path).start().end()
    raw = json.loads(grade_result(set()).model_dump_json())
    (tmp_path / "grade.json").write_text(json.dumps(raw | {"task_id": "other"}))
    with pytest.raises(ConfigError, match="grades task 'other'"):
        CycleAnalyzer(tmp_path).analyze()


def test_missing_events_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"events\.jsonl does not exist"):
        CycleAnalyzer(tmp_path).analyze()


def test_events_without_run_start_are_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "events.jsonl").write_text(
        '{"type": "error", "t": 0, "where": "runner", "message": "x"}\n'
    )
    with pytest.raises(ConfigError, match="does not begin with a run_start"):
        CycleAnalyzer(tmp_path).analyze()


def test_errors_are_grouped_in_first_seen_order(tmp_path: Path) -> None:
    run = RunDir(tmp_path).start()
    run.error("model_call", "rate limited", node_id="builder")
    run.error("tool", "path leaves the workspace", node_id="builder")
    run.error("model_call", "rate limited", node_id="builder")
    run.agent("builder", "builder", [read_call()], status="error", error="RuntimeError: boom")
    run.end("error", error="a node failed")
    record = CycleAnalyzer(tmp_path).analyze()
    assert record.errors == [
        "model_call builder: rate limited (x2)",
        "tool builder: path leaves the workspace",
        "node builder attempt 1 error: RuntimeError: boom",
        "run error: a node failed",
    ]
    assert record.run_error == "a node failed"


def test_gate_with_decisions_but_no_node_start_is_traced(tmp_path: Path) -> None:
    from loopwright.records import GateDecision

    run = RunDir(tmp_path).start()
    run.writer.write(
        GateDecision(
            t=1.0,
            node_id="g",
            decision="exhausted",
            target="builder",
            loop_count=3,
            max_loops=3,
            passed=False,
        )
    )
    run.end()
    record = CycleAnalyzer(tmp_path).analyze()
    trace = record.node_trace["g"]
    assert (trace.kind, trace.fired, trace.attempts, trace.loop_count) == ("gate", 1, [], 3)
    assert record.gate_loops == {"g": 3}


def test_diff_files_reads_git_headers_including_spaces_and_renames() -> None:
    patch = (
        "diff --git a/calc/core.py b/calc/core.py\n"
        "diff --git a/my dir/x y.py b/my dir/x y.py\n"
        "diff --git a/old.py b/new.py\n"
        "+++ b/not-a-header.py\n"
    )
    assert diff_files(patch) == ["calc/core.py", "my dir/x y.py", "new.py"]


def test_node_produced_files_stand_in_for_a_missing_diff(tmp_path: Path) -> None:
    run = RunDir(tmp_path).start()
    run.agent("builder", "builder", [read_call()], produced=("calc/core.py",))
    run.end().grade(grade_result({F2P[0], *P2P}))
    record = CycleAnalyzer(tmp_path).analyze()
    assert record.diff_files == []
    assert record.failure_category is FailureCategory.TESTS_FAILING
    assert record.score_end == 0.5
