"""Property tests: every operator, on random valid workflows, either returns a valid child that
keeps the frozen nodes, or child=None with a reason; never raises; same seed, same child."""

from __future__ import annotations

import random

import networkx as nx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopwright.runtime import runtime_catalog
from loopwright.search._protocols import MutationContext
from loopwright.search.mutations._base import frozen_violation
from loopwright.search.mutations._core import MUTATIONS, RandomStrategy, mutate
from loopwright.search.mutations._roles import ROLES, make_role
from loopwright.workflow import (
    MODEL_TIERS,
    AgentNode,
    Edge,
    FnNode,
    GateNode,
    Node,
    Workflow,
    builtin_workflow,
    to_networkx,
    validate_workflow,
    workflow_hash,
)

BUILDER = builtin_workflow("builder-only").node("builder")
CATALOG = runtime_catalog()
FAILURE_TEXTS = ["edge case missed", "tests_failing", "import_error", "wrong signature", "timeout"]


def _agent(draw: st.DrawFn, node_id: str) -> AgentNode:
    role = draw(st.sampled_from([*sorted(ROLES), "builder"]))
    node = (
        make_role(role, node_id)
        if role != "builder"
        else BUILDER.model_copy(update={"id": node_id})
    )
    assert isinstance(node, AgentNode)
    return node.model_copy(update={"model": draw(st.sampled_from(MODEL_TIERS))})


@st.composite
def workflows(draw: st.DrawFn) -> Workflow:
    """A valid random DAG: 1-6 agents (role library + builder), each but the first fed by at
    least one earlier node; an optional fn node; 0-2 gates RELOOPing upstream; a frozen subset."""
    count = draw(st.integers(1, 6))
    nodes: list[Node] = [_agent(draw, f"a{i}") for i in range(count)]
    edges: list[Edge] = []
    for i in range(1, count):
        sources = draw(st.sets(st.integers(0, i - 1), min_size=1, max_size=2))
        edges += [Edge(source=f"a{s}", target=f"a{i}") for s in sorted(sources)]
    if draw(st.booleans()):
        at = draw(st.integers(0, count - 1))
        nodes.append(FnNode(id="fn_tests", fn="run_visible_tests"))
        edges.append(Edge(source=f"a{at}", target="fn_tests"))
    for j in range(draw(st.integers(0, 2))):
        wf = Workflow(name="w", nodes=tuple(nodes), edges=tuple(edges))
        after = draw(st.sampled_from([n.id for n in nodes]))
        upstream = sorted(nx.ancestors(to_networkx(wf), after) | {after})
        target = draw(st.sampled_from(upstream))
        gate = GateNode(
            id=f"g{j}",
            check=draw(st.sampled_from(["visible_tests_pass", "diff_nonempty"])),
            reloop_to=target,
            max_loops=draw(st.integers(1, 3)),
        )
        nodes.append(gate)
        edges.append(Edge(source=after, target=gate.id))
    ids = [n.id for n in nodes]
    frozen = draw(st.lists(st.sampled_from(ids), unique=True, max_size=len(ids)))
    wf = Workflow(name="random-wf", nodes=tuple(nodes), edges=tuple(edges), frozen=tuple(frozen))
    assert validate_workflow(wf, CATALOG) == [], validate_workflow(wf, CATALOG)
    return wf


def contexts(seed: int, failing: list[str]) -> MutationContext:
    return MutationContext(
        rng=random.Random(seed), failures={node: FAILURE_TEXTS for node in failing}
    )


PROPS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPS
@given(
    wf=workflows(),
    name=st.sampled_from(sorted(MUTATIONS)),
    seed=st.integers(0, 2**32 - 1),
    data=st.data(),
)
def test_operator_gives_valid_child_or_reason(
    wf: Workflow, name: str, seed: int, data: st.DataObject
) -> None:
    failing = data.draw(st.lists(st.sampled_from(list(wf.node_ids)), unique=True))
    result = MUTATIONS[name].apply(wf, contexts(seed, failing))
    assert result.operator == name
    if result.child is None:
        assert result.reason.strip()
        return
    child = result.child
    assert validate_workflow(child, CATALOG) == []
    assert frozen_violation(wf, child) is None
    for node_id in wf.frozen:
        assert child.node(node_id).model_dump() == wf.node(node_id).model_dump()
    assert workflow_hash(child) != workflow_hash(wf)
    assert child.name == wf.name
    assert any(isinstance(n, AgentNode) for n in child.nodes)


@PROPS
@given(wf=workflows(), name=st.sampled_from(sorted(MUTATIONS)), seed=st.integers(0, 2**32 - 1))
def test_operator_same_seed_same_child(wf: Workflow, name: str, seed: int) -> None:
    a = MUTATIONS[name].apply(wf, contexts(seed, list(wf.node_ids[:1])))
    b = MUTATIONS[name].apply(wf, contexts(seed, list(wf.node_ids[:1])))
    assert a.reason == b.reason and a.target == b.target
    assert (a.child is None) == (b.child is None)
    if a.child is not None and b.child is not None:
        assert workflow_hash(a.child) == workflow_hash(b.child)


@PROPS
@given(wf=workflows(), seed=st.integers(0, 2**32 - 1))
def test_mutate_never_raises_and_is_deterministic(wf: Workflow, seed: int) -> None:
    a = mutate(wf, RandomStrategy(), contexts(seed, []), max_tries=9)
    b = mutate(wf, RandomStrategy(), contexts(seed, []), max_tries=9)
    assert a.operator == b.operator and a.reason == b.reason
    if a.child is not None:
        assert b.child is not None and workflow_hash(a.child) == workflow_hash(b.child)
        assert validate_workflow(a.child, CATALOG) == []
        assert frozen_violation(wf, a.child) is None
    else:
        assert a.reason
