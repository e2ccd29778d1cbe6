from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

import pytest

from loopwright.errors import ConfigError, UsageError
from loopwright.models import ScriptedModel
from loopwright.runtime import runtime_catalog
from loopwright.search._protocols import MutationContext, MutationResult
from loopwright.search.mutations._base import MutationRegistry
from loopwright.search.mutations._core import MUTATIONS, RandomStrategy, mutate, mutation
from loopwright.search.mutations._node import LoopTypeChange
from loopwright.search.mutations._prompt import GUIDANCE
from loopwright.workflow import (
    LESSONS_HEADER,
    AgentNode,
    Edge,
    GateNode,
    Workflow,
    builtin_workflow,
    check_workflow,
    gates,
    prompt_placeholders,
    workflow_hash,
)

SEED = builtin_workflow("builder-only")
RBV = builtin_workflow("research-build-verify")
THOROUGH = builtin_workflow("thorough")

# A workflow each operator can change (parallelize needs two read-only agents in a row after
# another node; gate_add needs a writer without a verify gate).
PARALLEL = Workflow(
    name="par",
    nodes=(
        *SEED.nodes,
        RBV.node("study").model_copy(update={"id": "r0"}),
        RBV.node("study").model_copy(update={"id": "r1"}),
        THOROUGH.node("reviewer").model_copy(update={"id": "fixer"}),
    ),
    edges=tuple(
        Edge(source=s, target=t) for s, t in [("builder", "r0"), ("r0", "r1"), ("r1", "fixer")]
    ),
)

WORKS_ON: Mapping[str, Workflow] = {
    "node_insert": SEED,
    "node_remove": RBV,
    "edge_rewire": THOROUGH,
    "parallelize": PARALLEL,
    "gate_add": SEED,
    "gate_remove": RBV,
    "model_tier_change": SEED,
    "prompt_mutate": SEED,
}


def ctx(seed: int = 0, **kw: object) -> MutationContext:
    return MutationContext(rng=random.Random(seed), **kw)  # type: ignore[arg-type]  # test kwargs


def assert_good_child(parent: Workflow, result: MutationResult) -> Workflow:
    assert result.child is not None, result.reason
    child = result.child
    check_workflow(child, runtime_catalog())
    assert workflow_hash(child) != workflow_hash(parent)
    assert child.name == parent.name
    for node_id in parent.frozen:
        assert child.node(node_id) == parent.node(node_id)
    return child


def test_registry_holds_every_operator() -> None:
    assert set(MUTATIONS) == {
        "node_insert",
        "node_remove",
        "edge_rewire",
        "parallelize",
        "gate_add",
        "gate_remove",
        "loop_type_change",
        "model_tier_change",
        "prompt_mutate",
    }


def test_unknown_operator_is_config_error_listing_known() -> None:
    with pytest.raises(ConfigError, match="node_insert"):
        MUTATIONS["teleport"]
    with pytest.raises(ConfigError, match="teleport"):
        RandomStrategy(["teleport"])


def test_mutation_decorator_registers_instance_name() -> None:
    registry = MutationRegistry()
    assert len(registry) == 0
    with pytest.raises(ConfigError):
        registry["x"]
    # the module-level decorator fills MUTATIONS; a taken name is refused
    with pytest.raises(UsageError, match="already registered"):
        mutation("node_insert", axis="topology")(LoopTypeChange)
    assert MUTATIONS["loop_type_change"].name == "loop_type_change"


def test_every_operator_is_registered_on_an_axis() -> None:
    assert dict(MUTATIONS.axes()) == {
        "topology": ("node_insert", "node_remove", "edge_rewire", "parallelize"),
        "verification": ("gate_add", "gate_remove"),
        "agent_loop": ("loop_type_change",),
        "model_tier": ("model_tier_change",),
        "prompt": ("prompt_mutate",),
    }
    assert MUTATIONS["gate_add"].axis == "verification"


