"""The mutation registry and what every operator shares: proposing a child, then checking it.

An operator subclasses `Operator` and writes `propose`, which returns a candidate workflow (or a
`Skip` saying why it cannot apply). `Operator.apply` then enforces the contract for every
operator alike: the child keeps the parent's name, differs from the parent (hash), validates
against the runtime catalog, and leaves every frozen node byte-identical and every edge of a
frozen gate in place. A candidate that fails any of these becomes child=None with the reason.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TypeVar

import networkx as nx

from loopwright.errors import ConfigError, UsageError
from loopwright.registry import Registry
from loopwright.runtime import runtime_catalog
from loopwright.search._protocols import MutationContext, MutationOperator, MutationResult
from loopwright.workflow import (
    AgentNode,
    Catalog,
    Edge,
    GateNode,
    Node,
    Workflow,
    to_networkx,
    validate_workflow,
    workflow_hash,
)

__all__ = [
    "MUTATIONS",
    "MutationRegistry",
    "Operator",
    "Skip",
    "frozen_violation",
    "mutation",
    "remove_node",
    "replace_node",
    "unique_id",
]


@dataclass(frozen=True, slots=True)
class Skip:
    """An operator's answer when it cannot apply: why, and the node it looked at (if one)."""

    reason: str
    target: str | None = None


@dataclass(frozen=True, slots=True)
class Proposal:
    """A candidate child with the node it touched and a one-line account of the change."""

    child: Workflow
    target: str | None
    reason: str


class Operator:
    """Base of the built-in operators: `apply` = `propose` + the contract checks.

    `catalog` defaults to `runtime_catalog()` (read at each call, so names registered later
    count). Subclasses set `name` and `axis` (`@mutation` does) and write `propose`, which
    draws only from `ctx.rng`. ConfigError or ValueError raised while proposing becomes
    child=None.
    """

    name: str = ""
    axis: str = ""

    def __init__(self, catalog: Catalog | None = None) -> None:
        self._catalog = catalog

    @property
    def catalog(self) -> Catalog:
        return self._catalog if self._catalog is not None else runtime_catalog()

    def propose(self, parent: Workflow, ctx: MutationContext) -> Proposal | Skip:
        raise NotImplementedError

    def apply(self, parent: Workflow, ctx: MutationContext) -> MutationResult:
        """A valid child differing from `parent`, or child=None with the reason. Never raises
        for a workflow it cannot change; deterministic for the same `ctx.rng` state."""
        try:
            proposal = self.propose(parent, ctx)
        except (ConfigError, ValueError) as exc:  # a candidate the models refuse: no child
            return MutationResult(self.name, None, f"could not build a child: {exc}")
        if isinstance(proposal, Skip):
            return MutationResult(self.name, None, proposal.reason, proposal.target)
        problem = contract_violation(parent, proposal.child, self.catalog)
        if problem is not None:
            return MutationResult(self.name, None, problem, proposal.target)
        child = proposal.child.model_copy(update={"name": parent.name})
        return MutationResult(self.name, child, proposal.reason, proposal.target)


def contract_violation(parent: Workflow, child: Workflow, catalog: Catalog) -> str | None:
    """Why `child` may not be returned for `parent` (None when it may)."""
    if workflow_hash(child) == workflow_hash(parent):
        return "the change leaves the workflow identical to its parent"
    frozen = frozen_violation(parent, child)
    if frozen is not None:
        return frozen
    issues = validate_workflow(child, catalog)
    if issues:
        return "the child would be invalid: " + "; ".join(str(i) for i in issues[:3])
    return None


def frozen_violation(parent: Workflow, child: Workflow) -> str | None:
    """Why `child` breaks `parent`'s frozen nodes (None when it does not): a frozen node missing
    or changed in any field, the frozen list changed, or an edge of a frozen gate moved."""
    if tuple(child.frozen) != tuple(parent.frozen):
        return "the frozen list changed"
    before = {n.id: n for n in parent.nodes}
    after = {n.id: n for n in child.nodes}
    for node_id in parent.frozen:
        if node_id not in after:
            return f"frozen node {node_id!r} would be removed"
        if after[node_id].model_dump(mode="json") != before[node_id].model_dump(mode="json"):
            return f"frozen node {node_id!r} would change"
        if isinstance(before[node_id], GateNode):
            old = {e for e in parent.edges if node_id in (e.source, e.target)}
            new = {e for e in child.edges if node_id in (e.source, e.target)}
            if old != new:
                return f"the edges of frozen gate {node_id!r} would change"
    return None


