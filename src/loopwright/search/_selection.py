"""Parent selection: tournament selection with a deterministic order of tie-breaks, and the
cost-aware order a run with `objective: cost-aware` selects by (near-best on training counts as
a tie, broken by dollars per training run)."""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

from loopwright.search._individual import Individual

__all__ = ["cost_aware_order", "selection_key", "tournament"]


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


def _usd_per_run(ind: Individual) -> float:
    """Mean dollars per result (unknown cost: infinite, so it ranks after any known cost)."""
    cost = ind.cost_usd
    return cost / len(ind.results) if cost is not None and ind.results else math.inf


def cost_aware_order(views: Sequence[Individual], tolerance: float | None) -> list[Individual]:
    """`views` best first. With `tolerance` None: by `selection_key` (fitness, cost, gate
    loops, id). With a tolerance: the individuals whose fitness is within `tolerance` of the
    best fitness among `views` count as tied and come first, cheapest first (mean dollars per
    result, unknown last; then `selection_key`); the rest follow by `selection_key`. Ties are
    judged against the best of `views`, so the order is a total order and deterministic.
    Cost pressure for `objective: cost-aware`: a cheaper workflow that scores as well within
    the tolerance leads, survives and breeds."""
    ranked = sorted(views, key=selection_key)
    top = ranked[0].fitness if ranked else None
    if tolerance is None or top is None:
        return ranked
    near = [i for i in ranked if i.fitness is not None and i.fitness >= top - tolerance - 1e-12]
    near.sort(key=lambda i: (_usd_per_run(i), selection_key(i)))
    return near + ranked[len(near) :]


def tournament(
    population: Sequence[Individual],
    k: int,
    rng: random.Random,
    *,
    tolerance: float | None = None,
) -> Individual:
    """The best of `k` individuals drawn from `population` without replacement.

    `k` is capped at the population size (and raised to 1). "Best" is the first of
    `cost_aware_order(drawn, tolerance)`: by default the smallest `selection_key` (fitness,
    then cost, then gate loops, then id); with a `tolerance`, the cheapest of those within it
    of the drawn best. Deterministic for a given `rng` state; draws only from `rng` (the same
    draws with or without a tolerance). Raises ValueError on an empty population.
    """
    if not population:
        raise ValueError("tournament needs at least one individual; the population is empty")
    size = min(max(k, 1), len(population))
    drawn = rng.sample(list(population), size)
    return cost_aware_order(drawn, tolerance)[0]
