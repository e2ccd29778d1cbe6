"""Parent selection: a tournament among the contenders, or a pick from the per-task Pareto
frontier of every fully evaluated individual so far (`parents: pareto`)."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Protocol

from loopwright.search._individual import Individual
from loopwright.search._pareto import Frontier, frontier, pareto_pick
from loopwright.search._report import train_view
from loopwright.search._selection import tournament
from loopwright.search.strategies._state import RunState

__all__ = ["ParentSelector", "ParetoParents", "TournamentParents", "parent_selector"]

Tournament = Callable[[Sequence[Individual], int, random.Random], Individual]


class ParentSelector(Protocol):
    """Chooses the parent of the next child; draws only from `state.rng`. `front` is the
    frontier it picks from (None for a tournament): merging draws its pairs from it."""

    front: Frontier | None

    def select(self, state: RunState, parents: list[Individual]) -> Individual: ...


class TournamentParents:
    """A `tournament_k` tournament among `parents`. Under `objective: cost-aware` it is the
    search's own `tournament` with the run's tolerance (near-best ties broken by cost; the
    same draws from the RNG), whatever tournament the components hold."""

    front: Frontier | None = None

    def __init__(self, tournament: Tournament) -> None:
        self.tournament = tournament

    def select(self, state: RunState, parents: list[Individual]) -> Individual:
        k, tolerance = state.config.tournament_k, state.config.selection_tolerance
        if tolerance is not None:
            return tournament(parents, k, state.rng, tolerance=tolerance)
        return self.tournament(parents, k, state.rng)


class ParetoParents:
    """A pick from the frontier (each member weighted by the tasks it leads)."""

    def __init__(self, front: Frontier) -> None:
        self.front: Frontier | None = front
        self._front = front

    def select(self, state: RunState, parents: list[Individual]) -> Individual:
        return pareto_pick(self._front, state.rng)


def parent_selector(state: RunState, tournament: Tournament) -> ParentSelector:
    """This breeding round's selector: with `parents: pareto` the frontier of every fully
    evaluated individual so far, unless nobody leads a task yet; else the tournament."""
    if state.config.parents == "pareto":
        done = [train_view(i) for i in state.individuals.values() if state.complete(i)]
        front = frontier(done, state.checkpoint.train_tasks)
        if front.members:
            return ParetoParents(front)
    return TournamentParents(tournament)
