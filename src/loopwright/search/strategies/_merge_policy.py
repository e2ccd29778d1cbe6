"""When to merge, and which pair: two frontier members that lead on different tasks, over their
nearest common ancestor (`parents: pareto` with a `merge_rate`). The merge itself, of two
workflows, is the operator's (`search/mutations/_merge.py`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from loopwright.search._individual import Individual
from loopwright.search._pareto import Frontier, pareto_pick
from loopwright.search._protocols import MutationResult
from loopwright.search._selection import selection_key
from loopwright.search.mutations._merge import merge_workflows
from loopwright.search.strategies._state import RunState

__all__ = ["common_ancestor", "maybe_merge"]


def maybe_merge(
    state: RunState, front: Frontier | None
) -> tuple[Individual, MutationResult] | None:
    """With probability `merge_rate` (one draw from `state.rng`, only when merging is on and
    there is a frontier), a merge of two frontier members that lead on different tasks, over
    their nearest common ancestor: (base parent, result). None when no merge is tried this
    time or no pair qualifies (then a mutation is made instead)."""
    rate = state.config.merge_rate
    if front is None or rate <= 0:
        return None
    if state.rng.random() >= rate:
        return None
    a = pareto_pick(front, state.rng)
    mates = [
        m for m in front.members
        if front.leads[m.id] - front.leads[a.id] and front.leads[a.id] - front.leads[m.id]
    ]  # fmt: skip
    if not mates:
        return None
    b = pareto_pick(Frontier(tuple(mates), front.leads), state.rng)
    ancestor = common_ancestor(a.id, b.id, state.individuals)
    if ancestor is None:
        return None
    result = merge_workflows(
        a.workflow,
        b.workflow,
        state.individuals[ancestor].workflow,
        prefer_a=selection_key(a) <= selection_key(b),
    )
    return a, replace(result, parents=(b.id,))


def common_ancestor(a: str, b: str, individuals: Mapping[str, Individual]) -> str | None:
    """The nearest common ancestor of `a` and `b` through lineage parents (an individual is its
    own ancestor at distance 0): the smallest summed distance, then the smaller id."""
    da, db = _ancestors(a, individuals), _ancestors(b, individuals)
    common = set(da) & set(db)
    return min(common, key=lambda i: (da[i] + db[i], i)) if common else None


def _ancestors(start: str, individuals: Mapping[str, Individual]) -> dict[str, int]:
    dist = {start: 0}
    frontier_ = [start]
    while frontier_:
        nxt = []
        for ind_id in frontier_:
            ind = individuals.get(ind_id)
            for p in ind.lineage.parents if ind is not None else ():
                if p not in dist and p in individuals:
                    dist[p] = dist[ind_id] + 1
                    nxt.append(p)
        frontier_ = nxt
    return dist
