"""Staged evaluation: a child earns the full training evaluation on a small minibatch first.

Each generation has one task order for its stages, drawn from its own seed (the run seed and
the generation: never from the run RNG, so a resumed run draws the same). The order is
stratified by task level: every prefix of it holds each level in proportion to its share of
the training tasks, as nearly as a whole number of tasks allows. Stage `k` of size `n` is the
first `n` tasks of that order, repetition 0 only; the stages are nested, so a child that goes
on keeps every run it made and runs only what it lacks.

Both means are paired: over the stage's (task, repetition 0) runs valid for the child and for
its parent alike. The parent is the first of the child's lineage parents (the one mutated; a
crossover's or merge's base). The rule (`stage_rule`, docs/evolve.md "Staged evaluation"):

- `worse` (the default): a child whose mean is below its parent's by more than `margin` is
  *stopped*: clearly worse. Anything else goes on (ties go on). The stage is the first tasks of
  the generation's order, the same for every child.
- `better`: a child goes on only when its mean is above its parent's (strictly; `margin` is
  not used): the stage must show it improves on something, as GEPA accepts a proposal only
  when it beats its parent on the minibatch. Ties stop. The stage is the first tasks of the
  order *on which the parent scored below 1* (only there can a child show it is better),
  then the rest of the order: a prefix of one fixed order per (generation, parent), so the
  stages still nest. Under `objective: cost-aware` (a `tolerance` is given: the run's
  `cost_tolerance`) "better" is better by that objective: a child also goes on when its mean
  is within the tolerance of its parent's and its paired mean dollars per run are at most
  CHEAPER times its parent's (a cheaper tie, which cost-aware selection would prefer).

Under either rule a child goes on when the stage cannot compare: the parent lacks one of the
stage's runs, or no run is valid for both.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from statistics import fmean
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from loopwright.search._individual import Individual

__all__ = [
    "CHEAPER", "StageRule", "StageVerdict", "cheaper_tie", "parent_stage_order", "stage_order",
    "stage_runs", "stage_verdict",
]  # fmt: skip

CHEAPER = 0.9
"""Under `better` with a cost tolerance, the most a tied child's paired mean dollars per run
may be, as a share of its parent's, for it to go on as a cheaper tie: a removed agent saves far
more; a reworded prompt's noise in tokens (a few per cent) does not pass."""

StageRule = Literal["worse", "better"]
"""`worse`: stop a child clearly worse than its parent on the stage (ties go on); `better`: go
on only with a child better than its parent on the stage (ties stop)."""


