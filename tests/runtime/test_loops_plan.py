"""The planning loops, plan_execute and hybrid: a plan first, steps or react within it, replans
recorded as `replan` tool_call events and counted in AgentResult.replans_used; and the engine
settings that choose a node's loop."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from loopwright.errors import ConfigError
from loopwright.evaluation import TaskRunSpec, run_task
from loopwright.models import DEFAULT_PRICES, ModelError, ScriptedModel, ToolCall
from loopwright.records import CycleRecord, EventWriter, read_events
from loopwright.runtime import (
    LOOPS,
    REPLAN,
    REPLAN_CAP,
    SYSTEM_PREAMBLE,
    AgentResult,
    EngineSettings,
    LoopContext,
    Runner,
    UsageMeter,
    default_registries,
    hybrid,
    parse_plan,
    plan_execute,
    runtime_catalog,
)
from loopwright.sandbox import default_sandbox
from loopwright.tasks import Task
from loopwright.workflow import AgentNode, Workflow, check_workflow
from tests.runtime.conftest import FakeModel, Harness, agent, call, chain, cost, finish, reply
from tests.taskfactory import GOLD, make_calc_task

BUILD_TOOLS = ("read_file", "write_file", "run_tests")
WRONG = GOLD.replace("return a + b", "return a - b")  # mul and div right, add broken


def plan(*steps: str) -> str:
    return "Here is my plan:\n" + "\n".join(f"{i}. {s}" for i, s in enumerate(steps, 1))


def replans(h: Harness) -> list[tuple[bool, int]]:
    return [(t.ok, t.turn) for t in h.events("tool_call") if t.tool == REPLAN]


def direct(h: Harness, node: AgentNode, model: FakeModel) -> AgentResult:
    """Run a planning loop on its own (not through the Runner) to see its AgentResult."""
    loop = plan_execute if node.loop == "plan_execute" else hybrid
    tc, writer = h.tool_context(node.id)
    with writer:
        ctx = LoopContext(model, default_registries().tools, tc, cost, "t", UsageMeter())
        return loop(node, "Do the task.", ctx)


# --- end to end, graded ----------------------------------------------------------------------


def e2e(tmp_path: Path, loop: str, replies: list[str | ToolCall]) -> CycleRecord:
    task = make_calc_task(tmp_path / "bench")
    node = agent("builder", BUILD_TOOLS, loop=loop, max_turns=10)
    spec = TaskRunSpec(
        workflow=Workflow(name=f"solo-{loop}", nodes=(node,)),
        task=task,
        model=ScriptedModel(replies),
        sandbox=default_sandbox(),
        prices=DEFAULT_PRICES,
        run_dir=tmp_path / "run",
        run_id=loop,
        seed=1,
    )
    return run_task(spec)


def test_plan_execute_plans_writes_the_gold_tests_and_resolves_the_task(tmp_path: Path) -> None:
    instruction = str((tmp_path / "run" / "instruction.md").resolve())
    record = e2e(
        tmp_path,
        "plan_execute",
        [
            plan("Read the instruction", "Write mul and div", "Run the tests"),
            ToolCall.make("c1", "read_file", path=instruction),
            "read it",
            ToolCall.make("c2", "write_file", path="calc/core.py", content=GOLD),
            "wrote calc/core.py",
            ToolCall.make("c3", "run_tests"),
            ToolCall.make("c4", "finish", summary="mul and div added, tests pass"),
        ],
    )
    assert record.grade is not None and record.grade.resolved
    assert record.score_end == 1.0 and record.run_status == "completed"
    [step] = record.steps
    assert (step.status, step.turns, step.tool_calls, step.tool_errors) == ("ok", 7, 4, 0)
    assert step.summary == "mul and div added, tests pass" and step.read_instruction
    events = read_events(tmp_path / "run" / "events.jsonl")
    assert [e.turn for e in events if e.type == "model_call"] == [1, 2, 3, 4, 5, 6, 7]


def test_hybrid_plans_then_reacts_and_resolves_the_task(tmp_path: Path) -> None:
    record = e2e(
        tmp_path,
        "hybrid",
        [
            plan("Write mul and div", "Run the tests"),
            ToolCall.make("c1", "write_file", path="calc/core.py", content=GOLD),
            ToolCall.make("c2", "run_tests"),
            ToolCall.make("c3", "finish", summary="done"),
        ],
    )
    assert record.grade is not None and record.score_end == 1.0
    [step] = record.steps
    assert (step.status, step.turns, step.tool_calls) == ("ok", 4, 3)


# --- what the model is shown ------------------------------------------------------------------


def test_plan_execute_plans_without_tools_then_gives_each_step_the_plan(h: Harness) -> None:
    model = FakeModel([reply(text=plan("Look around", "Finish")), reply(text="looked"), finish()])
    h.run(chain(agent("builder", ["list_files"], loop="plan_execute")), model)
    (plan_msgs, plan_tools), (step_msgs, step_tools), (last_msgs, _) = model.calls
    assert plan_tools == [] and "numbered plan" in plan_msgs[0].content
    assert "Task calc-ops" in plan_msgs[1].content
    assert [m.role for m in step_msgs] == ["system", "user", "assistant", "user"]
    assert step_msgs[0].content == SYSTEM_PREAMBLE
    assert step_msgs[2].content == "1. Look around\n2. Finish"
    assert step_msgs[3].content.startswith("Plan step 1 of 2: Look around")
    assert [t.name for t in step_tools] == ["list_files", "finish"]
    assert "Plan step 2 of 2: Finish" in last_msgs[3].content
    assert "- Look around: looked" in last_msgs[3].content


def test_plan_execute_ends_ok_when_the_plan_is_exhausted(h: Harness) -> None:
    model = FakeModel([reply(text=plan("a", "b")), reply(text="did a"), reply(text="did b")])
    outcome = h.run(chain(agent("builder", loop="plan_execute")), model)
    [end] = h.events("node_end")
    assert (end.status, end.summary) == ("ok", "Plan completed.\n- a: did a\n- b: did b")
    assert outcome.node_status == {"builder": "ok"}


def test_hybrid_carries_the_plan_and_offers_replan_before_finish(h: Harness) -> None:
    model = FakeModel([reply(text=plan("Look around")), finish()])
    h.run(chain(agent("builder", ["list_files"], loop="hybrid")), model)
    messages, tools = model.calls[1]
    assert [m.role for m in messages] == ["system", "user"]
    assert "Your plan:\n1. Look around" in messages[1].content
    assert [t.name for t in tools] == ["list_files", REPLAN, "finish"]


def test_react_is_never_offered_replan(h: Harness) -> None:
    model = FakeModel([reply(call(REPLAN, plan="1. x")), finish()])
    h.run(chain(agent("builder", ["list_files"])), model)
    assert REPLAN not in [t.name for t in model.calls[0][1]]
    assert [(t.tool, t.ok) for t in h.events("tool_call")] == [(REPLAN, False), ("finish", True)]


# --- replans ----------------------------------------------------------------------------------


def failing_step_then_replan() -> list[object]:
    return [
        reply(text=plan("Write the code", "Wrap up")),
        reply(call("write_file", path="calc/core.py", content=WRONG), call("run_tests")),
        reply(text="wrote it, tests fail"),
        reply(text=plan("Fix add", "Run the tests")),  # the replanning call
        reply(call("write_file", path="calc/core.py", content=GOLD)),
        reply(text="fixed add"),
        reply(call("run_tests")),
        finish("all green"),
    ]


def test_plan_execute_replans_after_failing_tests_and_records_it(h: Harness) -> None:
    model = FakeModel(failing_step_then_replan())  # type: ignore[arg-type]
    h.run(chain(agent("builder", BUILD_TOOLS, loop="plan_execute", max_turns=10)), model)
    replan_messages = model.calls[3][0]
    assert "ran into trouble" in replan_messages[-1].content
    assert "run_tests failed: exit code 1" in replan_messages[-1].content
    assert "Plan step 2 of 3: Fix add" in model.calls[4][0][-1].content
    [event] = [t for t in h.events("tool_call") if t.tool == REPLAN]
    assert (event.ok, event.turn) == (True, 4)
    assert json.loads(event.arguments) == {"plan": "1. Fix add\n2. Run the tests"}
    assert h.events("node_end")[0].summary == "all green"


def test_plan_execute_exposes_replans_used(h: Harness) -> None:
    model = FakeModel(failing_step_then_replan())  # type: ignore[arg-type]
    node = agent("builder", BUILD_TOOLS, loop="plan_execute", max_turns=10)
    result = direct(h, node, model)
    assert (result.status, result.replans_used, result.turns) == ("ok", 1, 8)


def test_plan_execute_keep_leaves_the_plan_and_counts_nothing(h: Harness) -> None:
    model = FakeModel(
        [
            reply(text=plan("a", "b")),
            reply(call("read_file", path="missing.py")),
            reply(text="a failed"),
            reply(text="KEEP"),
            finish("b done"),
        ]
    )
    result = direct(h, agent("builder", ["read_file"], loop="plan_execute"), model)
    assert (result.status, result.summary, result.replans_used) == ("ok", "b done", 0)
    assert "Plan step 2 of 2: b" in model.calls[4][0][-1].content
    assert replans(h) == []


def test_plan_execute_asks_no_more_replans_after_the_cap(h: Harness) -> None:
    steps = [reply(text=plan("s0"))]
    for i in range(REPLAN_CAP + 1):
        steps += [reply(call("read_file", path="../outside")), reply(text=f"s{i} failed")]
        if i < REPLAN_CAP:
            steps.append(reply(text=plan(f"s{i + 1}")))
    model = FakeModel(steps)  # type: ignore[arg-type]
    result = direct(h, agent("builder", ["read_file"], loop="plan_execute"), model)
    assert result.status == "ok" and result.replans_used == REPLAN_CAP == 2
    assert not model.steps  # exactly the scripted calls: no third replanning call
    assert [ok for ok, _ in replans(h)] == [True, True]


def test_hybrid_replans_are_counted_up_to_the_cap(h: Harness) -> None:
    model = FakeModel(
        [
            reply(text=plan("a")),
            reply(call(REPLAN, plan="1. b\n2. c")),
            reply(call(REPLAN, plan="")),
            reply(call(REPLAN, plan="1. d")),
            reply(call(REPLAN, plan="1. e")),
            finish("done"),
        ]
    )
    result = direct(h, agent("builder", loop="hybrid"), model)
    assert (result.status, result.replans_used, result.turns) == ("ok", 2, 6)
    assert replans(h) == [(True, 2), (False, 3), (True, 4), (False, 5)]
    tool_results = [m.content for m in model.calls[-1][0] if m.role == "tool"]
    assert tool_results[0].startswith("plan revised (1 of 2 replans used):\n1. b\n2. c")
    assert "non-empty numbered plan" in tool_results[1]
    assert "replan cap (2) is used up" in tool_results[3]


# --- tools, budgets, errors -------------------------------------------------------------------


@pytest.mark.parametrize("loop", ["plan_execute", "hybrid"])
def test_allowlist_and_confinement_hold_inside_the_plan(h: Harness, loop: str) -> None:
    bad = reply(
        call("write_file", path="calc/x.py", content="x"),
        call("read_file", path="../../etc/passwd"),
    )
    # plan_execute ends the step at a plain reply, then is offered a replan (KEEP).
    rest = [reply(text="nothing worked"), reply(text="KEEP")] if loop == "plan_execute" else []
    model = FakeModel([reply(text=plan("Try things")), bad, *rest, finish()])
    h.run(chain(agent("builder", ["read_file"], loop=loop)), model)
    tools = h.events("tool_call")
    assert "is not allowed for this node" in (tools[0].error or "")
    assert "leaves the workspace" in (tools[1].error or "")
    assert not (h.workspace / "calc" / "x.py").exists()
    assert h.events("node_end")[0].status == "ok"


def test_max_turns_is_shared_by_the_plan_and_every_step(h: Harness) -> None:
    model = FakeModel([reply(text=plan("a", "b", "c"))] + [reply(call("list_files"))] * 10)
    outcome = h.run(
        chain(agent("builder", ["list_files"], loop="plan_execute", max_turns=3)), model
    )
    [end] = h.events("node_end")
    assert (end.status, end.error) == ("max_turns", "stopped at max_turns=3 without finish")
    assert len(model.calls) == 3 and outcome.status == "completed"


def test_hybrid_counts_the_planning_call_against_max_turns(h: Harness) -> None:
    model = FakeModel([reply(text=plan("a"))] + [reply(call("list_files"))] * 5)
    result = direct(h, agent("builder", ["list_files"], loop="hybrid", max_turns=2), model)
    assert (result.status, result.turns, len(model.calls)) == ("max_turns", 2, 2)


def test_a_slow_model_runs_a_plan_into_the_node_timeout(h: Harness) -> None:
    model = FakeModel([reply(text=plan("a"))] + [reply(call("list_files"))] * 9, delay_s=0.4)
    h.run(chain(agent("builder", ["list_files"], loop="plan_execute", timeout_s=1)), model)
    [end] = h.events("node_end")
    assert end.status == "timeout" and "timeout_s=1" in (end.error or "")
    assert len(model.calls) <= 3


def test_a_model_error_while_planning_is_a_node_error(h: Harness) -> None:
    h.run(chain(agent("builder", loop="hybrid")), FakeModel([ModelError("provider down")]))
    [end] = h.events("node_end")
    assert (end.status, end.error) == ("error", "model call failed: provider down")


# --- plans, catalog, settings -----------------------------------------------------------------


def test_parse_plan_reads_numbered_then_bullet_lines_then_the_whole_text() -> None:
    assert parse_plan("Plan:\n1. read\n2) write\nStep 3: test\nthanks") == ["read", "write", "test"]
    assert parse_plan("- read\n* write") == ["read", "write"]
    assert parse_plan("  just fix it  ") == ["just fix it"]
    assert parse_plan("  \n") == []
    assert len(parse_plan("\n".join(f"{i}. s{i}" for i in range(1, 30)))) == 12


def test_both_loops_are_registered_and_validate() -> None:
    assert {"plan_execute", "hybrid", "react"} <= set(LOOPS.names())
    wf = chain(agent("a", loop="plan_execute"), agent("b", loop="hybrid"))
    check_workflow(wf, runtime_catalog())  # raises if either loop were unknown


def runner_with(engine: EngineSettings, model: FakeModel, h: Harness) -> Runner:
    return Runner(model, h.sandbox, cost_fn=cost, price_table="t", engine=engine)


def first_tools(model: FakeModel) -> list[str]:
    return [t.name for t in model.calls[0][1]]


@pytest.mark.parametrize(
    ("engine", "node_loop", "runs_plan"),
    [
        (EngineSettings(), "react", False),
        (EngineSettings(default_loop_type="plan_execute"), "react", True),
        (EngineSettings(loop_complexity_overrides={"simple": "plan_execute"}), "react", True),
        (EngineSettings(loop_complexity_overrides={"complex": "plan_execute"}), "react", False),
        (
            EngineSettings(
                default_loop_type="plan_execute", loop_complexity_overrides={"simple": "react"}
            ),
            "react",
            False,
        ),
        (EngineSettings(default_loop_type="react"), "plan_execute", True),  # a non-react node wins
    ],
)
def test_engine_settings_choose_the_loop_of_react_nodes(
    h: Harness, engine: EngineSettings, node_loop: str, runs_plan: bool
) -> None:
    model = FakeModel([reply(text=plan("a")), finish(), finish()])
    with EventWriter(h.events_path) as writer:
        runner_with(engine, model, h).run(
            chain(agent("builder", ["list_files"], loop=node_loop)),
            h.task,
            h.workspace,
            h.instruction,
            writer,
        )
    assert h.task.level == 1  # the calc task is "simple"
    assert (first_tools(model) == []) is runs_plan


def test_engine_overrides_apply_by_task_level(tmp_path: Path) -> None:
    engine = EngineSettings(
        default_loop_type="hybrid", loop_complexity_overrides={"complex": "plan_execute"}
    )
    node = agent("builder")
    task = make_calc_task(tmp_path)
    assert engine.loop_for(node, task) == "hybrid"
    hard = Task(spec=task.spec.model_copy(update={"level": 3}), root=task.root, instruction="x")
    assert engine.loop_for(node, hard) == "plan_execute"
    assert engine.loop_for(agent("b", loop="react"), hard) == "plan_execute"  # see the rule


def test_engine_settings_naming_an_unknown_loop_are_refused(h: Harness) -> None:
    engine = EngineSettings(loop_complexity_overrides={"medium": "reflexion"})
    with pytest.raises(ConfigError, match=r"loop_complexity_overrides.medium='reflexion'"):
        runner_with(engine, FakeModel([]), h)
    with pytest.raises(ValidationError):
        EngineSettings(loop_complexity_overrides={"hard": "react"})  # type: ignore[dict-item]
    with pytest.raises(ValidationError):
        EngineSettings(default_loop="react")  # type: ignore[call-arg]
