"""Cost as an objective: the Pareto front of holdout score against dollars per task, and the
winner a cost-aware run chooses from it.

Every individual with holdout results (the seed, each generation's best on training and, under
cost-aware, the best on training by fitness alone) is a point: its mean valid holdout score and
its mean dollars per holdout task run. A point is on the front when no other point has a holdout
at least as high and a cost at least as low, one of them strictly. `objective: holdout` (the
default) leaves the winner as the best on training; `objective: cost-aware` chooses the
cheapest point that *ties the best*: the paired bootstrap of (point - best) over the holdout
tasks does not exclude zero from above (the best is not shown better) and its mean holdout is
at most `cost_tolerance` below the best's (a wide interval alone, with few holdout tasks,
would let a clearly poorer point such as the seed win). The best is the point with the highest
mean holdout (ties: the cheaper, then the lower id). Holdout results decide only this final
choice, never selection (docs/evolve.md, "Cost as an objective").
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from statistics import fmean
from typing import Literal

from loopwright.search._checkpoint import Checkpoint
from loopwright.search._individual import Individual
from loopwright.stats import paired_bootstrap

__all__ = [
    "FrontPoint", "Objective", "choose_winner", "cost_front", "front_points", "run_points",
]  # fmt: skip

Objective = Literal["holdout", "cost-aware"]


@dataclass(frozen=True, slots=True)
class FrontPoint:
    """One holdout-evaluated individual: `holdout` (mean valid score), `usd_per_task` (mean
    dollars per holdout run; None when a cost is unknown), `on_front` (not dominated),
    `within_best` (it ties the best: the paired bootstrap does not show the best better and,
    given a tolerance, its mean is at most that far below the best's; True for the best)."""

    individual_id: str
    generation: int
    holdout: float
    usd_per_task: float | None
    n_tasks: int
    on_front: bool = False
    within_best: bool = False


def _holdout(ind: Individual) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    for r in ind.split_results("holdout"):
        out.setdefault(r.task_id, []).append(r.score)
    return out


def _usd(ind: Individual) -> float | None:
    costs = [r.cost_usd for r in ind.results if r.split == "holdout"]
    if not costs or any(c is None for c in costs):
        return None
    return fmean(c for c in costs if c is not None)


def _dominates(a: FrontPoint, b: FrontPoint) -> bool:
    ca = a.usd_per_task if a.usd_per_task is not None else float("inf")
    cb = b.usd_per_task if b.usd_per_task is not None else float("inf")
    return a.holdout >= b.holdout and ca <= cb and (a.holdout > b.holdout or ca < cb)


def _cost_key(p: FrontPoint) -> tuple[float, float, str]:
    cost = p.usd_per_task if p.usd_per_task is not None else float("inf")
    return (cost, -p.holdout, p.individual_id)


def front_points(
    individuals: Iterable[Individual], *, seed: int = 0, tolerance: float | None = None
) -> list[FrontPoint]:
    """Every individual with valid holdout results as a point, cheapest first, each marked
    `on_front` and `within_best` (the module docstring has the rules; `tolerance` None: the
    interval alone). Deterministic for a given `seed` (the bootstrap's)."""
    inds = [i for i in individuals if _holdout(i)]
    raw = [
        FrontPoint(i.id, i.generation, fmean(fmean(v) for v in _holdout(i).values()), _usd(i),
                   len(_holdout(i)))
        for i in inds
    ]  # fmt: skip
    if not raw:
        return []
    best = min(raw, key=lambda p: (-p.holdout, *_cost_key(p)))
    scores = {i.id: _holdout(i) for i in inds}
    points = []
    for p in raw:
        ci = paired_bootstrap(scores[best.individual_id], scores[p.individual_id], seed=seed)
        close = tolerance is None or p.holdout >= best.holdout - tolerance - 1e-12
        within = p is best or (ci is not None and ci.high >= 0.0 and close)
        on_front = not any(_dominates(q, p) for q in raw if q is not p)
        points.append(
            FrontPoint(p.individual_id, p.generation, p.holdout, p.usd_per_task, p.n_tasks,
                       on_front, within)
        )  # fmt: skip
    return sorted(points, key=_cost_key)


def cost_front(individuals: Iterable[Individual], *, seed: int = 0) -> list[FrontPoint]:
    """The points on the front (holdout up, dollars per task down), cheapest first."""
    return [p for p in front_points(individuals, seed=seed) if p.on_front]


def run_points(checkpoint: Checkpoint) -> list[FrontPoint]:
    """`front_points` of the checkpoint's individuals as its run judges them: the bootstrap
    seeded with the run's seed, ties within the run's `cost_tolerance`."""
    config = checkpoint.config
    return front_points(
        checkpoint.individuals.values(), seed=config.seed, tolerance=config.cost_tolerance
    )


def choose_winner(checkpoint: Checkpoint, leader_id: str) -> str:
    """The winner's id under the run's objective: `leader_id` (the best on training) for
    `holdout`; for `cost-aware`, the cheapest point that ties the best (`run_points`;
    `leader_id` when no individual has holdout results). Deterministic (bootstrap seeded with
    the run's seed)."""
    if checkpoint.config.objective != "cost-aware":
        return leader_id
    points = run_points(checkpoint)
    within = [p for p in points if p.within_best]
    return min(within, key=_cost_key).individual_id if within else leader_id
