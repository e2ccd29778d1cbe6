"""When the run stops: after a generation's evaluation (the training-run budget) and before
breeding (convergence: target, plateau, generations). Spending budgets stop evaluation itself
(`_spend.exhausted`)."""

from __future__ import annotations

from typing import Protocol

from loopwright.search._budget import StopReason, converged, train_budget_exhausted
from loopwright.search.strategies._state import RunState

__all__ = ["BudgetStopping", "Stopping"]


class Stopping(Protocol):
    """Decides whether the run ends at the two points of a generation where it may."""

    def after_evaluation(self, state: RunState) -> StopReason | None:
        """After the generation's training and holdout runs; None to go on."""
        ...

    def before_breeding(self, state: RunState) -> StopReason | None:
        """After the generation's summary, before selection; None to go on."""
        ...


class BudgetStopping:
    """The config's budgets and convergence rules (search/_budget.py)."""

    def after_evaluation(self, state: RunState) -> StopReason | None:
        return train_budget_exhausted(state.config.budgets, state.train_runs())

    def before_breeding(self, state: RunState) -> StopReason | None:
        return converged(state.config.budgets, state.checkpoint.summaries)
