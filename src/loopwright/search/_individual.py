"""Individuals of the outer loop: a workflow with its lineage and every result it earned."""

from __future__ import annotations

from statistics import fmean
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from loopwright.workflow import Workflow, workflow_hash

__all__ = ["Guidance", "Individual", "Lineage", "TaskResult", "mode_name"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class TaskResult(_Frozen):
    """One evaluation of an individual on one task, one repetition (every repetition is kept)."""

    task_id: str
    repetition: int = Field(ge=0)
    split: str = Field(description="train | holdout | calibration")
    score: float = Field(ge=0.0, le=1.0)
    resolved: bool
    invalid: bool
    failure_category: str
    cost_usd: float | None
    duration_s: float = Field(ge=0)
    gate_loops: int = Field(ge=0, description="RELOOPs taken, all gates summed")
    record_path: str = Field(
        description="the run directory holding record.json, relative to the run"
    )


class Guidance(_Frozen):
    """How a guided strategy chose the mutation that made a child (for credit assignment).

    `mode`: `suggestion` (a reflection suggestion, named by `suggestion_id` in the report of
    `report_generation`), `exploration` (the random share) or `fallback` (no suggestion could
    be applied, so a random operator was). `kind` is the suggestion's kind, or the mode.
    """

    mode: Literal["suggestion", "exploration", "fallback"]
    kind: str
    report_generation: int | None = None
    suggestion_id: str | None = None


class Lineage(_Frozen):
    """How an individual came to be: its parents and the mutation (or design) that made it.

    `guidance` is None for the seed, designs and children of the random strategy."""

    parents: tuple[str, ...] = ()
    operator: str = Field(
        description="mutation operator name, or seed / design:minimal / crossover"
    )
    target: str | None = Field(default=None, description="the node the mutation touched")
    reason: str = ""
    guidance: Guidance | None = None


class Individual(_Frozen):
    """A candidate workflow in the population. Immutable: new results make a new Individual.

    `fitness` (selection) is the mean partial credit over VALID training results; cost,
    retries and duration sit beside it for tie-breaks and reports. No composite formula.
    """

    id: str
    generation: int = Field(ge=0)
    workflow: Workflow
    lineage: Lineage
    results: tuple[TaskResult, ...] = ()

    @property
    def hash(self) -> str:
        return workflow_hash(self.workflow)

    @property
    def mode(self) -> str:
        return mode_name(self.generation, self.id)

    def split_results(self, split: str) -> list[TaskResult]:
        return [r for r in self.results if r.split == split and not r.invalid]

    @property
    def fitness(self) -> float | None:
        """Mean training partial credit over valid results; None before any is in."""
        train = self.split_results("train")
        return fmean(r.score for r in train) if train else None

    def mean_score(self, split: str) -> float | None:
        rows = self.split_results(split)
        return fmean(r.score for r in rows) if rows else None

    @property
    def cost_usd(self) -> float | None:
        costs = [r.cost_usd for r in self.results]
        return None if any(c is None for c in costs) else sum(c for c in costs if c is not None)

    def with_results(self, results: tuple[TaskResult, ...]) -> Individual:
        return self.model_copy(update={"results": (*self.results, *results)})


def mode_name(generation: int, individual_id: str) -> str:
    """The ephemeral mode name of an individual: `evolve-gen{N}-{id[:8]}`."""
    return f"evolve-gen{generation}-{individual_id[:8]}"
