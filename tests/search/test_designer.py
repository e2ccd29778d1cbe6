from __future__ import annotations

import pytest

from loopwright.errors import ConfigError
from loopwright.runtime import runtime_catalog
from loopwright.search._designer import DESIGN_KINDS, design, missing_essentials
from loopwright.workflow import (
    AgentNode,
    GateNode,
    Workflow,
    builtin_workflow,
    builtin_workflow_names,
    prompt_placeholders,
    topological_order,
    validate_workflow,
)

SEEDS = builtin_workflow_names()


def agents(wf: Workflow) -> list[AgentNode]:
    return [n for n in wf.nodes if isinstance(n, AgentNode)]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("kind", DESIGN_KINDS)
def test_designs_validate_and_carry_the_essentials(seed: str, kind: str) -> None:
    wf = design(kind, builtin_workflow(seed))
    assert validate_workflow(wf, runtime_catalog()) == []
    assert wf.name == f"{seed}-design-{kind}"
    for node in agents(wf):
        fields = prompt_placeholders(node.prompt)
        assert {"instruction_file", "workspace", "rules"} <= fields, node.id
        assert "internet" in node.prompt and "tests" in node.prompt, node.id
        assert missing_essentials(node) == [], node.id
    builder = wf.node("builder")
    assert isinstance(builder, AgentNode)
    assert {"notes", "feedback"} <= prompt_placeholders(builder.prompt)


def test_minimal_is_a_single_builder() -> None:
    wf = design("minimal", builtin_workflow("research-build-verify"))
    assert [(n.id, n.kind) for n in wf.nodes] == [("builder", "agent")]
    assert wf.edges == ()


def test_thorough_is_the_five_step_pipeline_with_a_reloop() -> None:
    wf = design("thorough", builtin_workflow("builder-only"))
    assert topological_order(wf) == ["study", "test_writer", "builder", "reviewer", "gate_verify"]
    roles = [n.role for n in agents(wf)]
    assert roles == ["researcher", "test_writer", "builder", "reviewer"]
    gate = wf.node("gate_verify")
    assert isinstance(gate, GateNode) and gate.reloop_to == "builder"


def test_designs_reuse_the_seeds_builder_prompt() -> None:
    seed = builtin_workflow("builder-only")
    custom = seed.node("builder")
    assert isinstance(custom, AgentNode)
    tuned = custom.model_copy(update={"prompt": custom.prompt + "\nTUNED LINE", "model": "large"})
    seed = seed.model_copy(update={"nodes": (tuned,)})
    for kind in DESIGN_KINDS:
        builder = design(kind, seed).node("builder")
        assert isinstance(builder, AgentNode)
        assert "TUNED LINE" in builder.prompt and builder.model == "large"


def test_seed_builder_without_essentials_is_replaced() -> None:
    seed = builtin_workflow("builder-only")
    node = seed.node("builder")
    assert isinstance(node, AgentNode)
    bare = node.model_copy(update={"prompt": "Implement {instruction_file}."})
    assert missing_essentials(bare)
    wf = design("minimal", seed.model_copy(update={"nodes": (bare,)}))
    builder = wf.node("builder")
    assert isinstance(builder, AgentNode) and missing_essentials(builder) == []


def test_designs_are_deterministic() -> None:
    seed = builtin_workflow("builder-only")
    assert design("thorough", seed) == design("thorough", seed)


def test_unknown_kind_lists_the_known_ones() -> None:
    with pytest.raises(ConfigError, match="unknown design kind") as err:
        design("baroque", builtin_workflow("builder-only"))
    assert "minimal" in str(err.value) and "thorough" in str(err.value)
