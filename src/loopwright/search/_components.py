"""The engine's collaborators behind one seam: mutation, design, selection, archive, novelty.

The engine calls only these; `default_components` wires the search package's own
implementations (imported lazily), tests pass small fakes.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from loopwright.models import CostLedger
from loopwright.reflection import Reflector
from loopwright.search._config import EvolveConfig
from loopwright.search._individual import Individual
from loopwright.search._protocols import MutationContext, MutationResult, NoveltyVerdict
from loopwright.workflow import Workflow

__all__ = ["Archive", "Novelty", "SearchComponents", "default_components"]


class Archive(Protocol):
    """The MAP-Elites archive as the engine uses it."""

    def add(self, ind: Individual) -> object: ...

    def coverage(self) -> float: ...

    def to_json(self) -> str: ...


class Novelty(Protocol):
    """The novelty filter as the engine uses it."""

    def check(self, workflow: Workflow) -> NoveltyVerdict: ...

    def remember(self, ind: Individual) -> None: ...


@dataclass(frozen=True)
class SearchComponents:
    """Factories and functions the engine calls. Each random one draws only from the rng given.
    `mutate` makes a child of a parent workflow; `design` one of generation 0's designs
    (which ones: `EvolveConfig.designs`). `reflector` reflects on each generation's exhaust
    (None: the engine skips reflection). `ledger` is the run's cost ledger, where the meta
    roles' gateway calls go (None: not metered); the engine reads the meta spend from it."""

    mutate: Callable[[Workflow, MutationContext], MutationResult]
    design: Callable[[str, Workflow], Workflow]
    tournament: Callable[[Sequence[Individual], int, random.Random], Individual]
    new_archive: Callable[[], Archive]
    load_archive: Callable[[str], Archive]
    new_novelty: Callable[[], Novelty]
    reflector: Reflector | None = None
    ledger: CostLedger | None = None


def default_components(config: EvolveConfig, ledger: CostLedger | None = None) -> SearchComponents:
    """The search package's operators, designer, tournament, MAP-Elites archive and novelty filter
    configured from `config` (operators, descriptors, novelty threshold, mutation tries); the
    meta model's gateway calls (reflector, mutator, crossover) are written to `ledger`."""
    from loopwright.search._archive import (
        MapElitesArchive,
        default_descriptors,
        descriptors_by_name,
    )
    from loopwright.search._designer import design
    from loopwright.search._novelty import NoveltyFilter
    from loopwright.search._reflection_inputs import make_reflector
    from loopwright.search._selection import tournament

    operators = list(config.operators) if config.operators else None
    descriptors = (
        descriptors_by_name(config.descriptors) if config.descriptors else default_descriptors()
    )
    return SearchComponents(
        mutate=_mutator(config, operators, ledger),
        design=design,
        tournament=tournament,
        new_archive=lambda: MapElitesArchive(descriptors),
        load_archive=lambda text: MapElitesArchive.from_json(text, descriptors),
        new_novelty=lambda: NoveltyFilter(config.novelty_threshold),
        reflector=make_reflector(config, ledger),
        ledger=ledger,
    )


def _mutator(
    config: EvolveConfig, operators: list[str] | None, ledger: CostLedger | None
) -> Callable[[Workflow, MutationContext], MutationResult]:
    """`config.strategy`'s mutate function. The guided one hands operators the meta model
    (None with sim/offline: the documented offline rewrite and graft)."""
    from loopwright.search._reflection_inputs import meta_model
    from loopwright.search.mutations._core import RandomStrategy, mutate
    from loopwright.search.mutations._guided import PRUNE_SHARE, GuidedStrategy, guided_mutate

    tries = config.mutation_max_tries
    if config.strategy == "random":
        strategy = RandomStrategy(operators=operators)
        return lambda parent, ctx: mutate(
            parent, strategy, ctx, operators=operators, max_tries=tries
        )
    prune = PRUNE_SHARE if config.objective == "cost-aware" else 0.0
    guided = GuidedStrategy(operators, config.exploration, prune)
    meta = meta_model(config, ledger)

    def do_guided(parent: Workflow, ctx: MutationContext) -> MutationResult:
        if meta is not None and ctx.meta_model is None:
            ctx = replace(ctx, meta_model=meta)
        return guided_mutate(parent, guided, ctx, operators=operators, max_tries=tries)

    return do_guided
