"""Parent selection: tournament selection with a deterministic order of tie-breaks."""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

from loopwright.search._individual import Individual

__all__ = ["selection_key", "tournament"]


def selection_key(ind: Individual) -> tuple[float, float, float, str]:
    """The sort key of `ind` in a tournament: smaller is better.

    In order: higher fitness (None ranks last), lower total cost (unknown cost ranks after
    any known cost), fewer gate loops per result (RELOOPs, all gates summed), then the lower
    id, so two distinct individuals never tie.
    """
    fitness = ind.fitness
    cost = ind.cost_usd
    loops = sum(r.gate_loops for r in ind.results) / len(ind.results) if ind.results else 0.0
    return (
        -fitness if fitness is not None else math.inf,
        cost if cost is not None else math.inf,
        loops,
        ind.id,
    )


def tournament(population: Sequence[Individual], k: int, rng: random.Random) -> Individual:
    """The best of `k` individuals drawn from `population` without replacement.

    `k` is capped at the population size (and raised to 1). "Best" is the smallest
    `selection_key`: fitness, then cost, then gate loops, then id. Deterministic for a given
    `rng` state; draws only from `rng`. Raises ValueError on an empty population.
    """
    if not population:
        raise ValueError("tournament needs at least one individual; the population is empty")
    size = min(max(k, 1), len(population))
    drawn = rng.sample(list(population), size)
    return min(drawn, key=selection_key)
