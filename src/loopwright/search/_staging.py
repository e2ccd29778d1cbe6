"""Staged evaluation: a child earns the full training evaluation on a small minibatch first.

Each generation has one task order for its stages, drawn from its own seed (the run seed and
the generation: never from the run RNG, so a resumed run draws the same). The order is
stratified by task level: every prefix of it holds each level in proportion to its share of
the training tasks, as nearly as a whole number of tasks allows. Stage `k` of size `n` is the
first `n` tasks of that order, repetition 0 only; the stages are nested, so a child that goes
on keeps every run it made and runs only what it lacks.

The rule (docs/evolve.md, "Staged evaluation"): after each stage, a child whose mean partial
credit on the stage's runs is below its parent's mean on the same (task, repetition 0) runs by
more than `margin` is *stopped*: clearly worse. Anything else goes on (ties go on; so does a
child whose parent lacks any of those runs, or whose runs were all invalid: the stage cannot
tell). The parent is the first of the child's lineage parents (the one mutated; a crossover's
or merge's base).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from statistics import fmean

from pydantic import BaseModel, ConfigDict, Field

from loopwright.search._individual import Individual

__all__ = ["StageVerdict", "stage_order", "stage_runs", "stage_verdict"]


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


def stage_verdict(
    child: Individual,
    parent: Individual | None,
    runs: Sequence[tuple[str, int]],
    *,
    stage: int,
    margin: float,
) -> StageVerdict:
    """The verdict on `child` after a stage of `runs` (see the module docstring for the rule).
    Both means are over the valid training results of exactly those runs."""
    tasks = tuple(task for task, _ in runs)
    child_mean = _mean_on(child, runs)
    parent_mean = _mean_on(parent, runs) if parent is not None else None
    parent_id = parent.id if parent is not None else ""
    if child_mean is None or parent_mean is None:
        why = "no valid result of the child" if child_mean is None else "the parent lacks runs"
        return StageVerdict(
            individual_id=child.id, parent_id=parent_id, stage=stage, tasks=tasks,
            child_mean=child_mean, parent_mean=parent_mean, margin=margin, stopped=False,
            reason=f"goes on: the stage cannot compare ({why})",
        )  # fmt: skip
    stopped = child_mean < parent_mean - margin
    relation = "below" if stopped else "not below"
    reason = (
        f"{'stopped' if stopped else 'goes on'}: {child_mean:.3f} on {len(runs)} task(s) is "
        f"{relation} the parent's {parent_mean:.3f} minus the margin {margin:g}"
    )
    return StageVerdict(
        individual_id=child.id, parent_id=parent_id, stage=stage, tasks=tasks,
        child_mean=child_mean, parent_mean=parent_mean, margin=margin, stopped=stopped,
        reason=reason,
    )  # fmt: skip


def _mean_on(ind: Individual, runs: Sequence[tuple[str, int]]) -> float | None:
    wanted = set(runs)
    found = {
        (r.task_id, r.repetition): r.score
        for r in ind.results
        if r.split == "train" and (r.task_id, r.repetition) in wanted and not r.invalid
    }
    have = {(r.task_id, r.repetition) for r in ind.results if r.split == "train"}
    if not wanted <= have or not found:
        return None
    return fmean(found.values())
