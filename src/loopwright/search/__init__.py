"""The outer loop: evolutionary search over workflows (individuals, mutations, selection,
MAP-Elites archive, novelty, calibration, holdout every generation, checkpoint and resume)."""

from __future__ import annotations

from loopwright.search._individual import Individual, Lineage, TaskResult, mode_name
from loopwright.search._protocols import (
    MutationContext,
    MutationOperator,
    MutationResult,
    MutationStrategy,
    NoveltyVerdict,
)

__all__ = [
    "Individual",
    "Lineage",
    "MutationContext",
    "MutationOperator",
    "MutationResult",
    "MutationStrategy",
    "NoveltyVerdict",
    "TaskResult",
    "mode_name",
]