def test_the_mutation_decorator_carries_the_axis_and_refuses_none() -> None:
    registry = MutationRegistry()
    mutation("a", axis="topology", registry=registry)(LoopTypeChange())
    mutation("b", axis="memory", registry=registry)(LoopTypeChange())
    mutation("c", axis="topology", registry=registry)(LoopTypeChange())
    assert registry.names() == ("a", "b", "c")  # registration order: the random draw's order
    assert registry.axes() == (("topology", ("a", "c")), ("memory", ("b",)))
    assert "memory" not in dict(MUTATIONS.axes())  # a registry of its own leaves MUTATIONS be
    with pytest.raises(UsageError, match="names no axis") as info:
        mutation("d", axis=" ", registry=registry)
    assert "axis=" in (info.value.fix or "")


@pytest.mark.parametrize("name", sorted(WORKS_ON))
def test_operator_makes_valid_changed_child(name: str) -> None:
    parent = WORKS_ON[name]
    result = MUTATIONS[name].apply(parent, ctx(3))
    assert result.operator == name
    assert_good_child(parent, result)


@pytest.mark.parametrize("name", sorted(WORKS_ON))
def test_operator_keeps_frozen_nodes(name: str) -> None:
    parent = WORKS_ON[name]
    # freeze everything the operator need not touch: the first agent unless it is the only one
    frozen = tuple(n.id for n in parent.nodes if isinstance(n, GateNode))
    if name in ("node_insert", "gate_add"):
        frozen = ("builder",)
    wf = parent.model_copy(update={"frozen": frozen})
    for seed in range(6):
        result = MUTATIONS[name].apply(wf, ctx(seed))
        if result.child is not None:
            assert_good_child(wf, result)
        else:
            assert result.reason


def test_node_insert_adds_functional_agent_and_notes_to_builder() -> None:
    seen_roles = set()
    for seed in range(20):
        result = MUTATIONS["node_insert"].apply(SEED, ctx(seed))
        child = assert_good_child(SEED, result)
        new = child.node(result.target or "")
        assert isinstance(new, AgentNode)
        seen_roles.add(new.role)
        assert {"instruction_file", "workspace", "rules"} <= prompt_placeholders(new.prompt)
        assert "write_notes" in new.tools
    assert {"researcher", "reviewer"} <= seen_roles


def test_node_insert_gives_builder_without_notes_a_notes_section() -> None:
    builder = SEED.node("builder")
    assert isinstance(builder, AgentNode)
    bare = builder.model_copy(
        update={"prompt": "Read {instruction_file} and change {workspace}. {rules}"}
    )
    wf = SEED.model_copy(update={"nodes": (bare,)})
    for seed in range(10):
        result = MUTATIONS["node_insert"].apply(wf, ctx(seed))
        child = assert_good_child(wf, result)
        new = child.node(result.target or "")
        if isinstance(new, AgentNode) and new.role in ("researcher", "planner", "test_writer"):
            prompt = child.node("builder").prompt  # type: ignore[union-attr]  # agent
            assert "Notes from earlier steps:\n{notes}" in prompt
            return
    pytest.fail("no preparing role was inserted in 10 seeds")


def test_node_insert_leaves_frozen_builder_prompt_alone() -> None:
    builder = SEED.node("builder")
    bare = builder.model_copy(update={"prompt": "Read {instruction_file} in {workspace}."})
    wf = SEED.model_copy(update={"nodes": (bare,), "frozen": ("builder",)})
    for seed in range(10):
        child = assert_good_child(wf, MUTATIONS["node_insert"].apply(wf, ctx(seed)))
        assert child.node("builder") == bare


def test_node_remove_never_removes_the_last_agent() -> None:
    result = MUTATIONS["node_remove"].apply(SEED, ctx())
    assert result.child is None
    assert "last agent" in result.reason


def test_node_remove_retargets_reloop_of_removed_builder() -> None:
    for seed in range(10):
        result = MUTATIONS["node_remove"].apply(RBV, ctx(seed))
        if result.target == "builder":
            child = assert_good_child(RBV, result)
            assert [g.reloop_to for g in gates(child)] == ["study"]
            return
    pytest.fail("builder never removed")


