"""Crossover with a meta model: a fenced JSON child is taken through the one structured ask;
a reply that reproduces the mate, or is no workflow, falls back to the offline graft."""

from __future__ import annotations

import random

from loopwright.models import ScriptedModel
from loopwright.search._protocols import MutationContext
from loopwright.search.mutations._crossover import Crossover
from loopwright.workflow import AgentNode, Workflow, workflow_hash, workflow_to_json
from tests.reflection.records import with_gate, with_study


def ctx(model: ScriptedModel) -> MutationContext:
    return MutationContext(rng=random.Random(0), meta_model=model)


def renamed_builder(wf: Workflow) -> Workflow:
    nodes = tuple(
        n.model_copy(update={"prompt": n.prompt + "\nCheck every example."})
        if isinstance(n, AgentNode) and n.id == "builder"
        else n
        for n in wf.nodes
    )
    return wf.model_copy(update={"nodes": nodes, "name": "something-else"})


def test_a_fenced_json_child_from_the_meta_model_is_taken_under_the_parents_name() -> None:
    parent, mate = with_gate(), with_study()
    child = renamed_builder(parent)
    model = ScriptedModel([f"Here you go:\n```json\n{workflow_to_json(child)}\n```"])
    result = Crossover(mate, "builder", None).apply(parent, ctx(model))
    assert result.child is not None and model.calls == 1
    assert result.child.name == parent.name
    assert "Check every example." in str(result.child.node("builder"))
    assert result.reason == "meta model combined the parents"


def test_a_reply_reproducing_the_mate_falls_back_to_the_offline_graft() -> None:
    parent, mate = with_gate(), with_study()
    model = ScriptedModel([workflow_to_json(mate.model_copy(update={"name": parent.name}))])
    result = Crossover(mate, "builder", None).apply(parent, ctx(model))
    assert result.child is not None and model.calls == 1  # asked once: no retry
    assert workflow_hash(result.child) != workflow_hash(mate)
    assert result.reason.startswith("meta model reply rejected (it reproduces parent B)")
    assert "offline crossover took" in result.reason


def test_a_reply_that_is_no_workflow_falls_back_with_the_reason() -> None:
    model = ScriptedModel(['{"nodes": "none"}'])
    result = Crossover(with_study(), "builder", None).apply(with_gate(), ctx(model))
    assert result.child is not None
    assert "meta model reply rejected (not a workflow" in result.reason
