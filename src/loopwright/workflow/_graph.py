"""Graph questions about a workflow: order, entry, neighbours, gates and RELOOP targets.

Everything here reads the workflow as a networkx graph of its forward edges. No execution.
Orders are deterministic: ties are broken by the order nodes are declared in.
"""

from __future__ import annotations

from typing import Any

import networkx as nx

from loopwright.errors import ConfigError
from loopwright.workflow._model import GateNode, Workflow

__all__ = [
    "DiGraph",
    "entry_node",
    "entry_nodes",
    "find_cycles",
    "gates",
    "predecessors",
    "reloop_targets",
    "successors",
    "to_networkx",
    "topological_order",
]

# networkx ships no type hints; its graphs are `Any` to mypy.
DiGraph = Any


def to_networkx(wf: Workflow, *, include_reloop: bool = False) -> DiGraph:
    """A new `nx.DiGraph`: one graph node per workflow node (attribute `node`: the model).

    Forward edges have `kind="forward"`; with `include_reloop`, each gate adds a
    `kind="reloop"` edge to its `reloop_to` (with `max_loops`). Edges or RELOOPs naming an
    unknown node are left out (`validate_workflow` reports them). With repeated ids, the last
    node declared wins.
    """
    g = nx.DiGraph()
    for index, n in enumerate(wf.nodes):
        g.add_node(n.id, node=n, index=index)
    for e in wf.edges:
        if e.source in g and e.target in g:
            g.add_edge(e.source, e.target, kind="forward")
    if include_reloop:
        for gate in gates(wf):
            if gate.reloop_to in g:
                g.add_edge(gate.id, gate.reloop_to, kind="reloop", max_loops=gate.max_loops)
    return g


def find_cycles(wf: Workflow) -> list[list[str]]:
    """One cycle (as a list of node ids, first node not repeated) per loop among forward edges.

    A cycle is reported for every strongly connected component that loops; empty for a DAG.
    """
    g = to_networkx(wf)
    cycles = []
    for component in nx.strongly_connected_components(g):
        start = min(component, key=lambda n: g.nodes[n]["index"])
        if len(component) > 1 or g.has_edge(start, start):
            cycle = nx.find_cycle(g.subgraph(component), source=start)
            cycles.append([u for u, _ in cycle])
    return sorted(cycles, key=lambda c: g.nodes[c[0]]["index"])


def topological_order(wf: Workflow) -> list[str]:
    """The node ids with every edge's source before its target; ties in declaration order.

    Raises ConfigError naming a cycle when the forward edges loop.
    """
    g = to_networkx(wf)
    try:
        return list(nx.lexicographical_topological_sort(g, key=lambda n: g.nodes[n]["index"]))
    except nx.NetworkXUnfeasible:
        cycle = find_cycles(wf)[0]
        raise ConfigError(
            f"workflow {wf.name!r} has no topological order: its edges form a cycle "
            + " -> ".join([*cycle, cycle[0]]),
            fix="back-edges are only allowed as a gate's reloop_to; remove one edge of the cycle",
        ) from None


def entry_nodes(wf: Workflow) -> list[str]:
    """Ids of the nodes with no incoming forward edge, in declaration order."""
    g = to_networkx(wf)
    return [node_id for node_id in dict.fromkeys(wf.node_ids) if g.in_degree(node_id) == 0]


def entry_node(wf: Workflow) -> str:
    """The id of the single node where a run starts. ConfigError unless there is exactly one."""
    entries = entry_nodes(wf)
    if len(entries) != 1:
        raise ConfigError(
            f"workflow {wf.name!r} needs exactly one entry node (a node with no incoming edge)",
            got=", ".join(entries) or "none",
            fix="add edges so that every node but the first has an incoming edge",
        )
    return entries[0]


def predecessors(wf: Workflow, node_id: str) -> list[str]:
    """Ids of the nodes with a forward edge into `node_id`, in declaration order."""
    g = _graph_with(wf, node_id)
    return _in_declaration_order(g, g.predecessors(node_id))


def successors(wf: Workflow, node_id: str) -> list[str]:
    """Ids of the nodes a forward edge from `node_id` leads to, in declaration order."""
    g = _graph_with(wf, node_id)
    return _in_declaration_order(g, g.successors(node_id))


def gates(wf: Workflow) -> list[GateNode]:
    """The gate nodes in declaration order."""
    return [n for n in wf.nodes if isinstance(n, GateNode)]


def reloop_targets(wf: Workflow, gate_id: str) -> list[str]:
    """The nodes gate `gate_id` may RELOOP to: every node upstream of it along forward edges.

    Ordered topologically (declaration order if the edges loop). Raises ConfigError when
    `gate_id` is not a gate.
    """
    node = wf.node(gate_id)
    if not isinstance(node, GateNode):
        raise ConfigError(
            f"node {gate_id!r} is not a gate (its kind is {node.kind!r})",
            fix=f"use one of the gates: {', '.join(g.id for g in gates(wf)) or '(none)'}",
        )
    g = to_networkx(wf)
    return _in_flow_order(g, nx.ancestors(g, gate_id))


def _graph_with(wf: Workflow, node_id: str) -> DiGraph:
    wf.node(node_id)  # raises ConfigError listing the ids when unknown
    return to_networkx(wf)


def _in_declaration_order(g: DiGraph, ids: Any) -> list[str]:
    return sorted(ids, key=lambda n: g.nodes[n]["index"])


def _in_flow_order(g: DiGraph, ids: set[str]) -> list[str]:
    if not nx.is_directed_acyclic_graph(g):
        return _in_declaration_order(g, ids)
    order = nx.lexicographical_topological_sort(g, key=lambda n: g.nodes[n]["index"])
    return [n for n in order if n in ids]
