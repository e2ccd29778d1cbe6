"""The Runner: order, RELOOP and its feedback, notes, produced files, budgets, fn nodes,
judge gates, and the exhaust it writes."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from loopwright.errors import ConfigError
from loopwright.runtime import (
    INSTRUCTION_VIEW,
    Registries,
    StepResult,
    ToolContext,
    default_registries,
)
from loopwright.workflow import Edge, FnNode, GateNode, Workflow
from tests.runtime.conftest import FakeModel, Harness, agent, call, chain, finish, gate, reply

BUILDER_TOOLS = ("read_file", "write_file", "edit_file", "run_tests", "read_notes")
BROKEN = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n"


def decisions(h: Harness) -> list[tuple[str, int, bool, str | None]]:
    return [(d.decision, d.loop_count, d.passed, d.target) for d in h.events("gate_decision")]


def visits(h: Harness) -> list[tuple[str, int, str]]:
    return [(e.node_id, e.attempt, e.status) for e in h.events("node_end")]


def test_a_reloop_that_hits_max_loops_is_exhausted_and_the_run_goes_on(h: Harness) -> None:
    wf = chain(
        agent("builder", BUILDER_TOOLS),
        gate("diff_nonempty", max_loops=2),
        FnNode(id="after", fn="collect_notes"),
    )
    outcome = h.run(wf, FakeModel([finish("nothing"), finish("nothing"), finish("nothing")]))
    assert decisions(h) == [
        ("reloop", 1, False, "builder"),
        ("reloop", 2, False, "builder"),
        ("exhausted", 2, False, "builder"),
    ]
    assert [d.max_loops for d in h.events("gate_decision")] == [2, 2, 2]
    assert outcome.attempts == {"builder": 3, "gate": 3, "after": 1}
    assert outcome.loop_counts == {"gate": 2}
    assert [s.attempt for s in h.events("node_start") if s.node_id == "builder"] == [1, 2, 3]
    assert visits(h)[-1] == ("after", 1, "ok")
    assert outcome.status == "completed"


def test_failed_gate_feedback_reaches_the_rerun_builder(h: Harness) -> None:
    model = FakeModel(
        [
            reply(call("write_file", path="calc/core.py", content=BROKEN)),
            finish("wrote it"),
            reply(call("write_file", path="calc/core.py", content=FIXED)),
            finish("fixed it"),
        ]
    )
    outcome = h.run(chain(agent("builder", BUILDER_TOOLS), gate()), model)
    first, second = model.prompts()
    assert first.endswith("FEEDBACK:")
    assert "Gate 'gate' sent the work back (RELOOP 1 of 3)" in second
    assert "The visible tests do not pass." in second
    assert "FAILED tests/test_add.py::test_add" in second
    assert decisions(h) == [("reloop", 1, False, "builder"), ("proceed", 1, True, None)]
    reason = h.events("gate_decision")[0].reason
    assert "FAILED tests/test_add.py::test_add" in reason
    assert visits(h) == [
        ("builder", 1, "ok"),
        ("gate", 1, "failed"),
        ("builder", 2, "ok"),
        ("gate", 2, "ok"),
    ]
    assert outcome.node_status == {"builder": "ok", "gate": "ok"}


def test_notes_from_a_study_node_appear_in_the_builders_prompt(h: Harness) -> None:
    wf = chain(agent("study", ["read_file", "write_notes"]), agent("builder", BUILDER_TOOLS))
    model = FakeModel(
        [
            reply(
                call("read_file", path=str(h.instruction)),
                call("write_notes", text="Edit calc/core.py: add mul and div."),
            ),
            finish("studied"),
            reply(call("read_notes")),
            finish(),
        ]
    )
    outcome = h.run(wf, model)
    study_prompt, builder_prompt = model.prompts()
    assert study_prompt.endswith("NOTES:\nFEEDBACK:")
    assert "NOTES:Edit calc/core.py: add mul and div.\nFEEDBACK:" in builder_prompt
    assert model.calls[3][0][-1].content == "Edit calc/core.py: add mul and div."
    assert outcome.notes == "Edit calc/core.py: add mul and div."
    assert [(n.node_id, n.chars) for n in h.events("notes_written")] == [("study", 35)]


def test_placeholders_are_filled_with_paths_task_id_and_rules(h: Harness) -> None:
    prompt = "{task_id}|{instruction_file}|{workspace}|{rules}"
    model = FakeModel([finish()])
    h.run(chain(agent("builder", prompt=prompt)), model)
    task_id, instruction, workspace, rules = model.prompts()[0].split("|")
    assert task_id == "calc-ops"
    assert instruction == INSTRUCTION_VIEW  # never a host path: prompts are path-independent
    assert workspace == "."  # the local sandbox cannot place the workspace at a fixed path
    assert rules.startswith("- The visible tests are in tests/; run_tests runs them")
    assert "no network access" in rules


def test_each_node_records_the_files_it_produced(h: Harness) -> None:
    wf = chain(
        agent("study", ["write_notes"]),
        agent("builder", BUILDER_TOOLS),
        agent("cleaner", ["run_command"]),
    )
    model = FakeModel(
        [
            reply(call("write_notes", text="n")),
            finish(),
            reply(
                call("write_file", path="calc/ops.py", content="X = 1\n"),
                call("edit_file", path="calc/core.py", old="a + b", new="b + a"),
            ),
            finish(),
            reply(call("run_command", command="rm calc/__init__.py")),
            finish(),
        ]
    )
    h.run(wf, model)
    produced = {e.node_id: e.produced for e in h.events("node_end")}
    assert produced == {
        "study": [],
        "builder": ["calc/core.py", "calc/ops.py"],
        "cleaner": ["calc/__init__.py"],
    }


def test_a_same_size_rewrite_right_after_a_snapshot_is_still_seen(h: Harness) -> None:
    wf = chain(agent("a", ["write_file"]), agent("b", ["write_file"]))
    model = FakeModel(
        [
            reply(call("write_file", path="f.txt", content="one")),
            finish(),
            reply(call("write_file", path="f.txt", content="two")),
            finish(),
        ]
    )
    h.run(wf, model)
    assert [e.produced for e in h.events("node_end")] == [["f.txt"], ["f.txt"]]


def test_a_reloop_reruns_every_node_from_the_target_to_the_gate(h: Harness) -> None:
    wf = chain(
        agent("study", ["write_notes"]),
        agent("builder", BUILDER_TOOLS),
        agent("reviewer", ["read_file"]),
        gate("diff_nonempty", max_loops=1),
    )
    outcome = h.run(wf, FakeModel([finish()] * 5))
    assert [n for n, _, _ in visits(h)] == [
        "study",
        "builder",
        "reviewer",
        "gate",
        "builder",
        "reviewer",
        "gate",
    ]
    assert outcome.attempts == {"study": 1, "builder": 2, "reviewer": 2, "gate": 2}


def test_a_reloop_does_not_rerun_a_sibling_branch(h: Harness) -> None:
    nodes = (agent("builder", BUILDER_TOOLS), agent("side", ["read_file"]), agent("tester", ["run_tests"]),
             GateNode(id="gate", check="diff_nonempty", reloop_to="builder", max_loops=1))  # fmt: skip
    edges = (Edge(source="builder", target="side"), Edge(source="builder", target="tester"),
             Edge(source="tester", target="gate"), Edge(source="side", target="gate"))  # fmt: skip
    wf = Workflow(name="branches", nodes=nodes, edges=edges)
    h.run(wf, FakeModel([finish()] * 6))
    assert [n for n, _, _ in visits(h)] == [
        "builder",
        "side",
        "tester",
        "gate",
        "builder",
        "side",
        "tester",
        "gate",
    ]
    edges2 = (
        Edge(source="builder", target="side"),
        Edge(source="builder", target="tester"),
        Edge(source="tester", target="gate"),
    )
    h.events_path.unlink()
    h.run(Workflow(name="b2", nodes=nodes, edges=edges2), FakeModel([finish()] * 6))
    assert [n for n, _, _ in visits(h)] == [
        "builder",
        "side",
        "tester",
        "gate",
        "builder",
        "tester",
        "gate",
    ]


def test_the_run_budget_skips_the_nodes_after_it(h: Harness) -> None:
    wf = chain(
        agent("builder", ["read_file"]),
        gate("diff_nonempty"),
        FnNode(id="after", fn="collect_notes"),
    )
    model = FakeModel([reply(call("read_file", path="calc/core.py"))] * 5, delay_s=0.4)
    outcome = h.run(wf, model, run_timeout_s=0.6)
    assert visits(h) == [("builder", 1, "timeout"), ("gate", 1, "skipped"), ("after", 1, "skipped")]
    skipped = h.events("node_end")[1]
    assert skipped.error == "skipped: the run's time budget (0.6s) was used up"
    assert outcome.status == "timeout"
    assert outcome.attempts == {"builder": 1}


def test_fn_nodes_run_registered_functions(h: Harness) -> None:
    wf = chain(
        FnNode(id="tests", fn="run_visible_tests"),
        FnNode(id="diff", fn="check_diff_nonempty"),
        agent("builder", ["write_file"]),
        FnNode(id="notes", fn="collect_notes"),
        FnNode(id="bad_args", fn="run_visible_tests", args={"colour": "red"}),
    )
    outcome = h.run(
        wf, FakeModel([reply(call("write_file", path="calc/new.py", content="")), finish()])
    )
    ends = {e.node_id: e for e in h.events("node_end")}
    assert ends["tests"].status == "ok" and "2 passed" in ends["tests"].summary
    assert ends["diff"].status == "failed"
    assert ends["notes"].summary == "Files changed so far: calc/new.py"
    assert outcome.notes == "Files changed so far: calc/new.py"
    assert ends["bad_args"].status == "error" and "unknown args ['colour']" in (
        ends["bad_args"].error or ""
    )


def test_a_judge_gate_parses_pass_and_fail(h: Harness) -> None:
    wf = chain(
        agent("builder", ["read_file"]),
        GateNode(
            id="gate",
            judge="Did the builder of {task_id} follow {instruction_file}?",
            reloop_to="builder",
        ),
    )
    model = FakeModel(
        [finish(), reply(text="FAIL\ndiv is missing"), finish(), reply(text="Pass: looks right")]
    )
    h.run(wf, model)
    assert decisions(h) == [("reloop", 1, False, "builder"), ("proceed", 1, True, None)]
    assert "div is missing" in model.prompts()[2]
    judge_messages, judge_tools = model.calls[1]
    assert judge_tools == [] and "Did the builder of calc-ops follow" in judge_messages[1].content
    assert [c.node_id for c in h.events("model_call")] == ["builder", "gate", "builder", "gate"]


def test_a_check_that_crashes_fails_its_gate(h: Harness) -> None:
    regs: Registries = default_registries().copy()

    @regs.checks.register("explodes")
    def explodes(ctx: ToolContext) -> StepResult:
        raise OSError("disk on fire")

    wf = chain(agent("builder", ["read_file"]), gate("explodes", max_loops=1))
    outcome = h.run(wf, FakeModel([finish(), finish()]), registries=regs)
    assert decisions(h) == [("reloop", 1, False, "builder"), ("exhausted", 1, False, "builder")]
    gate_end = h.events("node_end")[1]
    assert (gate_end.status, gate_end.error) == ("error", "OSError: disk on fire")
    assert outcome.status == "completed"
    assert "explodes" not in default_registries().checks


def test_an_invalid_workflow_is_refused_before_anything_runs(h: Harness) -> None:
    wf = chain(agent("builder", ["read_file", "browse_web"]))
    with pytest.raises(ConfigError, match="unknown tool 'browse_web'"):
        h.run(wf, FakeModel([]))
    assert not h.events_path.exists() or h.events() == []


def test_every_event_written_validates(h: Harness) -> None:
    wf = chain(agent("study", ["write_notes"]), agent("builder", BUILDER_TOOLS), gate())
    model = FakeModel(
        [reply(call("write_notes", text="x")), finish(), reply(call("run_tests")), finish()]
    )
    h.run(wf, model)
    kinds: Sequence[str] = [e.type for e in h.events()]
    assert kinds == [
        "node_start", "model_call", "notes_written", "tool_call", "model_call", "tool_call", "node_end",
        "node_start", "model_call", "tool_call", "model_call", "tool_call", "node_end",
        "node_start", "gate_decision", "node_end",
    ]  # fmt: skip
    times = [e.t for e in h.events()]
    assert times == sorted(times)
