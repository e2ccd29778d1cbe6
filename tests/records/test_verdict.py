"""The InnerLoop's verdicts: a cycle is kept when it beats the best so far, reverted otherwise,
errored when it broke; consecutive reverts and the plateau follow. The verdict is a
CycleVerdict of its own; a CycleRecord (schema 2) has no verdict counts, and a schema-1
record.json that had them still loads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loopwright.records import (
    CycleRecord,
    CycleVerdict,
    FailureCategory,
    judge_cycle,
    load_record,
    write_record,
)
from tests.records.test_analyzer import expected_reloop_record


def cycle(score: float, *, broke: bool = False) -> CycleRecord:
    base = expected_reloop_record()
    category = FailureCategory.AGENT_ERROR if broke else FailureCategory.NONE
    experiment = base.experiments[0].model_copy(
        update={"score_after": score, "verdict": "errored" if broke else "pending",
                "failure_category": category}
    )  # fmt: skip
    return base.model_copy(
        update={"score_end": score, "score_delta": score, "experiments": [experiment]}
    )


def judge_all(
    scores: list[tuple[float, bool]], plateau_after: int = 3
) -> list[tuple[CycleRecord, CycleVerdict]]:
    verdicts: list[CycleVerdict] = []
    out = []
    for score, broke in scores:
        record, verdict = judge_cycle(
            cycle(score, broke=broke), verdicts, plateau_after=plateau_after
        )
        verdicts.append(verdict)
        out.append((record, verdict))
    return out


def test_a_better_cycle_is_kept_and_others_reverted_against_the_best_so_far() -> None:
    runs = judge_all([(0.5, False), (0.4, False), (0.5, False), (0.75, False)])
    assert [r.experiments[0].verdict for r, _ in runs] == ["kept", "reverted", "reverted", "kept"]
    assert [v.verdict for _, v in runs] == ["kept", "reverted", "reverted", "kept"]
    assert [r.experiments[0].score_before for r, _ in runs] == [0.0, 0.5, 0.5, 0.5]
    assert [v.best_before for _, v in runs] == [0.0, 0.5, 0.5, 0.5]
    assert [v.consecutive_reverts for _, v in runs] == [0, 1, 2, 0]


def test_a_first_cycle_scoring_nothing_is_reverted() -> None:
    ((record, verdict),) = judge_all([(0.0, False)])
    assert record.experiments[0].verdict == "reverted" and verdict.consecutive_reverts == 1


def test_a_broken_cycle_stays_errored_and_counts_toward_the_plateau() -> None:
    runs = judge_all([(1.0, False), (0.0, True), (1.0, False), (0.0, True)])
    assert [v.verdict for _, v in runs] == ["kept", "errored", "reverted", "errored"]
    assert [v.consecutive_reverts for _, v in runs] == [0, 1, 2, 3]
    assert [v.plateau_detected for _, v in runs] == [False, False, False, True]


def test_the_plateau_threshold_is_the_inner_loops_choice() -> None:
    runs = judge_all([(0.2, False), (0.1, False)], plateau_after=1)
    assert [v.plateau_detected for _, v in runs] == [False, True]
    with pytest.raises(ValueError):
        judge_cycle(cycle(0.1), [], plateau_after=0)


DROPPED = ("kept", "reverted", "errored", "consecutive_reverts", "plateau_detected")


def test_a_record_has_no_field_a_run_on_its_own_never_fills() -> None:
    fields = set(CycleRecord.model_fields)
    assert fields.isdisjoint(DROPPED)
    assert CycleRecord.model_fields["schema_version"].default == 3


def test_a_schema_1_record_with_verdict_counts_still_loads(tmp_path: Path) -> None:
    record = cycle(0.5)
    write_record(record, tmp_path)
    raw = json.loads((tmp_path / "record.json").read_text(encoding="utf-8"))
    raw.update(schema_version=1, kept=0, reverted=0, errored=0, consecutive_reverts=0,
               plateau_detected=False)  # fmt: skip
    (tmp_path / "record.json").write_text(json.dumps(raw), encoding="utf-8")
    loaded = load_record(tmp_path)
    assert loaded.schema_version == 3 and loaded == record


def test_a_schema_2_record_loads_with_no_feedback(tmp_path: Path) -> None:
    record = cycle(0.5)
    write_record(record, tmp_path)
    raw = json.loads((tmp_path / "record.json").read_text(encoding="utf-8"))
    raw["schema_version"] = 2
    if raw.get("grade"):
        raw["grade"].pop("feedback", None)
    (tmp_path / "record.json").write_text(json.dumps(raw), encoding="utf-8")
    loaded = load_record(tmp_path)
    assert loaded.schema_version == 3 and loaded == record
    assert loaded.grade is None or loaded.grade.feedback == ""
