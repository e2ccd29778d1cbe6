"""Budgets and convergence: which limit, if any, ends the run now."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from loopwright.search._config import Budgets
from loopwright.search._progress import GenerationSummary, Spent

__all__ = ["StopReason", "budget_exhausted", "converged", "train_budget_exhausted"]

StopReason = Literal[
    "max_generations",
    "max_evaluations",
    "max_train_evaluations",
    "max_usd",
    "max_wall_s",
    "target_score",
    "plateau",
    "no_offspring",
]


def budget_exhausted(budgets: Budgets, spent: Spent) -> StopReason | None:
    """The spending limit reached by `spent`, checked before each evaluation; None if none is."""
    if budgets.max_evaluations is not None and spent.evaluations >= budgets.max_evaluations:
        return "max_evaluations"
    if budgets.max_usd is not None and spent.usd >= budgets.max_usd:
        return "max_usd"
    if budgets.max_wall_s is not None and spent.wall_s >= budgets.max_wall_s:
        return "max_wall_s"
    return None


def train_budget_exhausted(budgets: Budgets, train_runs: int) -> StopReason | None:
    """`max_train_evaluations` when `train_runs` training runs have reached it; None if not
    (or no such budget). Holdout runs never count."""
    limit = budgets.max_train_evaluations
    return "max_train_evaluations" if limit is not None and train_runs >= limit else None


def converged(budgets: Budgets, summaries: Sequence[GenerationSummary]) -> StopReason | None:
    """The convergence rule met after the last summarised generation; None to go on.

    Target: the best training fitness reached `target_score`. Plateau: the best training
    fitness has not improved for `plateau_generations` generations. Generations: as many
    generations as `max_generations` have been evaluated.
    """
    if not summaries:
        return None
    last = summaries[-1]
    target = budgets.target_score
    if target is not None and last.train_best is not None and last.train_best >= target:
        return "target_score"
    plateau = budgets.plateau_generations
    if plateau is not None and len(summaries) > plateau:
        before = _best_so_far(summaries[:-plateau])
        if _best_so_far(summaries) <= before:
            return "plateau"
    if len(summaries) >= budgets.max_generations:
        return "max_generations"
    return None


def _best_so_far(summaries: Sequence[GenerationSummary]) -> float:
    return max((s.train_best for s in summaries if s.train_best is not None), default=0.0)
