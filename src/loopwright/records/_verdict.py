"""The InnerLoop's keep/revert verdict and stall signals for one more cycle on a task.

A CycleRecord made by `CycleAnalyzer` says nothing about keeping: its experiment is `pending`
(or `errored` when the run broke). A client that runs cycles one after another on the same task
(the `InnerLoop`, seed 000's model-like wrapper) judges each against the ones before it with
`judge_cycle`: a cycle is *kept* when its score beats the best score so far (the starting
score, 0.0, before any cycle was kept), *reverted* otherwise, and stays *errored* when the run
broke. `consecutive_reverts` counts the trailing cycles not kept (reverted or errored),
`plateau_detected` is set once that count reaches `plateau_after`. The verdict is a
`CycleVerdict` of its own (verdict.json beside the InnerLoop's record.json), not fields of the
CycleRecord: a run the outer loop evaluates has no history to be judged against. Pure and
deterministic.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from loopwright.records._record import CycleRecord

__all__ = ["DEFAULT_PLATEAU_AFTER", "VERDICT_FILE", "CycleVerdict", "judge_cycle"]

DEFAULT_PLATEAU_AFTER = 3
"""Cycles in a row not kept after which an InnerLoop reports a plateau."""

VERDICT_FILE = "verdict.json"


class CycleVerdict(BaseModel):
    """One InnerLoop cycle judged against the cycles before it on the same task."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: Literal[1] = 1
    run_id: str
    task_id: str
    repetition: int = Field(ge=0)
    verdict: Literal["kept", "reverted", "errored"]
    score: float = Field(ge=0.0, le=1.0)
    best_before: float = Field(ge=0.0, le=1.0)
    consecutive_reverts: int = Field(ge=0)
    plateau_detected: bool


def judge_cycle(
    record: CycleRecord,
    earlier: Sequence[CycleVerdict],
    *,
    plateau_after: int = DEFAULT_PLATEAU_AFTER,
) -> tuple[CycleRecord, CycleVerdict]:
    """`record` (the newest cycle) with its experiments judged (verdict, `score_before` = the
    best kept score so far), and its CycleVerdict against the `earlier` verdicts (oldest
    first). ValueError when `plateau_after` is not positive."""
    if plateau_after < 1:
        raise ValueError(f"plateau_after must be positive, got {plateau_after}")
    best = max([record.score_start, *(v.score for v in earlier if v.verdict == "kept")])
    errored = any(e.verdict == "errored" for e in record.experiments)
    kept = not errored and record.score_end > best
    verdict: Literal["kept", "reverted", "errored"] = (
        "errored" if errored else ("kept" if kept else "reverted")
    )
    previous = earlier[-1].consecutive_reverts if earlier else 0
    streak = 0 if kept else previous + 1
    experiments = [
        e.model_copy(update={"verdict": verdict, "score_before": best}) for e in record.experiments
    ]
    judged = CycleVerdict(
        run_id=record.run_id, task_id=record.task_id, repetition=record.repetition,
        verdict=verdict, score=record.score_end, best_before=best, consecutive_reverts=streak,
        plateau_detected=streak >= plateau_after,
    )  # fmt: skip
    return record.model_copy(update={"experiments": experiments}), judged
