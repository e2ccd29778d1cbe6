"""The inner loop end to end with a scripted model: read, write wrong code, fail the gate, get the
feedback, fix it, pass. The CycleRecord must say exactly that."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from loopwright.evaluation import EvalSettings, Evaluator, InnerLoop, TaskRunSpec, run_task
from loopwright.models import DEFAULT_PRICES, Message, Reply, ScriptedModel, ToolCall, ToolSpec
from loopwright.records import CycleVerdict, FailureCategory, load_record, read_events
from loopwright.sandbox import default_sandbox
from loopwright.tasks import Task
from loopwright.workflow import Workflow, workflow_from_text
from tests.taskfactory import GOLD, make_calc_task

WORKFLOW = """
schema_version: 1
name: build-verify
nodes:
  - id: builder
    kind: agent
    role: builder
    tools: [read_file, write_file, run_tests]
    max_turns: 6
    prompt: |
      Implement the task in {instruction_file}, working in {workspace}.
      Rules:
      {rules}
      Feedback: {feedback}
  - id: gate_verify
    kind: gate
    check: visible_tests_pass
    reloop_to: builder
    max_loops: 2
edges:
  - {source: builder, target: gate_verify}
frozen: [gate_verify]
"""

# mul and div right, add broken: the visible test of add fails, so the gate sends it back.
WRONG = GOLD.replace("return a + b", "return a - b")


class Recorder:
    """A script that hands out replies in order and keeps every prompt it was shown."""

    def __init__(self, replies: list[Reply]) -> None:
        self.replies = replies
        self.prompts: list[str] = []

    def __call__(self, messages: Sequence[Message], tools: Sequence[ToolSpec]) -> Reply | None:
        if len(messages) == 2:  # a new agent visit: system preamble + the rendered prompt
            self.prompts.append(messages[1].content)
        return self.replies.pop(0) if self.replies else None


def workflow() -> Workflow:
    return workflow_from_text(WORKFLOW, "yaml")


def script(instruction: Path) -> Recorder:
    return Recorder(
        [
            ToolCall.make("c1", "read_file", path=str(instruction)),
            ToolCall.make("c2", "write_file", path="calc/core.py", content=WRONG),
            ToolCall.make("c3", "finish", summary="added mul and div"),
            ToolCall.make("c4", "write_file", path="calc/core.py", content=GOLD),
            ToolCall.make("c5", "finish", summary="fixed add"),
        ]
    )


@pytest.fixture
def task(tmp_path: Path) -> Task:
    return make_calc_task(tmp_path / "bench")


def test_scripted_run_fails_the_gate_gets_feedback_fixes_and_passes(
    task: Task, tmp_path: Path
) -> None:
    run_dir = tmp_path / "run"
    recorder = script((run_dir / "instruction.md").resolve())
    spec = TaskRunSpec(
        workflow=workflow(),
        task=task,
        model=ScriptedModel(recorder),
        sandbox=default_sandbox(),
        prices=DEFAULT_PRICES,
        run_dir=run_dir,
        run_id="e2e",
        seed=7,
    )
    record = run_task(spec)

    # The feedback of the failed gate reached the second visit of the builder.
    assert len(recorder.prompts) == 2
    assert "test_add" in recorder.prompts[1] and "RELOOP 1 of 2" in recorder.prompts[1]
    assert "test_add" not in recorder.prompts[0]

    steps = [
        (s.node_id, s.attempt, s.status, s.turns, s.tool_calls, s.tool_errors) for s in record.steps
    ]
    assert steps == [("builder", 1, "ok", 3, 3, 0), ("builder", 2, "ok", 2, 2, 0)]
    assert [s.produced for s in record.steps] == [["calc/core.py"], ["calc/core.py"]]
    assert record.steps[0].read_instruction and not record.steps[1].read_instruction
    assert record.gate_loops == {"gate_verify": 1}
    gate = record.node_trace["gate_verify"]
    assert [(d.decision, d.loop_count, d.passed) for d in gate.decisions] == [
        ("reloop", 1, False),
        ("proceed", 1, True),
    ]
    assert record.node_trace["builder"].fired == 2

    assert record.grade is not None
    assert (record.score_end, record.grade.resolved, record.grade.invalid) == (1.0, True, False)
    assert {t.id: (t.outcome, t.passed) for t in record.grade.tests} == {
        t: ("passed", True) for t in task.test_ids
    }
    assert record.failure_category is FailureCategory.NONE
    assert record.run_status == "completed"
    assert record.simulated and record.model == "scripted"
    assert record.frozen_nodes == ["gate_verify"] and record.mutable_node_ids == ["builder"]
    assert record.diff_files == ["calc/core.py"]
    assert record.input_tokens == sum(s.input_tokens for s in record.steps) > 0

    # Everything on disk agrees with what was returned.
    assert load_record(run_dir) == record
    events = read_events(run_dir / "events.jsonl")
    assert [e.type for e in events][:2] == ["run_start", "node_start"]
    assert [e.type for e in events][-2:] == ["grade", "run_end"]
    assert (run_dir / "grade.json").is_file() and "def div" in (run_dir / "diff.patch").read_text()


def test_model_running_out_of_script_is_an_agent_error_not_a_crash(
    task: Task, tmp_path: Path
) -> None:
    run_dir = tmp_path / "run"
    spec = TaskRunSpec(
        workflow=workflow(),
        task=task,
        model=ScriptedModel(
            [ToolCall.make("c1", "read_file", path=str(run_dir / "instruction.md"))]
        ),
        sandbox=default_sandbox(),
        prices=DEFAULT_PRICES,
        run_dir=run_dir,
        run_id="short",
        seed=1,
    )
    record = run_task(spec)
    assert record.failure_category is FailureCategory.AGENT_ERROR
    assert record.steps[0].status == "error"
    assert record.score_end == 0.0 and record.grade is not None and not record.grade.invalid
    assert any("script" in e.lower() for e in record.errors)


def test_inner_loop_steps_keep_history_and_trajectory(task: Task, tmp_path: Path) -> None:
    recorders: list[Recorder] = []

    def make_model(seed: int) -> ScriptedModel:
        instruction = (
            tmp_path / "loop" / task.id / f"rep_{len(loop.history())}" / "instruction.md"
        ).resolve()
        recorders.append(script(instruction))
        return ScriptedModel(recorders[-1])

    evaluator = Evaluator(make_model, default_sandbox(), DEFAULT_PRICES, EvalSettings(seed=3))
    loop = InnerLoop(evaluator, workflow(), task, tmp_path / "loop")
    first = loop.step()
    second = loop.step(directives="prefer small diffs")
    assert [r.repetition for r in loop.history()] == [0, 1]
    assert loop.score_trajectory() == [1.0, 1.0]
    # The second cycle does not beat the first: the InnerLoop's verdicts and stall signals.
    assert [r.experiments[0].verdict for r in loop.history()] == ["kept", "reverted"]
    kept, reverted = loop.verdicts()
    assert (kept.verdict, reverted.verdict, reverted.consecutive_reverts) == ("kept", "reverted", 1)
    assert not reverted.plateau_detected and first.run_id == kept.run_id
    assert load_record(tmp_path / "loop" / task.id / "rep_1") == second
    on_disk = (tmp_path / "loop" / task.id / "rep_1" / "verdict.json").read_text()
    assert CycleVerdict.model_validate_json(on_disk) == reverted
    assert first.seed != second.seed  # each repetition has its own seed
    assert (
        tmp_path / "loop" / task.id / "rep_1" / "directives.md"
    ).read_text() == "prefer small diffs"
    assert "prefer small diffs" not in recorders[0].prompts[0]
    assert "- prefer small diffs" in recorders[1].prompts[0]  # through {rules}
    assert loop.mutable_nodes() == {"builder"}
    assert loop.is_mutable("builder") and not loop.is_mutable("gate_verify")


def test_evaluator_aggregates_over_tasks_and_repetitions(task: Task, tmp_path: Path) -> None:
    calls: list[int] = []

    def make_model(seed: int) -> ScriptedModel:
        calls.append(seed)
        return ScriptedModel(["nothing to do"])  # replies with text only: the agent ends

    evaluator = Evaluator(
        make_model, default_sandbox(), DEFAULT_PRICES, EvalSettings(repetitions=2)
    )
    evaluation = evaluator.evaluate(workflow(), [task], tmp_path / "eval", run_id="agg")
    assert len(evaluation.records) == 2 and len(set(calls)) == 2
    assert evaluation.summary.runs == 2 and evaluation.summary.valid_runs == 2
    assert evaluation.summary.mean_score == 0.0 and evaluation.summary.resolved_rate == 0.0
    assert {r.failure_category for r in evaluation.records} == {FailureCategory.DID_NOT_READ_TASK}


def _run(task: Task, tmp_path: Path, replies: list[Reply], wf: Workflow | None = None):  # type: ignore[no-untyped-def]
    run_dir = tmp_path / "run"
    spec = TaskRunSpec(
        workflow=wf or workflow(),
        task=task,
        model=ScriptedModel(replies),
        sandbox=default_sandbox(),
        prices=DEFAULT_PRICES,
        run_dir=run_dir,
        run_id="case",
        seed=0,
    )
    return run_task(spec), run_dir


def test_escape_disallowed_and_malformed_calls_are_tool_errors_in_the_record(
    task: Task, tmp_path: Path
) -> None:
    instruction = str((tmp_path / "run" / "instruction.md").resolve())
    replies: list[Reply] = [
        ToolCall.make("c1", "read_file", path=instruction),
        ToolCall.make("c2", "write_file", path="../escaped.py", content="x = 1\n"),
        ToolCall.make("c3", "run_command", command="true"),  # not in the builder's tools
        ToolCall("c4", "write_file", "{not json"),
        ToolCall.make("c5", "write_file", path="calc/core.py", content=GOLD),
        ToolCall.make("c6", "finish", summary="done"),
    ]
    record, run_dir = _run(task, tmp_path, replies)
    assert not (tmp_path / "escaped.py").exists()
    [step] = record.steps
    assert (step.status, step.tool_calls, step.tool_errors) == ("ok", 6, 3)
    assert record.score_end == 1.0 and record.failure_category is FailureCategory.NONE
    errors = [
        e.error or ""
        for e in read_events(run_dir / "events.jsonl")
        if e.type == "tool_call" and not e.ok
    ]
    assert "leaves the workspace" in errors[0]
    assert "not allowed" in errors[1] and "read_file" in errors[1]
    assert "JSON" in errors[2]


def test_a_model_that_never_finishes_is_stopped_at_max_turns(task: Task, tmp_path: Path) -> None:
    instruction = str((tmp_path / "run" / "instruction.md").resolve())
    replies: list[Reply] = [ToolCall.make(f"c{i}", "read_file", path=instruction) for i in range(6)]
    record, _ = _run(task, tmp_path, replies)  # max_turns is 6: the 7th call is never made
    [step] = record.steps
    assert (step.status, step.turns) == ("max_turns", 6)
    assert "max_turns=6" in (step.error or "")
    # the untouched repo passes its visible tests, so the gate lets the run through
    assert record.node_trace["gate_verify"].decisions[-1].decision == "proceed"
    assert record.failure_category is FailureCategory.MAX_TURNS
    assert record.score_end == 0.0
