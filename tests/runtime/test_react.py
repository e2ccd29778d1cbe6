"""The react loop's stop rules, as seen in a run's events: finish, plain reply, max_turns,
timeout, model errors, unknown loops; and what the model is shown."""

from __future__ import annotations

from loopwright.models import Message, ModelError, ToolCall
from loopwright.records import ErrorEvent, ModelCall, NodeEnd, ToolCallEvent
from loopwright.runtime import (
    INSTRUCTION_VIEW,
    SYSTEM_PREAMBLE,
    AgentLoop,
    Registries,
    Registry,
    default_registries,
    react,
)
from tests.runtime.conftest import FakeModel, Harness, agent, call, chain, finish, gate, reply

READERS = ("read_file", "list_files")


def node_ends(h: Harness) -> list[NodeEnd]:
    return h.events("node_end")


def test_finish_ends_the_agent_with_its_summary(h: Harness) -> None:
    model = FakeModel([reply(call("list_files")), finish("all done")])
    outcome = h.run(chain(agent("builder", READERS)), model)
    [end] = node_ends(h)
    assert (end.status, end.summary, end.error) == ("ok", "all done", None)
    assert outcome.status == "completed"
    assert outcome.node_status == {"builder": "ok"}


def test_the_model_gets_the_preamble_the_prompt_and_the_allowed_tools(h: Harness) -> None:
    model = FakeModel([finish()])
    h.run(chain(agent("builder", ["list_files", "read_file"])), model)
    messages, tools = model.calls[0]
    assert messages[0] == Message("system", SYSTEM_PREAMBLE)
    assert messages[1].role == "user" and "read " + INSTRUCTION_VIEW in messages[1].content
    assert [t.name for t in tools] == ["list_files", "read_file", "finish"]


def test_a_reply_without_tool_calls_ends_the_agent(h: Harness) -> None:
    h.run(chain(agent("builder", READERS)), FakeModel([reply(text="I changed nothing.")]))
    [end] = node_ends(h)
    assert (end.status, end.summary) == ("ok", "I changed nothing.")


def test_tool_results_and_errors_are_fed_back_and_the_loop_goes_on(h: Harness) -> None:
    model = FakeModel(
        [
            reply(ToolCall("bad", "read_file", '{"path": '), call("read_file", path="../x")),
            reply(call("write_file", path="x.py", content="")),
            finish(),
        ]
    )
    h.run(chain(agent("builder", READERS)), model)
    second = model.calls[1][0]
    assert [m.role for m in second] == ["system", "user", "assistant", "tool", "tool"]
    assert second[3].tool_call_id == "bad" and second[3].content.startswith(
        "error: arguments of read_file are not valid JSON"
    )
    assert second[4].content.startswith("error: path ../x leaves the workspace")
    assert "allowed tools: read_file, list_files, finish" in model.calls[2][0][-1].content
    tools = h.events("tool_call")
    assert [(t.tool, t.ok, t.turn) for t in tools] == [
        ("read_file", False, 1),
        ("read_file", False, 1),
        ("write_file", False, 2),
        ("finish", True, 3),
    ]
    assert tools[0].arguments == '{"path": '
    assert node_ends(h)[0].status == "ok"


def test_a_model_that_never_finishes_stops_at_max_turns(h: Harness) -> None:
    model = FakeModel([reply(call("list_files")) for _ in range(5)])
    outcome = h.run(chain(agent("builder", READERS, max_turns=3)), model)
    [end] = node_ends(h)
    assert end.status == "max_turns"
    assert end.error == "stopped at max_turns=3 without finish"
    assert len(model.calls) == 3
    assert outcome.status == "completed"