def test_gate_add_relooping_to_writer_with_bounded_loops() -> None:
    for seed in range(10):
        child = assert_good_child(SEED, MUTATIONS["gate_add"].apply(SEED, ctx(seed)))
        (gate,) = gates(child)
        assert gate.check == "visible_tests_pass"
        assert gate.reloop_to == "builder"
        assert 1 <= gate.max_loops <= 3


def test_gate_remove_keeps_frozen_gate() -> None:
    wf = RBV.model_copy(update={"frozen": ("gate_verify",)})
    result = MUTATIONS["gate_remove"].apply(wf, ctx())
    assert result.child is None and "frozen" in result.reason


def test_loop_type_change_reports_when_only_react_runs() -> None:
    op = LoopTypeChange(loops=("react",))
    op.name = "loop_type_change"
    result = op.apply(SEED, ctx())
    assert result.child is None
    assert "runtime implements react of" in result.reason


def test_loop_type_change_uses_implemented_loops() -> None:
    op = LoopTypeChange(loops=("react", "plan_execute"))
    op.name = "loop_type_change"
    child = assert_good_child(SEED, op.apply(SEED, ctx()))
    assert child.node("builder").loop == "plan_execute"  # type: ignore[union-attr]  # agent


def test_loop_type_change_offers_only_registered_loops() -> None:
    runnable = LoopTypeChange().runnable()
    result = MUTATIONS["loop_type_change"].apply(SEED, ctx())
    if len(runnable) > 1:
        child = assert_good_child(SEED, result)
        assert child.node("builder").loop in runnable  # type: ignore[union-attr]  # agent
    else:
        assert result.child is None


def test_parallelize_makes_read_only_agents_siblings() -> None:
    child = assert_good_child(PARALLEL, MUTATIONS["parallelize"].apply(PARALLEL, ctx()))
    pairs = {(e.source, e.target) for e in child.edges}
    assert ("builder", "r1") in pairs and ("r0", "fixer") in pairs
    assert ("r0", "r1") not in pairs


def test_model_tier_change_picks_another_tier() -> None:
    child = assert_good_child(SEED, MUTATIONS["model_tier_change"].apply(SEED, ctx()))
    assert child.node("builder").model in ("small", "large")  # type: ignore[union-attr]


# -- prompt_mutate ---------------------------------------------------------------------------


def builder_prompt(wf: Workflow) -> str:
    node = wf.node("builder")
    assert isinstance(node, AgentNode)
    return node.prompt


def test_offline_prompt_mutate_aims_at_edge_case_failures() -> None:
    failures = {"builder": ["t1: missed an edge case with empty input", "t2: edge case"]}
    for seed in range(5):
        result = MUTATIONS["prompt_mutate"].apply(SEED, ctx(seed, failures=failures))
        child = assert_good_child(SEED, result)
        prompt = builder_prompt(child)
        assert LESSONS_HEADER in prompt
        assert any(s in prompt for s in GUIDANCE["edge_cases"])
        assert prompt_placeholders(prompt) == prompt_placeholders(builder_prompt(SEED))


def test_offline_prompt_mutate_runs_out_of_guidance() -> None:
    wf = SEED
    for _ in range(sum(len(v) for v in GUIDANCE.values())):
        result = MUTATIONS["prompt_mutate"].apply(wf, ctx())
        wf = assert_good_child(wf, result)
    result = MUTATIONS["prompt_mutate"].apply(wf, ctx())
    assert result.child is None and "every guidance sentence" in result.reason


def meta(reply: str) -> ScriptedModel:
    return ScriptedModel([reply])


def test_prompt_mutate_takes_meta_model_reply() -> None:
    new = (
        "You are the builder for {task_id}. Read {instruction_file}, work in {workspace}.\n"
        "{rules}\n{notes}\n{feedback}\nCheck every edge case."
    )
    model = meta(f"```\n{new}\n```")
    result = MUTATIONS["prompt_mutate"].apply(SEED, ctx(meta_model=model))
    child = assert_good_child(SEED, result)
    assert builder_prompt(child) == new
    assert "meta model" in result.reason
    assert model.calls == 1