class StageVerdict(BaseModel):
    """How a child fared on one stage against its parent on the same runs."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    individual_id: str
    parent_id: str
    stage: int = Field(ge=0, description="index into the run's stages")
    tasks: tuple[str, ...]
    child_mean: float | None
    parent_mean: float | None
    margin: float
    stopped: bool
    reason: str


def stage_order(
    train_tasks: Sequence[str], levels: Mapping[str, int], seed: int, generation: int
) -> tuple[str, ...]:
    """The training tasks in generation `generation`'s stage order: shuffled within each level
    by a generator seeded with (`seed`, `generation`), then interleaved so that every prefix is
    stratified by level (the next task comes from the level furthest below its share; ties go
    to the lower level). Deterministic; draws from no shared RNG."""
    rng = random.Random(f"loopwright-stages:{seed}:{generation}")
    by_level: dict[int, list[str]] = {}
    for task in sorted(train_tasks):
        by_level.setdefault(levels.get(task, 0), []).append(task)
    for tasks in by_level.values():
        rng.shuffle(tasks)
    total = len(train_tasks)
    taken = dict.fromkeys(by_level, 0)
    order: list[str] = []
    while len(order) < total:
        # The level whose share so far lags its share of the whole the most.
        level = min(
            (lv for lv in by_level if taken[lv] < len(by_level[lv])),
            key=lambda lv: ((taken[lv] + 1) / len(by_level[lv]), lv),
        )
        order.append(by_level[level][taken[level]])
        taken[level] += 1
    return tuple(order)


def stage_runs(order: Sequence[str], size: int) -> tuple[tuple[str, int], ...]:
    """The (task, repetition) runs of a stage of `size` tasks: the first `size` of `order`,
    repetition 0 (all of them when `size` is not smaller than the order)."""
    return tuple((task, 0) for task in order[: max(size, 0)])


def parent_stage_order(
    order: Sequence[str], parent: Individual | None, rule: StageRule
) -> tuple[str, ...]:
    """The generation's `order` as a child of `parent` is staged under `rule`: unchanged for
    `worse`; for `better`, the tasks on which the parent's valid repetition-0 training score is
    below 1 first (the order kept), then the others. Deterministic."""
    if rule == "worse" or parent is None:
        return tuple(order)
    scores = _scores(parent)
    room = [t for t in order if scores.get((t, 0), 1.0) < 1.0]
    return (*room, *(t for t in order if t not in set(room)))


def stage_verdict(
    child: Individual,
    parent: Individual | None,
    runs: Sequence[tuple[str, int]],
    *,
    stage: int,
    margin: float,
    rule: StageRule = "worse",
    tolerance: float | None = None,
) -> StageVerdict:
    """The verdict on `child` after a stage of `runs` under `rule` (see the module docstring).
    Both means are over the runs valid for both (paired). `tolerance` (the run's cost
    tolerance under `objective: cost-aware`, else None) lets a cheaper tie go on under
    `better`. Deterministic."""
    tasks = tuple(task for task, _ in runs)
    child_mean, parent_mean = _paired_means(child, parent, runs)
    parent_id = parent.id if parent is not None else ""
    if child_mean is None or parent_mean is None:
        why = "the parent lacks runs" if child_mean is not None else "no run valid for both"
        return StageVerdict(
            individual_id=child.id, parent_id=parent_id, stage=stage, tasks=tasks,
            child_mean=child_mean, parent_mean=parent_mean, margin=margin, stopped=False,
            reason=f"goes on: the stage cannot compare ({why})",
        )  # fmt: skip
    if rule == "better":
        stopped = child_mean <= parent_mean
        said = f"{'not above' if stopped else 'above'} the parent's {parent_mean:.3f}"
        usd = _paired_usd(child, parent, runs) if parent is not None else None
        if stopped and (tie := cheaper_tie(child_mean, parent_mean, usd, tolerance)):
            stopped, said = False, tie
    else:
        stopped = child_mean < parent_mean - margin
        said = (
            f"{'below' if stopped else 'not below'} the parent's {parent_mean:.3f} minus the "
            f"margin {margin:g}"
        )
    reason = (
        f"{'stopped' if stopped else 'goes on'}: {child_mean:.3f} on {len(runs)} task(s) is {said}"
    )
    return StageVerdict(
        individual_id=child.id, parent_id=parent_id, stage=stage, tasks=tasks,
        child_mean=child_mean, parent_mean=parent_mean, margin=margin, stopped=stopped,
        reason=reason,
    )  # fmt: skip


def cheaper_tie(
    child_mean: float,
    parent_mean: float,
    usd: tuple[float, float] | None,
    tolerance: float | None,
) -> str | None:
    """What the verdict says of a child within `tolerance` of its parent whose paired dollars
    are at most CHEAPER times the parent's; None for any other child, and without a tolerance
    or a known, positive parent cost."""
    if tolerance is None or usd is None or usd[1] <= 0.0:
        return None
    if child_mean < parent_mean - tolerance - 1e-12 or usd[0] > CHEAPER * usd[1]:
        return None
    return (
        f"within {tolerance:g} of the parent's {parent_mean:.3f} at ${usd[0]:.4f} against "
        f"${usd[1]:.4f} a run (cost-aware: a cheaper tie)"
    )


def _paired_usd(
    child: Individual, parent: Individual, runs: Sequence[tuple[str, int]]
) -> tuple[float, float] | None:
    """The child's and the parent's mean dollars per run over the `runs` valid for both with a
    known cost; None when there is no such run."""
    mine, theirs = _costs(child), _costs(parent)
    both = [r for r in runs if r in mine and r in theirs]
    if not both:
        return None
    return fmean(mine[r] for r in both), fmean(theirs[r] for r in both)


def _costs(ind: Individual) -> dict[tuple[str, int], float]:
    """(task, repetition) -> dollars of `ind`'s valid training results with a known cost."""
    return {
        (r.task_id, r.repetition): r.cost_usd
        for r in ind.split_results("train")
        if r.cost_usd is not None
    }  # fmt: skip


def _scores(ind: Individual) -> dict[tuple[str, int], float]:
    """(task, repetition) -> score of `ind`'s valid training results."""
    return {(r.task_id, r.repetition): r.score for r in ind.split_results("train")}


def _paired_means(
    child: Individual, parent: Individual | None, runs: Sequence[tuple[str, int]]
) -> tuple[float | None, float | None]:
    """The child's and the parent's means over the `runs` valid for both; the parent's is None
    when it lacks one of `runs` (or there is no parent), both None when no run is valid for
    both."""
    mine = _scores(child)
    if parent is None or not set(runs) <= {
        (r.task_id, r.repetition) for r in parent.results if r.split == "train"
    }:
        return (fmean(mine[r] for r in runs if r in mine) if any(r in mine for r in runs)
                else None), None  # fmt: skip
    theirs = _scores(parent)
    both = [r for r in runs if r in mine and r in theirs]
    if not both:
        return None, None
    return fmean(mine[r] for r in both), fmean(theirs[r] for r in both)
