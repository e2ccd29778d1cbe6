"""Topology operators: node_insert, node_remove, edge_rewire, parallelize.

Each draws only from `ctx.rng`; `Operator.apply` checks every candidate against the contract
(valid against the runtime catalog, frozen nodes and frozen gates' edges untouched, hash
changed), see `_mutations_base`.
"""

from __future__ import annotations

from typing import Any

import networkx as nx

from loopwright.search._protocols import MutationContext
from loopwright.search.mutations._base import (
    Operator,
    Proposal,
    Skip,
    agents,
    contract_violation,
    frozen_gate_ids,
    mutation,
    remove_node,
    replace_node,
    touches_frozen_gate,
    unique_id,
)
from loopwright.search.mutations._roles import BEFORE_ROLES, ROLES, is_read_only, make_role
from loopwright.workflow import (
    AgentNode,
    Edge,
    FnNode,
    GateNode,
    Node,
    Workflow,
    gates,
    prompt_placeholders,
    to_networkx,
    topological_order,
)

__all__ = ["EdgeRewire", "NodeInsert", "NodeRemove", "Parallelize", "with_notes_section"]

NOTES_SECTION = "\n\nNotes from earlier steps:\n{notes}\n"
_REWIRE_TRIES = 40


def with_notes_section(node: AgentNode) -> AgentNode:
    """`node` with a section showing `{notes}` appended, unless its prompt already uses it."""
    if "notes" in prompt_placeholders(node.prompt):
        return node
    return node.model_copy(update={"prompt": node.prompt.rstrip("\n") + NOTES_SECTION})


@mutation("node_insert", axis="topology")
class NodeInsert(Operator):
    """Insert a functional agent from the role library before or after an agent.

    A role that prepares work (researcher, planner, test_writer) goes before the anchor, the
    others (reviewer, debugger) after it. Before: the anchor's incoming edges now enter the
    new node, which leads to the anchor. After: the anchor's outgoing edges now leave the new
    node, which follows the anchor. Anchors whose moved edges would touch a frozen gate are
    skipped. Every downstream agent of role `builder` (and a `before` anchor) that is not
    frozen and lacks `{notes}` gets a "Notes from earlier steps" section, so the new node's
    notes are read.
    """

    def propose(self, parent: Workflow, ctx: MutationContext) -> Proposal | Skip:
        role = ctx.rng.choice(sorted(ROLES))
        before = role in BEFORE_ROLES
        fg = frozen_gate_ids(parent)
        anchors = [
            a
            for a in agents(parent, frozen_ok=True)
            if not any(
                (e.target == a.id and e.source in fg)
                if before
                else (e.source == a.id and e.target in fg)
                for e in parent.edges
            )
        ]
        if not anchors:
            return Skip(f"no agent can take a {role} {'before' if before else 'after'} it")
        anchor = ctx.rng.choice(anchors)
        new = make_role(role, unique_id(parent, role))
        if before:
            moved = [
                Edge(source=e.source, target=new.id) if e.target == anchor.id else e
                for e in parent.edges
            ]
            edges = (*moved, Edge(source=new.id, target=anchor.id))
        else:
            moved = [
                Edge(source=new.id, target=e.target) if e.source == anchor.id else e
                for e in parent.edges
            ]
            edges = (*moved, Edge(source=anchor.id, target=new.id))
        nodes: list[Node] = []
        for n in parent.nodes:
            nodes.extend([new, n] if before and n.id == anchor.id else [n])
            if not before and n.id == anchor.id:
                nodes.append(new)
        child = parent.model_copy(update={"nodes": tuple(nodes), "edges": edges})
        child = _readers_of_notes(child, new.id, anchor.id if before else None)
        where = "before" if before else "after"
        return Proposal(child, new.id, f"inserted {role} {new.id!r} {where} {anchor.id!r}")


def _readers_of_notes(wf: Workflow, new_id: str, anchor: str | None) -> Workflow:
    g = to_networkx(wf)
    downstream = nx.descendants(g, new_id)
    for n in list(wf.nodes):
        if not isinstance(n, AgentNode) or n.id in wf.frozen or n.id not in downstream:
            continue
        if n.role == "builder" or n.id == anchor:
            wf = replace_node(wf, with_notes_section(n))
    return wf


@mutation("node_remove", axis="topology")
class NodeRemove(Operator):
    """Remove a non-frozen agent or fn node, wiring its predecessors to its successors.

    Never removes the last agent, a node joined to a frozen gate, or a node a frozen gate
    RELOOPs to. A gate whose reloop_to is removed is retargeted to the removed node's nearest
    upstream agent (a predecessor), else to the agent that took its place; a gate with no
    agent upstream left is removed too.
    """

    def propose(self, parent: Workflow, ctx: MutationContext) -> Proposal | Skip:
        n_agents = len(agents(parent, frozen_ok=True))
        frozen_targets = {g.reloop_to for g in gates(parent) if g.id in parent.frozen}
        candidates = [
            n
            for n in parent.nodes
            if isinstance(n, AgentNode | FnNode)
            and n.id not in parent.frozen
            and not (isinstance(n, AgentNode) and n_agents <= 1)
            and not touches_frozen_gate(parent, n.id)
            and n.id not in frozen_targets
        ]
        if not candidates:
            return Skip(
                "no removable node: every agent or fn node is frozen, the last agent, "
                "or joined to a frozen gate"
            )
        victim = ctx.rng.choice(candidates)
        child = remove_cascading(parent, victim.id)
        return Proposal(child, victim.id, f"removed {victim.kind} node {victim.id!r}")


