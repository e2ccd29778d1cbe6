"""The InnerLoop's verdicts: a cycle is kept when it beats the best so far, reverted otherwise,
errored when it broke; consecutive reverts and the plateau follow."""

from __future__ import annotations

import pytest

from loopwright.records import CycleRecord, FailureCategory, judge_cycle
from tests.records.test_analyzer import expected_reloop_record


def cycle(score: float, *, broke: bool = False) -> CycleRecord:
    base = expected_reloop_record()
    category = FailureCategory.AGENT_ERROR if broke else FailureCategory.NONE
    experiment = base.experiments[0].model_copy(
        update={"score_after": score, "verdict": "errored" if broke else "pending",
                "failure_category": category}
    )  # fmt: skip
    return base.model_copy(
        update={"score_end": score, "score_delta": score, "experiments": [experiment],
                "errored": int(broke)}
    )  # fmt: skip


def judge_all(scores: list[tuple[float, bool]], plateau_after: int = 3) -> list[CycleRecord]:
    history: list[CycleRecord] = []
    for score, broke in scores:
        history.append(judge_cycle(cycle(score, broke=broke), history, plateau_after=plateau_after))
    return history


def test_a_better_cycle_is_kept_and_others_reverted_against_the_best_so_far() -> None:
    runs = judge_all([(0.5, False), (0.4, False), (0.5, False), (0.75, False)])
    assert [r.experiments[0].verdict for r in runs] == ["kept", "reverted", "reverted", "kept"]
    assert [r.experiments[0].score_before for r in runs] == [0.0, 0.5, 0.5, 0.5]
    assert [(r.kept, r.reverted, r.errored) for r in runs] == [
        (1, 0, 0), (0, 1, 0), (0, 1, 0), (1, 0, 0)
    ]  # fmt: skip
    assert [r.consecutive_reverts for r in runs] == [0, 1, 2, 0]


def test_a_first_cycle_scoring_nothing_is_reverted() -> None:
    (only,) = judge_all([(0.0, False)])
    assert only.experiments[0].verdict == "reverted" and only.consecutive_reverts == 1


def test_a_broken_cycle_stays_errored_and_counts_toward_the_plateau() -> None:
    runs = judge_all([(1.0, False), (0.0, True), (1.0, False), (0.0, True)])
    assert [r.experiments[0].verdict for r in runs] == ["kept", "errored", "reverted", "errored"]
    assert [r.consecutive_reverts for r in runs] == [0, 1, 2, 3]
    assert [r.plateau_detected for r in runs] == [False, False, False, True]
    assert runs[1].errored == 1 and runs[1].kept == runs[1].reverted == 0


def test_the_plateau_threshold_is_the_inner_loops_choice() -> None:
    runs = judge_all([(0.2, False), (0.1, False)], plateau_after=1)
    assert [r.plateau_detected for r in runs] == [False, True]
    with pytest.raises(ValueError):
        judge_cycle(cycle(0.1), [], plateau_after=0)
