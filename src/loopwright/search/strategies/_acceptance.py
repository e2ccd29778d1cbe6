"""Acceptance by staged minibatches (search/_staging.py): a generation's children are tried
on growing minibatches of the training tasks before the full evaluation, and those the stage
rule judges against (`worse`: clearly worse than their parent; `better`: not better than it)
stop there."""

from __future__ import annotations

from typing import Any, Protocol

from loopwright.search._budget import StopReason
from loopwright.search._progress import StageFinished
from loopwright.search._staging import (
    StageVerdict,
    parent_stage_order,
    stage_order,
    stage_runs,
    stage_verdict,
)
from loopwright.search.strategies._evaluation import EvaluationRound, Runs
from loopwright.search.strategies._state import RunState
from loopwright.store import StageRow

__all__ = ["Acceptance", "StagedAcceptance"]


class Acceptance(Protocol):
    """Runs the generation's early evaluations and records which children go on to the full
    training evaluation (`RunState.checkpoint.stopped_ids()` holds the others)."""

    def screen(self, state: RunState, round_: EvaluationRound) -> StopReason | None:
        """Evaluate and judge; a budget's stop reason, or None."""
        ...


class StagedAcceptance:
    """`config.stages` minibatches: each stage's runs for the children still going on, then a
    verdict on each against its parent under `config.stage_rule`. Children whose stages hold
    the same runs are evaluated together (under `worse`, all of them). Verdicts are recorded
    once (a resumed run recomputes the same ones and skips them)."""

    def screen(self, state: RunState, round_: EvaluationRound) -> StopReason | None:
        staged = [i for i in state.checkpoint.population if _stageable(state, i)]
        if not staged:
            return None
        cp = state.checkpoint
        levels = {t: state.tasks[t].spec.level for t in cp.train_tasks}
        order = stage_order(cp.train_tasks, levels, state.config.seed, cp.generation)
        orders = {i: _child_order(state, i, order) for i in staged}
        for stage, size in enumerate(state.config.stages):
            if size >= len(order):
                break
            stopped = state.checkpoint.stopped_ids()
            alive = [i for i in staged if i not in stopped]
            runs = {i: stage_runs(orders[i], size) for i in alive}
            for group in _same_runs(alive, runs):
                reason = round_.evaluate(state, "train", group, runs=runs[group[0]])
                if reason is not None:
                    return reason
            for ind_id in alive:
                _judge(state, ind_id, stage, runs[ind_id])
        return None


def _child_order(state: RunState, ind_id: str, order: tuple[str, ...]) -> tuple[str, ...]:
    """The generation's stage order as `ind_id` is staged (its parent's under `better`)."""
    parent = state.individuals.get(state.individuals[ind_id].lineage.parents[0])
    return parent_stage_order(order, parent, state.config.stage_rule)


def _same_runs(ids: list[str], runs: dict[str, Runs]) -> list[list[str]]:
    """`ids` grouped by their stage runs, in order of first appearance (one group under
    `worse`, so every child's stage is evaluated in one round as before)."""
    groups: dict[Runs, list[str]] = {}
    for ind_id in ids:
        groups.setdefault(runs[ind_id], []).append(ind_id)
    return list(groups.values())


def _stageable(state: RunState, ind_id: str) -> bool:
    """A child of this generation (not generation 0) whose parent is fully evaluated and which
    still lacks the full training evaluation."""
    ind = state.individuals[ind_id]
    parents = ind.lineage.parents
    return (
        bool(state.config.stages)
        and ind.generation == state.checkpoint.generation > 0
        and bool(parents)
        and parents[0] in state.individuals
        and state.complete(state.individuals[parents[0]])
        and not state.complete(ind)
    )


def _judge(state: RunState, ind_id: str, stage: int, runs: Runs) -> None:
    cp = state.checkpoint
    if any(v.individual_id == ind_id and v.stage == stage for v in cp.stage_verdicts):
        return
    child = state.individuals[ind_id]
    parent = state.individuals.get(child.lineage.parents[0])
    verdict = stage_verdict(
        child, parent, runs, stage=stage, margin=state.config.stage_margin,
        rule=state.config.stage_rule, tolerance=state.config.selection_tolerance,
    )  # fmt: skip
    state.update(stage_verdicts=(*cp.stage_verdicts, verdict))
    state.save()
    generation = state.checkpoint.generation
    state.index.add_stage_verdict(
        StageRow(run_id=state.run_dir.name, generation=generation, **_verdict_fields(verdict))
    )
    fields = {**_verdict_fields(verdict), "tasks": list(verdict.tasks)}
    state.log.emit(StageFinished(generation=generation, **fields))


def _verdict_fields(verdict: StageVerdict) -> dict[str, Any]:
    return {name: getattr(verdict, name) for name in StageVerdict.model_fields}
