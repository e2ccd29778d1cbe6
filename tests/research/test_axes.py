"""The research taxonomy is derived from the registered mutation operators: a new operator
registered with `@mutation(name, axis=...)` lands on its axis (a new axis included), and a
THINK spec using it runs instead of crashing the loop."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from loopwright.research import AXES, check_contracts
from loopwright.research._axes import axis_of_operator, library_axes
from loopwright.search import MUTATIONS, mutation
from loopwright.search._protocols import MutationContext
from loopwright.search.mutations._base import Operator, Proposal, Skip, agents, replace_node
from loopwright.workflow import Workflow
from tests.research.conftest import Meta, envelope, make_loop, make_workdir, records, spec

LESSON = "\nBefore you finish, read your diff once more."


class AddReminder(Operator):
    """A test operator: appends one sentence to the first non-frozen agent's prompt."""

    def propose(self, parent: Workflow, ctx: MutationContext) -> Proposal | Skip:
        targets = [a for a in agents(parent) if LESSON not in a.prompt]
        if not targets:
            return Skip("every prompt holds the reminder")
        node = targets[0]
        child = replace_node(parent, node.model_copy(update={"prompt": node.prompt + LESSON}))
        return Proposal(child, node.id, f"reminder added to {node.id!r}")


@pytest.fixture
def reminder() -> Iterator[str]:
    """`add_reminder` registered on a new axis, `memory`, for the test only."""
    mutation("add_reminder", axis="memory")(AddReminder)
    try:
        yield "add_reminder"
    finally:
        MUTATIONS.remove("add_reminder")


def test_the_built_in_taxonomy_is_derived_from_the_operators() -> None:
    assert library_axes() == AXES
    assert [(a.name, a.operators) for a in AXES] == [
        ("prompt", ("prompt_mutate",)),
        ("verification", ("gate_add", "gate_remove")),
        ("topology", ("node_insert", "node_remove", "edge_rewire", "parallelize")),
        ("agent_loop", ("loop_type_change",)),
        ("model_tier", ("model_tier_change",)),
    ]
    on = {op for a in AXES for op in a.operators}
    assert on == set(MUTATIONS)  # every registered operator is on an axis


def test_a_new_operator_lands_on_its_axis(reminder: str) -> None:
    axes = library_axes()
    assert axes[: len(AXES)] == AXES  # the built-ins keep their order
    (added,) = axes[len(AXES) :]
    assert (added.name, added.operators) == ("memory", (reminder,))
    assert axis_of_operator(reminder) == "memory"
    assert axis_of_operator("teleport") is None


def test_a_think_spec_with_a_newly_registered_operator_runs(reminder: str, tmp_path: Path) -> None:
    wd = make_workdir(tmp_path / "v1")
    patch = [{"op": "mutation", "operator": reminder, "seed": 1}]

    def think(ctx: dict[str, Any], number: int) -> dict[str, Any]:
        assert "memory" in [a["name"] for a in ctx["taxonomy"]]
        return envelope(spec("s1", "memory", patch))

    meta = Meta(think=think)
    assert make_loop(wd, meta).run(1).committed == (1,)
    (record,) = records(wd)
    (block,) = record["specs"]
    assert block["spec"]["patch"] == patch
    assert block["experiment"]["outcome_class"] == "measured"
    assert meta.corrections == []  # THINK's reply was accepted as it was
    assert all(r.ok for r in check_contracts(wd))
