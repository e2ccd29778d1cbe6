"""Targeted operators: a reflection suggestion carried out at the node it names.

The built-in operators choose where to act with `ctx.rng`; these act where a suggestion says:
insert an agent of a given role before or after a given agent (NODE_INSERT following a
structural recommendation), add a verify gate after a given agent, add a given sentence to a
given agent's prompt (PROMPT_MUTATE applying a prompt improvement), remove a given node. Each is
an `Operator` under the name of the operator it carries out, so `Operator.apply` enforces the
same contract (a valid child, frozen nodes untouched, differs from its parent) and lineage and
credit see the usual operator names. They are not registered: random strategies never draw
them. Each refuses (child=None with the reason) when the suggestion is already satisfied.
"""

from __future__ import annotations

import networkx as nx

from loopwright.search._protocols import MutationContext
from loopwright.search.mutations._base import (
    Operator,
    Proposal,
    Skip,
    agents,
    frozen_gate_ids,
    replace_node,
    touches_frozen_gate,
    unique_id,
)
from loopwright.search.mutations._graph import remove_cascading, with_notes_section
from loopwright.search.mutations._node import GATE_CHECK
from loopwright.search.mutations._roles import BEFORE_ROLES, WRITE_TOOLS, make_role
from loopwright.workflow import (
    AgentNode,
    Edge,
    GateNode,
    Node,
    Workflow,
    add_lesson,
    gates,
    to_networkx,
)

__all__ = ["AddGate", "AddLesson", "InsertAgent", "RemoveNode", "insert_agent"]


def insert_agent(parent: Workflow, new: AgentNode, anchor: str, *, before: bool) -> Workflow:
    """`parent` with `new` inserted right before `anchor` (taking over its incoming edges) or
    right after it (taking over its outgoing edges), as node_insert does; downstream builders
    and a `before` anchor gain a `{notes}` section when they lack one (frozen ones excepted)."""
    if before:
        moved = [
            Edge(source=e.source, target=new.id) if e.target == anchor else e for e in parent.edges
        ]
        edges = (*moved, Edge(source=new.id, target=anchor))
    else:
        moved = [
            Edge(source=new.id, target=e.target) if e.source == anchor else e for e in parent.edges
        ]
        edges = (*moved, Edge(source=anchor, target=new.id))
    nodes: list[Node] = []
    for n in parent.nodes:
        if before and n.id == anchor:
            nodes.append(new)
        nodes.append(n)
        if not before and n.id == anchor:
            nodes.append(new)
    child = parent.model_copy(update={"nodes": tuple(nodes), "edges": edges})
    downstream = nx.descendants(to_networkx(child), new.id)
    for n in list(child.nodes):
        if not isinstance(n, AgentNode) or n.id in child.frozen or n.id not in downstream:
            continue
        if n.role == "builder" or (before and n.id == anchor):
            child = replace_node(child, with_notes_section(n))
    return child


def _agent(parent: Workflow, node_id: str) -> AgentNode | Skip:
    if node_id not in parent.node_ids:
        return Skip(f"the parent has no node {node_id!r}", node_id)
    node = parent.node(node_id)
    if not isinstance(node, AgentNode):
        return Skip(f"{node_id!r} is not an agent", node_id)
    return node


class InsertAgent(Operator):
    """node_insert at a named anchor: a new agent of `role` from the role library (or the
    given `node`, e.g. a crossover's graft) before the anchor for preparing roles, after it
    otherwise. Refused when an agent of that role already runs upstream (before) or
    downstream (after) of the anchor, or when the moved edges would touch a frozen gate."""

    name = "node_insert"

    def __init__(self, role: str, anchor: str, node: AgentNode | None = None) -> None:
        super().__init__()
        self.role = role
        self.anchor = anchor
        self.node = node

    def propose(self, parent: Workflow, ctx: MutationContext) -> Proposal | Skip:
        anchor = _agent(parent, self.anchor)
        if isinstance(anchor, Skip):
            return anchor
        before = self.role in BEFORE_ROLES
        g = to_networkx(parent)
        near = nx.ancestors(g, anchor.id) if before else nx.descendants(g, anchor.id)
        where = "before" if before else "after"
        if any(
            isinstance(n, AgentNode) and n.id in near and n.role == self.role for n in parent.nodes
        ):
            return Skip(f"a {self.role} already runs {where} {anchor.id!r}", anchor.id)
        fg = frozen_gate_ids(parent)
        moved = [e for e in parent.edges if (e.target if before else e.source) == anchor.id]
        if any((e.source if before else e.target) in fg for e in moved):
            return Skip(
                f"inserting {where} {anchor.id!r} would move an edge of a frozen gate", anchor.id
            )
        base = self.node.id if self.node is not None else self.role
        new_id = unique_id(parent, base)
        if self.node is not None:
            new = self.node.model_copy(update={"id": new_id})
        else:
            new = make_role(self.role, new_id)
        child = insert_agent(parent, new, anchor.id, before=before)
        return Proposal(child, new.id, f"inserted {self.role} {new.id!r} {where} {anchor.id!r}")