def remove_cascading(wf: Workflow, node_id: str) -> Workflow:
    """`wf` without `node_id`; gates RELOOPing to a removed node are retargeted or removed."""
    preds = set(to_networkx(wf).predecessors(node_id))
    child = remove_node(wf, node_id)
    removed = {node_id}
    while True:
        orphan = next((g for g in gates(child) if g.reloop_to in removed), None)
        if orphan is None:
            return child
        target = _new_reloop_target(child, orphan, preds)
        if target is None:
            preds = set(to_networkx(child).predecessors(orphan.id))
            child = remove_node(child, orphan.id)
            removed.add(orphan.id)
        else:
            child = replace_node(child, orphan.model_copy(update={"reloop_to": target}))


def _new_reloop_target(wf: Workflow, gate: GateNode, preds: set[str]) -> str | None:
    g = to_networkx(wf)
    up = nx.ancestors(g, gate.id)
    order = [n for n in topological_order(wf) if n in up and isinstance(wf.node(n), AgentNode)]
    before = [n for n in order if n in preds]
    if before:
        return before[-1]
    return order[0] if order else None


@mutation("edge_rewire", axis="topology")
class EdgeRewire(Operator):
    """Move one end of one forward edge to another node, keeping the graph a valid DAG.

    Candidates (every edge not joined to a frozen gate, with every other node as the new
    source or target) are shuffled with `ctx.rng`; the first whose child passes the contract
    (one entry, all reachable, no cycle, RELOOPs upstream) is taken.
    """

    def propose(self, parent: Workflow, ctx: MutationContext) -> Proposal | Skip:
        fg = frozen_gate_ids(parent)
        options: list[tuple[Edge, Edge]] = []
        for e in parent.edges:
            if e.source in fg or e.target in fg:
                continue
            for w in parent.node_ids:
                if w in (e.source, e.target):
                    continue
                options.append((e, Edge(source=e.source, target=w)))
                options.append((e, Edge(source=w, target=e.target)))
        options = [(old, new) for old, new in options if new not in parent.edges]
        ctx.rng.shuffle(options)
        catalog = self.catalog
        for old, new in options[:_REWIRE_TRIES]:
            edges = tuple(new if e == old else e for e in parent.edges)
            child = parent.model_copy(update={"edges": edges})
            if contract_violation(parent, child, catalog) is None:
                return Proposal(child, new.target, f"rewired {old} to {new}")
        if not options:
            return Skip("no edge can move: the workflow has no movable edge")
        return Skip(
            f"none of {min(len(options), _REWIRE_TRIES)} rewirings tried keeps the graph valid"
        )


@mutation("parallelize", axis="topology")
class Parallelize(Operator):
    """Make two consecutive independent agents siblings of the same predecessor.

    Independent means: both are read-only roles (every tool in READ_ONLY_TOOLS, so neither
    changes a file the other reads), and the second is not frozen. For an edge a -> b with a
    having predecessors P and b successors S: the edge a -> b goes, p -> b is added for every
    p in P, and a -> s for every s in S, so whatever waited for b still waits for both.
    Notes written by one of them are not promised to the other.
    """

    def propose(self, parent: Workflow, ctx: MutationContext) -> Proposal | Skip:
        g = to_networkx(parent)
        pairs = [e for e in parent.edges if _independent(parent, g, e)]
        if not pairs:
            return Skip(
                "no two consecutive read-only agents with a common predecessor to run side by side"
            )
        pick = ctx.rng.choice(pairs)
        first, second = pick.source, pick.target
        added = [Edge(source=p, target=second) for p in g.predecessors(first)]
        added += [Edge(source=first, target=s) for s in g.successors(second)]
        edges = tuple(dict.fromkeys([*(e for e in parent.edges if e != pick), *added]))
        child = parent.model_copy(update={"edges": edges})
        return Proposal(child, second, f"made {first!r} and {second!r} siblings")


def _independent(wf: Workflow, g: Any, edge: Edge) -> bool:  # g: an nx.DiGraph (untyped)
    a, b = wf.node(edge.source), wf.node(edge.target)
    return (
        isinstance(a, AgentNode)
        and isinstance(b, AgentNode)
        and is_read_only(a)
        and is_read_only(b)
        and b.id not in wf.frozen
        and g.in_degree(a.id) > 0
        and not touches_frozen_gate(wf, a.id)
        and not touches_frozen_gate(wf, b.id)
    )
