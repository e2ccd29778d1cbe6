"""The extension points of the outer loop: mutation operators, strategies, archives, novelty.

Each is a Protocol with one verb and a decorator registry (operators), so a reflection-guided
strategy (issue 5) plugs in without touching the engine.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from loopwright.models import ChatModel
from loopwright.reflection import ReflectionReport
from loopwright.search._credit import CreditTable
from loopwright.search._individual import Guidance, Individual
from loopwright.workflow import Workflow

__all__ = [
    "MutationContext",
    "MutationOperator",
    "MutationResult",
    "MutationStrategy",
    "NoveltyVerdict",
]


@dataclass(frozen=True)
class MutationContext:
    """What an operator may look at besides the parent workflow.

    `failures` maps node id -> failure messages from the parent's exhaust (may be empty);
    `meta_model` is the model that rewrites prompts (None: the documented offline rewrite);
    `task_kind` describes the benchmark's tasks in a phrase. `rng` is the run's random stream:
    operators draw only from it (same seed, same run). For a guided strategy: `report` is the
    reflection on the parent's generation (None before the first), `credit` the credit table
    so far, `mates` the individuals a crossover may pair the parent with, and `novel` asks the
    novelty filter (without remembering) whether a child would be evaluated.
    """

    rng: random.Random
    task_kind: str = "Python feature tasks graded by hidden tests"
    failures: Mapping[str, Sequence[str]] = field(default_factory=dict)
    meta_model: ChatModel | None = None
    report: ReflectionReport | None = None
    credit: CreditTable | None = None
    mates: tuple[Individual, ...] = ()
    novel: Callable[[Workflow], bool] | None = None


@dataclass(frozen=True)
class MutationResult:
    """A child workflow (valid against the runtime catalog, frozen nodes untouched), or None
    with the reason the operator could not apply. `parents` names further parents (a
    crossover's mate); `guidance` how a guided strategy chose the mutation (None: random)."""

    operator: str
    child: Workflow | None
    reason: str
    target: str | None = None
    parents: tuple[str, ...] = ()
    guidance: Guidance | None = None


class MutationOperator(Protocol):
    """One verb: apply. Never raises for a workflow it cannot change: returns child=None.
    `name` and `axis` (the intervention axis it acts on) are set by `@mutation`."""

    name: str
    axis: str

    def apply(self, parent: Workflow, ctx: MutationContext) -> MutationResult: ...


class MutationStrategy(Protocol):
    """Chooses which operator to try on a parent workflow. The default picks uniformly at
    random."""

    def choose(self, parent: Workflow, operators: Sequence[str], ctx: MutationContext) -> str: ...


@dataclass(frozen=True)
class NoveltyVerdict:
    """Whether a child is new enough to be worth evaluating, and why."""

    accepted: bool
    reason: str
    nearest_id: str | None = None
    distance: float | None = None
