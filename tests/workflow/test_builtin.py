from __future__ import annotations

from pathlib import Path

import pytest

from loopwright.errors import ConfigError
from loopwright.workflow import (
    PLACEHOLDERS,
    AgentNode,
    GateNode,
    Workflow,
    builtin_workflow,
    builtin_workflow_names,
    dump_workflow,
    fill_prompt,
    resolve_workflow,
    topological_order,
    validate_workflow,
)

NAMES = builtin_workflow_names()
TASK_WORKFLOWS = [n for n in NAMES if n != "outer-loop"]  # the outer loop has no builder
WRITE_TOOLS = {"write_file", "edit_file", "run_command"}


def agents(wf: Workflow) -> list[AgentNode]:
    return [n for n in wf.nodes if isinstance(n, AgentNode)]


def all_agents() -> list[tuple[str, AgentNode]]:
    return [(name, a) for name in NAMES for a in agents(builtin_workflow(name))]


def test_the_builtins_are_shipped() -> None:
    assert NAMES == ["builder-only", "outer-loop", "research-build-verify", "thorough"]


def test_outer_loop_shape() -> None:
    wf = builtin_workflow("outer-loop")
    assert topological_order(wf) == [
        "seed", "evaluate", "reflect", "evolve", "gate_converge", "finalize"
    ]  # fmt: skip
    gate = wf.node("gate_converge")
    assert isinstance(gate, GateNode)
    assert (gate.check, gate.reloop_to) == ("outer_converged", "evaluate")
    assert agents(wf) == []


@pytest.mark.parametrize("name", NAMES)
def test_builtin_is_valid_and_named_after_its_file(name: str) -> None:
    wf = builtin_workflow(name)
    assert wf.name == name
    assert wf.description
    assert validate_workflow(wf) == []


def test_builder_only_is_one_builder() -> None:
    wf = builtin_workflow("builder-only")
    assert [(n.id, n.kind) for n in wf.nodes] == [("builder", "agent")]
    assert wf.edges == ()


def test_research_build_verify_shape() -> None:
    wf = builtin_workflow("research-build-verify")
    assert topological_order(wf) == ["study", "builder", "gate_verify"]
    study = wf.node("study")
    assert isinstance(study, AgentNode) and study.role == "researcher"
    assert "write_notes" in study.tools
    assert not WRITE_TOOLS & set(study.tools)  # read-only apart from its notes
    gate = wf.node("gate_verify")
    assert isinstance(gate, GateNode)
    assert (gate.check, gate.reloop_to, gate.max_loops) == ("visible_tests_pass", "builder", 3)


def test_thorough_shape() -> None:
    wf = builtin_workflow("thorough")
    assert topological_order(wf) == ["study", "test_writer", "builder", "reviewer", "gate_verify"]
    gate = wf.node("gate_verify")
    assert isinstance(gate, GateNode)
    assert (gate.reloop_to, gate.max_loops) == ("builder", 3)


@pytest.mark.parametrize(("name", "agent"), all_agents(), ids=lambda v: getattr(v, "id", v))
def test_every_builtin_prompt_states_the_working_rules(name: str, agent: AgentNode) -> None:
    prompt = agent.prompt
    assert "{instruction_file}" in prompt
    assert "{workspace}" in prompt
    assert "{rules}" in prompt
    assert "no internet access" in prompt
    assert "existing tests" in prompt
    assert "source files" in prompt
    assert "visible tests" in prompt
    assert "{task_id}" in prompt


@pytest.mark.parametrize("name", TASK_WORKFLOWS)
def test_builder_prompts_use_notes_and_feedback(name: str) -> None:
    builder = builtin_workflow(name).node("builder")
    assert isinstance(builder, AgentNode)
    assert "{notes}" in builder.prompt
    assert "{feedback}" in builder.prompt


def test_the_seed_builder_prompt_is_shared_word_for_word() -> None:
    seed = builtin_workflow("builder-only").node("builder")
    verify = builtin_workflow("research-build-verify").node("builder")
    assert seed == verify


@pytest.mark.parametrize(("name", "agent"), all_agents(), ids=lambda v: getattr(v, "id", v))
def test_every_builtin_prompt_fills(name: str, agent: AgentNode) -> None:
    values = {key: f"<{key}>" for key in PLACEHOLDERS}
    text = fill_prompt(agent.prompt, values)
    assert "<instruction_file>" in text
    assert "{" not in text.replace("{{", "")


def test_unknown_builtin_lists_the_known() -> None:
    with pytest.raises(ConfigError, match="unknown built-in workflow 'fancy'") as info:
        builtin_workflow("fancy")
    assert "builder-only, outer-loop, research-build-verify, thorough" in str(info.value)


def test_resolve_a_builtin_by_name() -> None:
    assert resolve_workflow("thorough") == builtin_workflow("thorough")


def test_resolve_a_file_by_path(tmp_path: Path) -> None:
    path = tmp_path / "mine.json"
    dump_workflow(builtin_workflow("builder-only"), path)
    assert resolve_workflow(str(path)) == builtin_workflow("builder-only")


def test_resolve_neither_names_both_possibilities(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        resolve_workflow(str(tmp_path / "missing.yaml"))
    message = str(info.value)
    assert "neither a built-in workflow, a library workflow nor a workflow file" in message
    assert "builder-only, outer-loop, research-build-verify, thorough" in message
    assert ".yaml, .yml or .json" in message