class AddGate(Operator):
    """gate_add after a named agent: a `visible_tests_pass` gate RELOOPing to it (max_loops
    given, else drawn from 1..3 like gate_add). Refused when the agent writes no files, is a
    test writer, already has such a gate after it, or is followed by a frozen gate."""

    name = "gate_add"

    def __init__(self, agent: str, max_loops: int | None = None, check: str = GATE_CHECK) -> None:
        super().__init__()
        self.agent = agent
        self.max_loops = max_loops
        self.check = check

    def propose(self, parent: Workflow, ctx: MutationContext) -> Proposal | Skip:
        agent = _agent(parent, self.agent)
        if isinstance(agent, Skip):
            return agent
        if self.check not in self.catalog.checks:
            return Skip(f"the runtime has no {self.check!r} check")
        if not set(agent.tools) & WRITE_TOOLS or agent.role == "test_writer":
            return Skip(f"{agent.id!r} writes no source files to verify", agent.id)
        if any(g.reloop_to == agent.id for g in gates(parent)):
            return Skip(f"{agent.id!r} already has a gate that RELOOPs to it", agent.id)
        fg = frozen_gate_ids(parent)
        if any(e.source == agent.id and e.target in fg for e in parent.edges):
            return Skip(f"{agent.id!r} is followed by a frozen gate", agent.id)
        loops = self.max_loops if self.max_loops is not None else ctx.rng.randint(1, 3)
        gate = GateNode(id=unique_id(parent, "gate_verify"), check=self.check,
                        reloop_to=agent.id, max_loops=loops)  # fmt: skip
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
            child, gate.id, f"added gate {gate.id!r} after {agent.id!r} (max_loops {loops})"
        )


class AddLesson(Operator):
    """prompt_mutate applying a prompt improvement: `text` added as a bullet under "Lessons
    from earlier attempts:" in the named agent's prompt. Refused when the prompt holds it."""

    name = "prompt_mutate"

    def __init__(self, agent: str, text: str) -> None:
        super().__init__()
        self.agent = agent
        self.text = text.strip()

    def propose(self, parent: Workflow, ctx: MutationContext) -> Proposal | Skip:
        agent = _agent(parent, self.agent)
        if isinstance(agent, Skip):
            return agent
        if agent.id in parent.frozen:
            return Skip(f"{agent.id!r} is frozen", agent.id)
        if self.text in agent.prompt:
            return Skip(f"the prompt of {agent.id!r} already holds this improvement", agent.id)
        child = replace_node(
            parent, agent.model_copy(update={"prompt": add_lesson(agent.prompt, self.text)})
        )
        return Proposal(child, agent.id, f"added a lesson to the prompt of {agent.id!r}")


class RemoveNode(Operator):
    """node_remove or gate_remove of a named node (gates RELOOPing to it retargeted or removed
    as node_remove does). Refused for the last agent, a frozen node, a node joined to a frozen
    gate, or a kind the operator does not remove."""

    def __init__(self, operator: str, target: str) -> None:
        super().__init__()
        self.name = operator
        self.target = target

    def propose(self, parent: Workflow, ctx: MutationContext) -> Proposal | Skip:
        if self.target not in parent.node_ids:
            return Skip(f"the parent has no node {self.target!r}", self.target)
        node = parent.node(self.target)
        want_gate = self.name == "gate_remove"
        if isinstance(node, GateNode) != want_gate:
            return Skip(f"{self.name} does not remove the {node.kind} node {node.id!r}", node.id)
        if node.id in parent.frozen or touches_frozen_gate(parent, node.id):
            return Skip(f"{node.id!r} is frozen or joined to a frozen gate", node.id)
        if any(g.reloop_to == node.id and g.id in parent.frozen for g in gates(parent)):
            return Skip(f"a frozen gate RELOOPs to {node.id!r}", node.id)
        if isinstance(node, AgentNode) and len(agents(parent, frozen_ok=True)) <= 1:
            return Skip(f"{node.id!r} is the last agent", node.id)
        return Proposal(
            remove_cascading(parent, node.id), node.id, f"removed {node.kind} node {node.id!r}"
        )
