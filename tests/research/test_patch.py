"""Realising patches on a workflow, the constraints they must obey, and change patterns."""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter

from loopwright.reflection import write_lesson
from loopwright.research._context import Rules
from loopwright.research._patch import pattern_of, realise
from loopwright.research._schemas import PatchOp
from loopwright.search import GUIDANCE
from loopwright.workflow import builtin_workflow, workflow_hash, workflow_to_json

OPS: TypeAdapter[list[PatchOp]] = TypeAdapter(list[PatchOp])
BASE = builtin_workflow("builder-only")


def apply(ops: list[dict[str, Any]], rules: Rules | None = None) -> Any:
    return realise(BASE, OPS.validate_python(ops), rules=rules or Rules())


def test_library_mutation_is_deterministic_for_a_seed() -> None:
    a = apply([{"op": "mutation", "operator": "gate_add", "seed": 5}])
    b = apply([{"op": "mutation", "operator": "gate_add", "seed": 5}])
    assert a.child is not None and workflow_hash(a.child) == workflow_hash(b.child)
    assert a.child.name == BASE.name
    assert pattern_of(BASE, a.child) == ("+gate:visible_tests_pass",)


def test_literal_edits_and_their_patterns() -> None:
    model = apply([{"op": "set_node", "node": "builder", "fields": {"model": "large"}}])
    assert pattern_of(BASE, model.child) == ("~agent:builder.model=large",)
    lesson = apply([{"op": "append_prompt", "node": "builder", "text": "Check every import."}])
    assert pattern_of(BASE, lesson.child) == ("~agent:builder.prompt",)  # text of no known kind
    known = GUIDANCE["imports"][0]
    guided = apply([{"op": "append_prompt", "node": "builder", "text": f"- {known}"}])
    assert pattern_of(BASE, guided.child) == ("~agent:builder.prompt[imports]",)
    lesson_text = write_lesson("signatures", 2, "TypeError: f() got an unexpected keyword", "")
    taught = apply([{"op": "append_prompt", "node": "builder", "text": lesson_text}])
    assert pattern_of(BASE, taught.child) == ("~agent:builder.prompt[signatures]",)
    doc = workflow_to_json(BASE).replace('"max_turns": 40', '"max_turns": 12')
    import json

    whole = apply([{"op": "replace_workflow", "workflow": json.loads(doc)}])
    assert pattern_of(BASE, whole.child) == ("~agent:builder.max_turns",)


def test_patches_that_cannot_apply_say_why() -> None:
    cases = [
        ([{"op": "set_node", "node": "ghost", "fields": {"model": "large"}}], None, "ghost"),
        ([{"op": "set_node", "node": "builder", "fields": {"id": "x"}}], None, "cannot set id"),
        ([{"op": "mutation", "operator": "node_remove", "seed": 1}], None, "did not apply"),
        ([{"op": "set_node", "node": "builder", "fields": {"model": "medium"}}], None, "unchanged"),
        ([{"op": "set_node", "node": "builder", "fields": {"prompt": "no task"}}], None, "instruction_file"),
        ([{"op": "mutation", "operator": "gate_add", "seed": 1}], Rules(forbid_operators=("gate_add",)), "forbid"),
        ([{"op": "mutation", "operator": "gate_add", "seed": 1}], Rules(max_nodes=1), "constraints allow 1"),
        ([{"op": "set_node", "node": "builder", "fields": {"model": "large"}}], Rules(protect_nodes=("builder",)), "protected"),
    ]  # fmt: skip
    for ops, rules, needle in cases:
        got = apply(ops, rules)
        assert got.child is None and needle in (got.error or ""), (ops, got.error)