def test_prompt_mutate_asks_with_task_kind_and_failures() -> None:
    sent: list[str] = []

    def script(messages: Sequence[object], tools: Sequence[object]) -> str:
        sent.append(messages[-1].content)  # type: ignore[attr-defined]  # Message
        return "no placeholders at all"

    failures = {"builder": ["t9: wrong_signature in foo()"]}
    MUTATIONS["prompt_mutate"].apply(
        SEED,
        ctx(meta_model=ScriptedModel(script), failures=failures, task_kind="toy tasks"),
    )
    assert "toy tasks" in sent[0] and "t9: wrong_signature" in sent[0]
    assert "{instruction_file}" in sent[0]


def test_prompt_mutate_falls_back_when_meta_drops_instruction_file() -> None:
    result = MUTATIONS["prompt_mutate"].apply(
        SEED, ctx(meta_model=meta("Just build it in {workspace}."))
    )
    child = assert_good_child(SEED, result)
    assert "{instruction_file}" in builder_prompt(child)
    assert LESSONS_HEADER in builder_prompt(child)
    assert "dropped" in result.reason or "drops" in result.reason


def test_prompt_mutate_falls_back_on_unknown_placeholder() -> None:
    reply = builder_prompt(SEED) + "\n{secret}"
    result = MUTATIONS["prompt_mutate"].apply(SEED, ctx(meta_model=meta(reply)))
    assert_good_child(SEED, result)
    assert "unknown" in result.reason


def test_prompt_mutate_falls_back_when_meta_model_fails() -> None:
    result = MUTATIONS["prompt_mutate"].apply(SEED, ctx(meta_model=ScriptedModel([])))
    assert_good_child(SEED, result)
    assert "call failed" in result.reason


# -- strategy and mutate ---------------------------------------------------------------------


def test_random_strategy_is_uniform_and_seeded() -> None:
    names = list(MUTATIONS)
    picks = [RandomStrategy().choose(SEED, names, ctx(s)) for s in range(200)]
    assert set(picks) == set(names)
    again = [RandomStrategy().choose(SEED, names, ctx(s)) for s in range(200)]
    assert picks == again


def test_random_strategy_restricted_to_its_operators() -> None:
    strategy = RandomStrategy(["gate_add"])
    assert strategy.choose(SEED, list(MUTATIONS), ctx()) == "gate_add"


def test_mutate_retries_until_an_operator_applies() -> None:
    ops = ["parallelize", "gate_remove", "node_remove", "model_tier_change"]
    result = mutate(SEED, RandomStrategy(), ctx(), operators=ops, max_tries=4)
    assert result.operator == "model_tier_change"
    assert_good_child(SEED, result)


def test_mutate_returns_last_failure_when_none_applies() -> None:
    ops = ["parallelize", "gate_remove", "node_remove", "edge_rewire"]
    result = mutate(SEED, RandomStrategy(), ctx(), operators=ops)
    assert result.child is None
    assert result.operator in ops and result.reason


def test_mutate_is_deterministic_for_same_seed() -> None:
    a = mutate(THOROUGH, RandomStrategy(), ctx(11))
    b = mutate(THOROUGH, RandomStrategy(), ctx(11))
    assert a.operator == b.operator and a.reason == b.reason
    assert a.child is not None and b.child is not None
    assert workflow_hash(a.child) == workflow_hash(b.child)


def test_mutate_rejects_bad_configuration() -> None:
    with pytest.raises(ConfigError):
        mutate(SEED, RandomStrategy(), ctx(), max_tries=0)
    with pytest.raises(ConfigError, match="teleport"):
        mutate(SEED, RandomStrategy(), ctx(), operators=["teleport"])


def test_an_operator_added_without_the_decorator_is_on_the_empty_axis() -> None:
    class Bare:
        name = "bare"

        def apply(self, parent: Workflow, ctx: MutationContext) -> MutationResult:
            return MutationResult("bare", None, "never applies")

    registry = MutationRegistry()
    registry.add("bare", Bare())  # type: ignore[arg-type]  # a protocol object without an axis
    assert registry.axes() == (("", ("bare",)),)
