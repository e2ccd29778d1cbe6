"""Aggregates over CycleRecords: what a table row or a fitness value is made of."""

from __future__ import annotations

from collections.abc import Sequence
from statistics import fmean

from pydantic import BaseModel, ConfigDict

from loopwright.records import CycleRecord

__all__ = ["Aggregate", "aggregate"]


class Aggregate(BaseModel):
    """Summary of a set of runs. Invalid grades are counted, never averaged in as zeros; except
    tampered ones (the agent's code forged or cut short the test run), which count as zeros.

    `mean_score` is the mean partial credit over valid and tampered runs (None when there is
    none); `resolved_rate` likewise. `invalid_runs` counts every invalid grade, tampered ones
    included. `cost_usd` is None when any run's cost is unknown.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    runs: int
    valid_runs: int
    invalid_runs: int  # tampered runs included
    tampered_runs: int = 0
    mean_score: float | None
    resolved_rate: float | None
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    mean_duration_s: float | None
    simulated: bool


def aggregate(records: Sequence[CycleRecord]) -> Aggregate:
    """Summarise `records` (any mix of tasks and repetitions). Deterministic."""
    scored = [r for r in records if r.scored]  # valid, or tampered (a zero)
    costs = [r.total_cost_usd for r in records]
    valid_runs = sum(r.valid for r in records)
    return Aggregate(
        runs=len(records),
        valid_runs=valid_runs,
        invalid_runs=len(records) - valid_runs,
        tampered_runs=sum(r.tampered for r in records),
        mean_score=fmean(r.score_end for r in scored) if scored else None,
        resolved_rate=fmean(1.0 if r.resolved else 0.0 for r in scored) if scored else None,
        input_tokens=sum(r.input_tokens for r in records),
        output_tokens=sum(r.output_tokens for r in records),
        cost_usd=None if any(c is None for c in costs) else sum(c for c in costs if c is not None),
        mean_duration_s=fmean(r.duration_s for r in records) if records else None,
        simulated=any(r.simulated for r in records),
    )
