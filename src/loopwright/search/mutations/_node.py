"""Gate and node-setting operators: gate_add, gate_remove, loop_type_change, model_tier_change."""

from __future__ import annotations

from collections.abc import Sequence

from loopwright.runtime import default_registries
from loopwright.search._protocols import MutationContext
from loopwright.search.mutations._base import (
    Operator,
    Proposal,
    Skip,
    agents,
    frozen_gate_ids,
    mutation,
    replace_node,
    touches_frozen_gate,
    unique_id,
)
from loopwright.search.mutations._graph import remove_cascading
from loopwright.search.mutations._roles import WRITE_TOOLS
from loopwright.workflow import (
    MODEL_TIERS,
    AgentNode,
    Catalog,
    Edge,
    GateNode,
    Node,
    Workflow,
    gates,
    successors,
)

__all__ = ["AGENT_LOOPS", "GateAdd", "GateRemove", "LoopTypeChange", "ModelTierChange"]

AGENT_LOOPS: tuple[str, ...] = ("react", "plan_execute", "hybrid")
"""The built-in agent loop names `loop_type_change` moves between."""

GATE_CHECK = "visible_tests_pass"


@mutation("gate_add", axis="verification")
class GateAdd(Operator):
    """Add a `visible_tests_pass` gate right after an agent that can write files.

    The gate takes over the agent's outgoing edges, RELOOPs to the agent, and allows 1 to 3
    loops (drawn from `ctx.rng`). Agents already followed by such a gate RELOOPing to them,
    agents joined to a frozen gate, and test writers (whose new tests are meant to fail until
    the builder runs) are skipped. Skipped when the catalog lacks the check.
    """

    def propose(self, parent: Workflow, ctx: MutationContext) -> Proposal | Skip:
        if GATE_CHECK not in self.catalog.checks:
            return Skip(f"the runtime has no {GATE_CHECK!r} check")
        fg = frozen_gate_ids(parent)
        writers = [
            a
            for a in agents(parent, frozen_ok=True)
            if set(a.tools) & WRITE_TOOLS
            and a.role != "test_writer"
            and not any(e.source == a.id and e.target in fg for e in parent.edges)
            and not _verified(parent, a.id)
        ]
        if not writers:
            return Skip("no agent that writes files lacks a verify gate")
        agent = ctx.rng.choice(writers)
        gate = GateNode(
            id=unique_id(parent, "gate_verify"),
            check=GATE_CHECK,
            reloop_to=agent.id,
            max_loops=ctx.rng.randint(1, 3),
        )
        moved = [
            Edge(source=gate.id, target=e.target) if e.source == agent.id else e
            for e in parent.edges
        ]
        nodes: list[Node] = []
        for n in parent.nodes:
            nodes.extend([n, gate] if n.id == agent.id else [n])
        child = parent.model_copy(
            update={"nodes": tuple(nodes), "edges": (*moved, Edge(source=agent.id, target=gate.id))}
        )
        return Proposal(
            child,
            gate.id,
            f"added gate {gate.id!r} after {agent.id!r} (max_loops {gate.max_loops})",
        )


def _verified(wf: Workflow, agent_id: str) -> bool:
    return any(
        isinstance(n := wf.node(s), GateNode) and n.check == GATE_CHECK and n.reloop_to == agent_id
        for s in successors(wf, agent_id)
    )


@mutation("gate_remove", axis="verification")
class GateRemove(Operator):
    """Remove a non-frozen gate not joined to a frozen gate, wiring its predecessors to its
    successors (gates RELOOPing to it are retargeted or removed, as in node_remove)."""

    def propose(self, parent: Workflow, ctx: MutationContext) -> Proposal | Skip:
        frozen_targets = {g.reloop_to for g in gates(parent) if g.id in parent.frozen}
        candidates = [
            g
            for g in gates(parent)
            if g.id not in parent.frozen
            and not touches_frozen_gate(parent, g.id)
            and g.id not in frozen_targets
        ]
        if not candidates:
            return Skip("no removable gate: the workflow has none, or every gate is frozen")
        gate = ctx.rng.choice(candidates)
        return Proposal(remove_cascading(parent, gate.id), gate.id, f"removed gate {gate.id!r}")


@mutation("loop_type_change", axis="agent_loop")
class LoopTypeChange(Operator):
    """Switch a non-frozen agent between react, plan_execute and hybrid.

    Only loops that the catalog accepts AND the runtime implements (`loops`, default: the
    names in the runtime's loop registry) are offered, so a child never names a loop that
    would fail at run time. Today only react is implemented, so the operator reports that it
    cannot apply.
    """

    def __init__(self, catalog: Catalog | None = None, loops: Sequence[str] | None = None) -> None:
        super().__init__(catalog)
        self._loops = tuple(loops) if loops is not None else None

    def runnable(self) -> list[str]:
        implemented = self._loops if self._loops is not None else default_registries().loops.names()
        catalog = self.catalog
        return [lp for lp in AGENT_LOOPS if lp in implemented and catalog.knows_loop(lp)]

    def propose(self, parent: Workflow, ctx: MutationContext) -> Proposal | Skip:
        runnable = self.runnable()
        options = [(a, lp) for a in agents(parent) for lp in runnable if lp != a.loop]
        if not options:
            return Skip(
                f"no other runnable loop for a non-frozen agent: the runtime implements "
                f"{', '.join(runnable) or 'none'} of {', '.join(AGENT_LOOPS)}"
            )
        agent, loop = ctx.rng.choice(options)
        child = replace_node(parent, agent.model_copy(update={"loop": loop}))
        return Proposal(child, agent.id, f"{agent.id!r}: loop {agent.loop} -> {loop}")


@mutation("model_tier_change", axis="model_tier")
class ModelTierChange(Operator):
    """Move a non-frozen agent to another model tier (small, medium, large); an agent naming
    a concrete model may move to any tier."""

    def propose(self, parent: Workflow, ctx: MutationContext) -> Proposal | Skip:
        candidates = agents(parent)
        if not candidates:
            return Skip("every agent is frozen")
        agent: AgentNode = ctx.rng.choice(candidates)
        tier = ctx.rng.choice([t for t in MODEL_TIERS if t != agent.model])
        child = replace_node(parent, agent.model_copy(update={"model": tier}))
        return Proposal(child, agent.id, f"{agent.id!r}: model {agent.model} -> {tier}")
