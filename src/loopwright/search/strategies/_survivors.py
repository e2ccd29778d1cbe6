"""Survivor selection: which individuals of a generation pass unchanged into the next."""

from __future__ import annotations

from typing import Protocol

from loopwright.search._individual import Individual
from loopwright.search._report import rank
from loopwright.search.strategies._state import RunState

__all__ = ["Elitism", "Survivors"]


class Survivors(Protocol):
    """Chooses the survivors among the generation's contenders (training views, best first)."""

    def survivors(self, state: RunState, contenders: list[Individual]) -> list[Individual]: ...


class Elitism:
    """The best `config.elitism` contenders by training fitness (never holdout); under
    `objective: cost-aware`, near-best ties broken by cost (`config.selection_tolerance`)."""

    def survivors(self, state: RunState, contenders: list[Individual]) -> list[Individual]:
        return rank(contenders, state.config.selection_tolerance)[: state.config.elitism]
