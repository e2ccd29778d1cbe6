"""The InnerLoop's keep/revert verdict and stall signals for one more cycle on a task.

A CycleRecord made by `CycleAnalyzer` says nothing about keeping: one run is `pending` (or
`errored` when it broke). A client that runs cycles one after another on the same task (the
`InnerLoop`, seed 000's model-like wrapper) judges each against the ones before it with
`judge_cycle`: a cycle is *kept* when its score beats the best score so far (the starting
score, 0.0, before any cycle was kept), *reverted* otherwise, and stays *errored* when the run
broke. `consecutive_reverts` counts the trailing cycles not kept (reverted or errored),
`plateau_detected` is set once that count reaches `plateau_after`. Pure and deterministic.
"""

from __future__ import annotations

from collections.abc import Sequence

from loopwright.records._record import CycleRecord

__all__ = ["DEFAULT_PLATEAU_AFTER", "judge_cycle"]

DEFAULT_PLATEAU_AFTER = 3
"""Cycles in a row not kept after which an InnerLoop reports a plateau."""


def judge_cycle(
    record: CycleRecord,
    earlier: Sequence[CycleRecord],
    *,
    plateau_after: int = DEFAULT_PLATEAU_AFTER,
) -> CycleRecord:
    """`record` (the newest cycle) with its verdict, verdict counts and stall signals set
    against the `earlier` cycles (already judged, oldest first). ValueError when
    `plateau_after` is not positive."""
    if plateau_after < 1:
        raise ValueError(f"plateau_after must be positive, got {plateau_after}")
    best = max([record.score_start, *(r.score_end for r in earlier if r.kept)])
    errored = record.errored > 0
    kept = not errored and record.score_end > best
    verdict = "errored" if errored else ("kept" if kept else "reverted")
    previous = earlier[-1].consecutive_reverts if earlier else 0
    streak = 0 if kept else previous + 1
    experiments = [
        e.model_copy(update={"verdict": verdict, "score_before": best}) for e in record.experiments
    ]
    return record.model_copy(
        update={
            "experiments": experiments,
            "kept": sum(e.verdict == "kept" for e in experiments),
            "reverted": sum(e.verdict == "reverted" for e in experiments),
            "errored": sum(e.verdict == "errored" for e in experiments),
            "consecutive_reverts": streak,
            "plateau_detected": streak >= plateau_after,
        }
    )
