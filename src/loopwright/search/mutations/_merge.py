"""Merge: a structural three-way merge of two parents over their nearest common ancestor.

GEPA merges two Pareto-frontier candidates that lead on different tasks by taking, component
by component, the version that one lineage changed and the other did not. Here the components
are the nodes (by id: an agent with its prompt, tools and loop; a gate with its check, target
and `max_loops`; a function) and the edges. For each component, with `o` its version in the
ancestor (or absent), `a` and `b` in the two parents:

- `a == b`: taken as it is (both kept it, or both made the same change);
- `a == o`: `b` is taken (only B's lineage changed it: an edit, an addition or a removal);
- `b == o`: `a` is taken (only A's lineage changed it);
- both changed it differently: the version of the *fitter* parent (`prefer_a`).

The merged node order is A's, then the nodes only B has, in B's order; edges to a node the
merge dropped go with it. The child takes A's name, description and frozen list, and must pass
the operator contract against both parents (valid against the runtime catalog, frozen nodes
untouched, different from each parent). Deterministic; draws nothing from an RNG. No model.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import TypeVar

from loopwright.runtime import runtime_catalog
from loopwright.search._protocols import MutationResult
from loopwright.search.mutations._base import contract_violation
from loopwright.workflow import Catalog, Edge, Node, Workflow, workflow_hash

__all__ = ["MERGE", "merge_workflows"]

MERGE = "merge"

_K = TypeVar("_K", bound=Hashable)
_V = TypeVar("_V")


def merge_workflows(
    a: Workflow,
    b: Workflow,
    ancestor: Workflow,
    *,
    prefer_a: bool,
    catalog: Catalog | None = None,
) -> MutationResult:
    """The three-way merge of `a` and `b` over `ancestor` (module docstring), as a child of `a`
    (the result's `parents` names nothing: the caller knows B). child=None with the reason when
    the merge equals a parent or breaks the contract."""
    nodes = _merged_nodes(a, b, ancestor, prefer_a=prefer_a)
    kept = {n.id for n in nodes}
    edges = tuple(
        e
        for e in _merged(_edges(a), _edges(b), _edges(ancestor), prefer_a=prefer_a)
        if e.source in kept and e.target in kept
    )
    child = a.model_copy(update={"nodes": tuple(nodes), "edges": edges})
    from_b = sorted(
        node.id for node in nodes if node != _by_id(a.nodes).get(node.id)
    )  # the nodes B's lineage contributed
    if workflow_hash(child) == workflow_hash(b):
        return MutationResult(MERGE, None, "the merge equals parent B: A adds nothing to it")
    problem = contract_violation(a, child, catalog or runtime_catalog())
    if problem is not None:
        return MutationResult(MERGE, None, f"merge: {problem}")
    reason = f"merge: took {', '.join(from_b) or 'edges'} from parent B over the common ancestor"
    return MutationResult(MERGE, child, reason, target=from_b[0] if from_b else None)


def _by_id(nodes: Iterable[Node]) -> dict[str, Node]:
    return {n.id: n for n in nodes}


def _edges(wf: Workflow) -> dict[tuple[str, str], Edge]:
    return {(e.source, e.target): e for e in wf.edges}


def _merged_nodes(a: Workflow, b: Workflow, o: Workflow, *, prefer_a: bool) -> list[Node]:
    chosen = _merged(_by_id(a.nodes), _by_id(b.nodes), _by_id(o.nodes), prefer_a=prefer_a)
    order = [n.id for n in a.nodes] + [n.id for n in b.nodes if n.id not in _by_id(a.nodes)]
    by_id = _by_id(chosen)
    return [by_id[i] for i in order if i in by_id]


def _merged(a: dict[_K, _V], b: dict[_K, _V], o: dict[_K, _V], *, prefer_a: bool) -> list[_V]:
    """The three-way merge of two keyed component sets (absent = None) over `o`."""
    out: list[_V] = []
    for key in dict.fromkeys([*a, *b]):
        x, y, base = a.get(key), b.get(key), o.get(key)
        if x == y or y == base:
            pick = x
        elif x == base:
            pick = y
        else:
            pick = x if prefer_a else y
        if pick is not None:
            out.append(pick)
    return out
