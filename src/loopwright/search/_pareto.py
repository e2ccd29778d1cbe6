"""Pareto-frontier parent selection (GEPA's rule, on training tasks only).

An individual *leads* a training task when its mean valid score on that task (over its
repetitions) equals the best such mean among the candidates (ties: all of them lead). A task
on which the best mean is 0 is led by nobody: failing everywhere alike says nothing. The
frontier keeps every candidate that leads at least one task, except the dominated ones: a
candidate is dominated when another leads a strict superset of its tasks. Candidates with
equal task sets are all kept. A parent is drawn from the frontier with probability
proportional to the number of tasks it leads.

Candidates are the fully evaluated individuals of every generation so far (their training
views): a workflow that once led a task stays a possible parent, as in GEPA.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import fmean

from loopwright.search._individual import Individual
from loopwright.search._selection import selection_key

__all__ = ["Frontier", "frontier", "pareto_pick", "task_means"]


@dataclass(frozen=True)
class Frontier:
    """The frontier: `members` in a fixed order (best first by the tournament's key) and the
    training tasks each leads."""

    members: tuple[Individual, ...]
    leads: dict[str, frozenset[str]]

    def weight(self, ind: Individual) -> int:
        return len(self.leads[ind.id])


def task_means(ind: Individual, tasks: Sequence[str]) -> dict[str, float]:
    """`ind`'s mean valid training score per task of `tasks` (tasks without one are left out)."""
    scores: dict[str, list[float]] = {}
    for r in ind.results:
        if r.split == "train" and not r.invalid and r.task_id in tasks:
            scores.setdefault(r.task_id, []).append(r.score)
    return {task: fmean(values) for task, values in scores.items()}


def frontier(candidates: Sequence[Individual], tasks: Sequence[str]) -> Frontier:
    """The Pareto frontier of `candidates` over `tasks` (the module docstring has the rule)."""
    means = {ind.id: task_means(ind, tasks) for ind in candidates}
    leads: dict[str, set[str]] = {ind.id: set() for ind in candidates}
    for task in tasks:
        best = max((m[task] for m in means.values() if task in m), default=0.0)
        if best <= 0.0:
            continue
        for ind_id, m in means.items():
            if m.get(task) == best:
                leads[ind_id].add(task)
    leading = [ind for ind in candidates if leads[ind.id]]
    kept = [
        ind
        for ind in leading
        if not any(leads[other.id] > leads[ind.id] for other in leading if other.id != ind.id)
    ]
    ordered = tuple(sorted(kept, key=selection_key))
    return Frontier(ordered, {ind.id: frozenset(leads[ind.id]) for ind in ordered})


def pareto_pick(front: Frontier, rng: random.Random) -> Individual:
    """One parent drawn from `front`, weighted by the number of tasks each member leads. Draws
    once from `rng`. ValueError on an empty frontier."""
    if not front.members:
        raise ValueError("the Pareto frontier is empty: no candidate leads any training task")
    weights = [front.weight(ind) for ind in front.members]
    return rng.choices(front.members, weights=weights, k=1)[0]
