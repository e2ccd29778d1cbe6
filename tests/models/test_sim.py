from __future__ import annotations

from pathlib import Path

import pytest

from loopwright.models import GUIDANCE_KEYWORDS, Message, SimModel, ToolSpec
from loopwright.models._sim import NO_TASK, find_instruction_path, sim_role
from loopwright.models._sim_policy import has_failing_feedback
from loopwright.models._sim_study import PITFALLS
from loopwright.models._sim_task import TaskFacts
from loopwright.tasks import Benchmark, FailureKind
from tests.models.conftest import fresh_tools
from tests.models.driver import (
    agent,
    builder_only,
    render,
    research_build_verify,
    run_node,
)

BUILDER = agent("builder-only", "builder")
STUDY = agent("research-build-verify", "study")


def _calls(runs: list) -> list[tuple[str, str]]:  # type: ignore[type-arg]
    return [(c.name, c.arguments_json) for run in runs for c in run.calls]


def test_same_seed_gives_the_same_tool_calls(mini: Benchmark, tmp_path: Path) -> None:
    task = mini.task("l1-roman-numerals")
    first = research_build_verify(SimModel(mini, 3), task, fresh_tools(task, tmp_path))
    again = research_build_verify(SimModel(mini, 3), task, fresh_tools(task, tmp_path))
    assert _calls(first) == _calls(again)
    others = [
        _calls(builder_only(SimModel(mini, s), task, fresh_tools(task, tmp_path, quiet=True)))
        for s in range(8)
    ]
    assert len({str(c) for c in others}) > 1  # the seed matters


def test_without_an_instruction_path_it_writes_nothing(mini: Benchmark, tmp_path: Path) -> None:
    task = mini.task("l1-slugify")
    tools = fresh_tools(task, tmp_path)
    model = SimModel(mini, 0)
    prompt = "You are the builder. Implement the feature in {workspace} and run the tests."
    run = run_node(model, render(prompt, task, tools), BUILDER.tools, tools)
    assert [c.name for c in run.calls] == ["list_files", "finish"]
    assert tools.finished is not None and NO_TASK in tools.finished
    assert model.decisions[-1].reason == NO_TASK
    assert (tools.workspace / "textkit/transform.py").read_text() == (
        task.repo_dir / "textkit/transform.py"
    ).read_text()


def test_an_unrecognised_instruction_is_not_the_task(mini: Benchmark, tmp_path: Path) -> None:
    task = mini.task("l1-slugify")
    tools = fresh_tools(task, tmp_path)
    other = tmp_path / "other" / "instruction.md"
    other.parent.mkdir()
    other.write_text("Do something unrelated.\n")
    tools.instruction = other
    run = run_node(SimModel(mini, 0), render(BUILDER.prompt, task, tools), BUILDER.tools, tools)
    assert [c.name for c in run.calls] == ["read_file", "list_files", "finish"]


def test_builder_writes_a_real_variant_of_the_task(mini: Benchmark, tmp_path: Path) -> None:
    task = mini.task("l2-kvstore-json-backend")
    facts = TaskFacts.load(task)
    for seed in range(4):
        tools = fresh_tools(task, tmp_path, quiet=True)
        model = SimModel(mini, seed)
        runs = builder_only(model, task, tools)
        variant = model.decisions[-1].variant
        assert variant is not None
        written = [c.arguments() for c in runs[0].calls if c.name == "write_file"]
        assert written, "a builder that read the task writes files"
        for args in written:
            path, content = str(args["path"]), args["content"]
            expected = facts.variants[variant].get(path, facts.repo.get(path))
            assert content == expected
            assert (tools.workspace / path).read_text() == expected
        names = [c.name for c in runs[0].calls]
        assert names[0] == "read_file" and names[-2:] == ["run_tests", "finish"]


def test_edit_only_builder_edits_what_it_read(mini: Benchmark, tmp_path: Path) -> None:
    task = mini.task("l1-roman-numerals")
    tools = fresh_tools(task, tmp_path, quiet=True)
    model = SimModel(mini, 1)
    run = run_node(model, render(BUILDER.prompt, task, tools), ["read_file", "edit_file"], tools)
    variant = model.decisions[-1].variant
    assert variant is not None
    assert [c.name for c in run.calls][-2:] == ["edit_file", "finish"]
    expected = TaskFacts.load(task).variants[variant]["numfmt/roman.py"]
    assert (tools.workspace / "numfmt/roman.py").read_text() == expected


def test_study_lists_then_reads_and_its_notes_name_the_files(
    mini: Benchmark, tmp_path: Path
) -> None:
    task = mini.task("l2-logsum-min-level")
    tools = fresh_tools(task, tmp_path)
    run = run_node(SimModel(mini, 0), render(STUDY.prompt, task, tools), STUDY.tools, tools)
    names = [c.name for c in run.calls]
    assert names[:3] == ["read_file", "list_files", "read_file"]
    assert names[-2:] == ["write_notes", "finish"]
    assert "write_file" not in names
    (notes,) = tools.notes
    # the instruction names every file the change touches, so the notes do too
    assert TaskFacts.load(task).coverage(notes) == 1.0
    # pitfalls come from the instruction's text: it names signatures, errors, several modules
    for kind in (FailureKind.WRONG_SIGNATURE, FailureKind.MISSED_EDGE_CASE):
        assert PITFALLS[kind] in notes


