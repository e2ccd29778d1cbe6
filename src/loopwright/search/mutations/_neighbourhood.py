"""Structural moves for the guided strategy: a compound of suggestions, and the neighbourhood.

Random operators spend most of a small budget on children that change nothing a score can
see (a loop type, a rewired edge, a prompt sentence). A workflow's value lies mostly in which
components it has around its main writer: study notes before it, tests written first, a
reviewer after it, a gate re-running it on failing tests. Two moves act on exactly that:

- `compound`: every usable structural suggestion of a report (node_insert and gate_add at
  distinct places) applied to one child, so a child of the seed can hold a study step and a
  gate at once instead of taking one generation each.
- `neighbours`: every single-component toggle of a workflow, in a fixed order made from the
  workflow alone: add a verify gate after the main writer, add each library role the workflow
  lacks at the writer (preparing roles before it, checking roles after it), double each gate's
  RELOOPs (up to MAX_GATE_LOOPS: more repair attempts, paid only when the tests fail), remove
  each non-writer agent or gate. Removals are how a cost-aware search drops a component that does
  not pay: the child costs less, and keeps the parent's score when the component added nothing.

Both read only the parent workflow and the report; neither knows the model or the tasks.
"""

from __future__ import annotations

from collections.abc import Sequence

from loopwright.reflection import MutationSuggestion, ReflectionReport
from loopwright.search._protocols import MutationContext, MutationResult
from loopwright.search.mutations._base import Operator, Proposal, Skip, replace_node
from loopwright.search.mutations._guided_ops import AddGate, InsertAgent, RemoveNode
from loopwright.search.mutations._roles import ROLES, WRITE_TOOLS
from loopwright.workflow import AgentNode, GateNode, Workflow

__all__ = [
    "GATE_LOOPS",
    "MAX_GATE_LOOPS",
    "STRUCTURAL",
    "MoreLoops",
    "compound",
    "main_writer",
    "neighbours",
]

GATE_LOOPS = 3
"""RELOOPs a neighbourhood gate allows (each loop costs only when the visible tests fail)."""
MAX_GATE_LOOPS = 8
"""The most RELOOPs `MoreLoops` gives a gate."""
STRUCTURAL = frozenset({"node_insert", "gate_add"})
"""The suggestion operators `compound` combines."""
_ROLE_ORDER = ("researcher", "fixer", "reviewer", "test_writer", "planner", "debugger")
"""The order in which `neighbours` lists role insertions (library roles not named here come
after, sorted), before the removals."""


def main_writer(wf: Workflow) -> str | None:
    """The id of the first non-frozen agent of role builder (else the first non-frozen agent
    with a file-writing tool, not a test writer); None when there is none."""
    agents = [n for n in wf.nodes if isinstance(n, AgentNode) and n.id not in wf.frozen]
    builders = [a for a in agents if a.role == "builder"]
    writers = [a for a in agents if set(a.tools) & WRITE_TOOLS and a.role != "test_writer"]
    pick = builders or writers
    return pick[0].id if pick else None


def neighbours(wf: Workflow, allowed: Sequence[str]) -> list[Operator]:
    """Every single-component toggle of `wf` whose operator name is in `allowed`, in order:
    a gate after the main writer, each role the workflow lacks inserted at it, then the
    removal of each non-writer agent and each gate. An operator may still refuse (a frozen
    edge, a role already present on that side); `Operator.apply` says why."""
    writer = main_writer(wf)
    moves: list[Operator] = []
    if writer is not None:
        if "gate_add" in allowed:
            moves.append(AddGate(writer, GATE_LOOPS))
        if "node_insert" in allowed:
            have = {n.role for n in wf.nodes if isinstance(n, AgentNode)}
            order = [*_ROLE_ORDER, *sorted(set(ROLES) - set(_ROLE_ORDER))]
            moves += [InsertAgent(r, writer) for r in order if r in ROLES and r not in have]
    if "gate_add" in allowed:
        moves += [MoreLoops(n.id) for n in wf.nodes if isinstance(n, GateNode)]
    for n in wf.nodes:
        if n.id in wf.frozen or n.id == writer:
            continue
        if isinstance(n, GateNode) and "gate_remove" in allowed:
            moves.append(RemoveNode("gate_remove", n.id))
        elif isinstance(n, AgentNode) and "node_remove" in allowed:
            moves.append(RemoveNode("node_remove", n.id))
    return moves


class MoreLoops(Operator):
    """gate_loops: a named gate's max_loops doubled, up to MAX_GATE_LOOPS. Refused for a
    frozen gate, a node that is not a gate, or one already at the cap."""

    name = "gate_loops"

    def __init__(self, gate: str) -> None:
        super().__init__()
        self.gate = gate

    def propose(self, parent: Workflow, ctx: MutationContext) -> Proposal | Skip:
        if self.gate not in parent.node_ids or self.gate in parent.frozen:
            return Skip(f"{self.gate!r} is missing or frozen", self.gate)
        gate = parent.node(self.gate)
        if not isinstance(gate, GateNode) or gate.max_loops >= MAX_GATE_LOOPS:
            return Skip(f"{self.gate!r} is not a gate below {MAX_GATE_LOOPS} loops", self.gate)
        loops = min(MAX_GATE_LOOPS, 2 * gate.max_loops)
        child = replace_node(parent, gate.model_copy(update={"max_loops": loops}))
        return Proposal(child, gate.id, f"raised {gate.id!r} to {loops} loops")


def compound(
    parent: Workflow,
    suggestions: Sequence[MutationSuggestion],
    ctx: MutationContext,
    report: ReflectionReport,
) -> MutationResult | None:
    """One child carrying out every structural suggestion in `suggestions` that applies, in
    order (later ones on the child of the earlier); None unless at least two applied."""
    from loopwright.search.mutations._guided import apply_suggestion  # a cycle otherwise

    child = parent
    done: list[MutationSuggestion] = []
    reasons: list[str] = []
    for s in suggestions:
        if s.operator not in STRUCTURAL:
            continue
        result = apply_suggestion(child, s, ctx, report)
        if result.child is None:
            continue
        child = result.child
        done.append(s)
        reasons.append(result.reason)
    if len(done) < 2:
        return None
    return MutationResult(
        operator=done[0].operator,
        child=child,
        reason="compound: " + "; ".join(reasons),
        target=done[0].target,
    )