def test_model_calls_are_recorded_with_tokens_cost_and_price_table(h: Harness) -> None:
    outcome = h.run(
        chain(agent("builder", READERS)),
        FakeModel([reply(call("list_files"), tokens=(100, 7)), finish()]),
    )
    calls: list[ModelCall] = h.events("model_call")
    assert [(c.turn, c.input_tokens, c.output_tokens, c.tool_calls) for c in calls] == [
        (1, 100, 7, 1),
        (2, 10, 5, 1),
    ]
    assert calls[0].cost_usd == 0.1 and calls[0].price_table == "test-prices-1"
    assert all(c.simulated and c.model == "fake-model" and c.attempt == 1 for c in calls)
    assert (outcome.usage.input_tokens, outcome.usage.output_tokens) == (110, 12)


def test_an_agent_whose_model_raises_ends_in_error_and_the_run_reaches_the_gate(h: Harness) -> None:
    wf = chain(agent("builder", READERS), gate("diff_nonempty", max_loops=1))
    model = FakeModel([ModelError("provider said 500"), finish()])
    outcome = h.run(wf, model)
    ends = node_ends(h)
    assert [(e.node_id, e.status) for e in ends] == [
        ("builder", "error"),
        ("gate", "failed"),
        ("builder", "ok"),
        ("gate", "failed"),
    ]
    assert ends[0].error == "model call failed: provider said 500"
    errors: list[ErrorEvent] = h.events("error")
    assert [(e.node_id, e.where) for e in errors] == [("builder", "model_call")]
    failed_call = h.events("model_call")[0]
    assert (
        failed_call.error == "provider said 500" and failed_call.cost_usd == 0.0
    )  # no tokens: free
    assert [d.decision for d in h.events("gate_decision")] == ["reloop", "exhausted"]
    assert outcome.status == "completed"


def test_any_exception_inside_the_loop_is_a_node_error(h: Harness) -> None:
    def boom(messages: object) -> None:
        raise RuntimeError("bug in the model adapter")

    outcome = h.run(chain(agent("builder", READERS)), FakeModel([boom]))  # type: ignore[list-item]
    [end] = node_ends(h)
    assert (end.status, end.error) == ("error", "RuntimeError: bug in the model adapter")
    assert outcome.status == "completed"


def test_a_slow_command_runs_the_node_into_its_timeout(h: Harness) -> None:
    model = FakeModel([reply(call("run_command", command="sleep 5")), finish()])
    outcome = h.run(chain(agent("builder", ["run_command"], timeout_s=1)), model)
    [end] = node_ends(h)
    assert end.status == "timeout"
    assert "timeout_s=1" in (end.error or "")
    assert end.duration_s < 3
    assert h.events("tool_call")[0].ok  # the command was killed, which is a result
    assert outcome.status == "completed"  # the node's limit, not the run's


def test_a_slow_model_runs_the_node_into_its_timeout(h: Harness) -> None:
    model = FakeModel([reply(call("list_files")) for _ in range(10)], delay_s=0.4)
    h.run(chain(agent("builder", READERS, timeout_s=1)), model)
    [end] = node_ends(h)
    assert end.status == "timeout"
    assert len(model.calls) <= 3


def test_an_unknown_loop_is_a_node_error_naming_the_known_loops(h: Harness) -> None:
    # A catalog name (so the workflow validates) that these registries do not implement.
    defaults = default_registries()
    loops: Registry[AgentLoop] = Registry("agent loop")
    loops.add("react", react)
    registries = Registries(defaults.tools, loops, defaults.functions, defaults.checks)
    wf = chain(agent("builder", READERS, loop="plan_execute"))
    outcome = h.run(wf, FakeModel([]), registries=registries)
    [end] = node_ends(h)
    assert end.status == "error"
    assert end.error == "unknown agent loop 'plan_execute'; known loops: react"
    assert outcome.status == "completed"


def test_tool_calls_after_finish_are_not_run(h: Harness) -> None:
    model = FakeModel(
        [reply(call("finish", summary="s"), call("write_file", path="late.py", content="x"))]
    )
    h.run(chain(agent("builder", ["write_file"])), model)
    assert not (h.workspace / "late.py").exists()
    assert [t.tool for t in h.events("tool_call")] == ["finish"]
    assert isinstance(h.events("tool_call")[0], ToolCallEvent)