def test_researcher_without_the_task_writes_empty_notes(mini: Benchmark, tmp_path: Path) -> None:
    task = mini.task("l2-logsum-min-level")
    tools = fresh_tools(task, tmp_path)
    run_node(SimModel(mini, 0), "Study the repository.", STUDY.tools, tools)
    (notes,) = tools.notes
    assert TaskFacts.load(task).coverage(notes) == 0.0


def test_reviewer_reads_and_writes_nothing(mini: Benchmark, tmp_path: Path) -> None:
    task = mini.task("l1-csv-row")
    tools = fresh_tools(task, tmp_path, quiet=True)
    prompt = render(BUILDER.prompt, task, tools)
    run = run_node(
        SimModel(mini, 0), prompt, ["read_file", "list_files", "run_tests", "finish"], tools
    )
    assert {c.name for c in run.calls} == {"read_file", "list_files", "run_tests", "finish"}


def test_roles_come_from_the_tools() -> None:
    assert sim_role(["read_file", "write_file"]) == "builder"
    assert sim_role(["edit_file", "write_notes"]) == "builder"
    assert sim_role(["read_file", "write_notes"]) == "researcher"
    assert sim_role(["read_file", "run_tests"]) == "reviewer"


def test_instruction_path_is_found_in_prose() -> None:
    assert (
        find_instruction_path("Read /tmp/run-1/instruction.md first.")
        == "/tmp/run-1/instruction.md"
    )
    assert (
        find_instruction_path("The task instruction is in `/a/b/instruction.md`.")
        == "/a/b/instruction.md"
    )
    assert find_instruction_path("Read the instruction and act.") is None


def test_feedback_heading_alone_is_not_feedback() -> None:
    empty = BUILDER.prompt.replace("{feedback}", "").replace("{notes}", "")
    assert not has_failing_feedback(empty)
    failing = BUILDER.prompt.replace("{feedback}", "exit code 1\nFAILED tests/test_x.py::t - boom")
    assert has_failing_feedback(failing)
    assert has_failing_feedback("=== 2 failed, 3 passed in 0.1s ===")
    assert not has_failing_feedback("exit code 0\n5 passed")


def test_pitfalls_carry_their_kinds_keywords() -> None:
    for kind in FailureKind:
        assert any(word in PITFALLS[kind].lower() for word in GUIDANCE_KEYWORDS[kind])


def test_responses_are_simulated_and_count_tokens(mini: Benchmark) -> None:
    task = mini.task("l1-slugify")
    model = SimModel(mini, 0)
    messages = [Message("system", "s"), Message("user", f"Read {task.root}/instruction.md")]
    reply = model.chat(messages, [ToolSpec("read_file", "")])
    assert (reply.model, reply.simulated, reply.latency_s) == ("sim-coder-1", True, 0.0)
    assert reply.usage.input_tokens == len(messages[1].content) // 4
    assert reply.usage.output_tokens > 0
    assert model.chat(messages, [ToolSpec("read_file", "")]).tool_calls[0].name == "read_file"


def test_a_repeated_call_gets_the_same_answer(mini: Benchmark) -> None:
    task = mini.task("l1-slugify")
    model = SimModel(mini, 0)
    tools = [ToolSpec(n, "") for n in ("read_file", "list_files", "write_file", "finish")]
    messages = [Message("system", "s"), Message("user", f"Read {task.root}/instruction.md")]
    first = model.chat(messages, tools).tool_calls[0]
    messages += [
        Message("assistant", "", (first,)),
        Message("tool", task.instruction, tool_call_id=first.id, name="read_file"),
    ]
    second = model.chat(messages, tools)
    assert model.chat(messages, tools) == second
    assert second.tool_calls[0].name == "list_files"


@pytest.mark.parametrize("task_id", ["l1-roman-numerals", "l2-todocli-done-command"])
def test_reloop_with_feedback_repairs_to_gold(
    mini: Benchmark, tmp_path: Path, task_id: str
) -> None:
    """End to end with real visible tests: some seed writes a flawed variant that fails them,
    and a later builder run with that feedback writes the gold."""
    task = mini.task(task_id)
    facts = TaskFacts.load(task)
    for seed in range(40):
        tools = fresh_tools(task, tmp_path)
        model = SimModel(mini, seed)
        research_build_verify(model, task, tools)
        reasons = [d.reason for d in model.decisions if d.role == "builder"]
        if "repair" in reasons:
            break
    else:
        pytest.fail("no seed in 0..39 repaired after failing feedback")
    assert reasons[0] == "fresh" and reasons[-1] == "repair"
    for path, text in facts.variants["gold"].items():
        assert (tools.workspace / path).read_text() == text
    assert tools.t_run_tests().startswith("exit code 0")


def test_without_tools_it_judges_by_its_prompt(mini: Benchmark) -> None:
    model = SimModel(mini, 0)
    quiet = [Message("system", "judge"), Message("user", "Did the step succeed?")]
    assert model.chat(quiet, []).text.startswith("PASS")
    failing = [Message("system", "judge"), Message("user", "exit code 1\n2 failed")]
    reply = model.chat(failing, [])
    assert reply.text.startswith("FAIL") and not reply.tool_calls