def unique_id(wf: Workflow, base: str) -> str:
    """`base`, or `base_2`, `base_3`... the first id no node of `wf` uses."""
    taken = set(wf.node_ids)
    if base not in taken:
        return base
    n = 2
    while f"{base}_{n}" in taken:
        n += 1
    return f"{base}_{n}"


def replace_node(wf: Workflow, node: Node) -> Workflow:
    """`wf` with the node of the same id replaced by `node` (position kept)."""
    return wf.model_copy(update={"nodes": tuple(node if n.id == node.id else n for n in wf.nodes)})


def remove_node(wf: Workflow, node_id: str) -> Workflow:
    """`wf` without `node_id`, each predecessor wired to each successor (no duplicates).

    When the node was the entry and had several successors, the first of them in topological
    order becomes the entry and gets an edge to each of the others (no cycle can arise: they
    come after it). Gates are left as they are; callers retarget their RELOOPs.
    """
    g = to_networkx(wf)
    preds = [p for p in g.predecessors(node_id)]
    succs = _in_order(wf, g.successors(node_id))
    kept = [e for e in wf.edges if node_id not in (e.source, e.target)]
    added = [Edge(source=p, target=s) for p in _in_order(wf, preds) for s in succs]
    if not preds and len(succs) > 1:
        order = {n: i for i, n in enumerate(nx.topological_sort(g))}
        first, *rest = sorted(succs, key=order.__getitem__)
        added = [Edge(source=first, target=s) for s in rest]
    edges = tuple(dict.fromkeys([*kept, *added]))
    nodes = tuple(n for n in wf.nodes if n.id != node_id)
    return wf.model_copy(update={"nodes": nodes, "edges": edges})


def _in_order(wf: Workflow, ids: Iterator[str] | Sequence[str]) -> list[str]:
    index = {n: i for i, n in enumerate(wf.node_ids)}
    return sorted(ids, key=index.__getitem__)


def agents(wf: Workflow, *, frozen_ok: bool = False) -> list[AgentNode]:
    """The agent nodes of `wf` in declaration order (frozen ones only when `frozen_ok`)."""
    return [
        n for n in wf.nodes if isinstance(n, AgentNode) and (frozen_ok or n.id not in wf.frozen)
    ]


def frozen_gate_ids(wf: Workflow) -> set[str]:
    """Ids of the frozen gates of `wf`."""
    return {n.id for n in wf.nodes if isinstance(n, GateNode) and n.id in wf.frozen}


def touches_frozen_gate(wf: Workflow, node_id: str) -> bool:
    """True when an edge joins `node_id` to a frozen gate (moving it would break the gate)."""
    fg = frozen_gate_ids(wf)
    return any(
        (e.source == node_id and e.target in fg) or (e.target == node_id and e.source in fg)
        for e in wf.edges
    )


# -- the registry ----------------------------------------------------------------------------

OpT = TypeVar("OpT", bound=MutationOperator | type[Operator])


class MutationRegistry(Registry[MutationOperator]):
    """Mutation operators by name, in registration order (the random strategy draws from that
    order), each on an intervention axis. Unknown name: ConfigError listing the known ones;
    a taken name: UsageError. Fill it with `@mutation("name", axis="...")`.
    """

    def __init__(self) -> None:
        super().__init__("mutation operator", in_registration_order=True)

    def axes(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """(axis, its operators) pairs, axes in the order their first operator was registered,
        operators in registration order. An operator added without an axis (not through
        `@mutation`) is listed under the empty axis ""."""
        on: dict[str, list[str]] = {}
        for name, op in self.items():
            on.setdefault(getattr(op, "axis", ""), []).append(name)
        return tuple((axis, tuple(names)) for axis, names in on.items())


MUTATIONS = MutationRegistry()
"""The registered operators (the built-ins are registered by `@mutation` in the `_mutations_*`
and `_prompt_mutate` modules, which `loopwright.search.mutations._core` imports)."""


def mutation(
    name: str, *, axis: str, registry: MutationRegistry = MUTATIONS
) -> Callable[[OpT], OpT]:
    """Register an operator class (instantiated without arguments) or instance under `name`,
    on the intervention axis `axis` (the research loop groups operators into its taxonomy by
    it: "prompt", "verification", "topology", "agent_loop", "model_tier", or a new axis). The
    decorated object is returned with `name` and `axis` set on it. UsageError when the name
    is taken or `axis` is empty."""
    if not axis.strip():
        raise UsageError(
            f"mutation operator {name!r} names no axis",
            got=f"axis={axis!r}",
            fix='pass the intervention axis it acts on, e.g. @mutation(name, axis="prompt")',
        )

    def decorate(item: OpT) -> OpT:
        registry.add(name, item() if isinstance(item, type) else item)
        item.name = name
        item.axis = axis
        return item

    return decorate
