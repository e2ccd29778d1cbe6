"""Reading grade.json (a scoring.GradeResult) without importing scoring.

records/ sits below scoring/ in the dependency order, so it mirrors the fields it needs here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from loopwright.errors import ConfigError
from loopwright.records._record import GradeSummary, TestOutcome, TestOutcomeRecord

__all__ = ["GRADE_FILE", "read_grade"]

GRADE_FILE = "grade.json"


class _Lenient(BaseModel):
    # grade.json is versioned by its own schema_version (checked below): within version 1, fields
    # the record does not keep (durations, exit_code, sandbox, output_tail...) are ignored on
    # purpose, so scoring may add informational fields without breaking records.
    model_config = ConfigDict(frozen=True, extra="ignore")


class _GradeTest(_Lenient):
    id: str
    outcome: TestOutcome
    fail_to_pass: bool
    passed: bool
    message: str = ""


class _GradeFile(_Lenient):
    schema_version: Literal[1]
    task_id: str
    score: float
    resolved: bool
    invalid: bool
    invalid_reason: str | None = None
    f2p_passed: int
    f2p_total: int
    p2p_passed: int
    p2p_total: int
    tests: list[_GradeTest]
    collection_errors: list[str] = []
    restored: list[str] = []
    timed_out: bool = False
    feedback: str = ""  # added within version 1: absent from older files


def read_grade(path: Path, task_id: str) -> tuple[GradeSummary | None, str | None]:
    """The grade in `path` and a problem message; deterministic.

    `(None, None)` when the file does not exist (grading never happened); `(None, message)`
    when it is not JSON (a crash while writing it: the run is data, so this is recorded, not
    raised). Raises ConfigError naming the file when it carries another schema_version than 1,
    does not validate, or grades another task than `task_id`: those are program mismatches.
    """
    if not path.exists():
        return None, None
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        return None, f"{path.name} is not JSON ({exc}); the grade is treated as missing"
    version = raw.get("schema_version") if isinstance(raw, dict) else None
    if version != 1:
        raise ConfigError(
            f"{path} has grade schema_version {version!r}; this loopwright reads version 1",
            fix="re-grade the run with this loopwright version",
        )
    try:
        grade = _GradeFile.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(f"{path} is not a valid GradeResult", got=str(exc)[:500]) from None
    if grade.task_id != task_id:
        raise ConfigError(
            f"{path} grades task {grade.task_id!r} but the run is of task {task_id!r}",
            fix="keep one task run per directory",
        )
    return _summary(grade), None


def _summary(grade: _GradeFile) -> GradeSummary:
    return GradeSummary(
        score=grade.score,
        resolved=grade.resolved,
        invalid=grade.invalid,
        invalid_reason=grade.invalid_reason,
        f2p_passed=grade.f2p_passed,
        f2p_total=grade.f2p_total,
        p2p_passed=grade.p2p_passed,
        p2p_total=grade.p2p_total,
        tests=[TestOutcomeRecord(**t.model_dump()) for t in grade.tests],
        collection_errors=list(grade.collection_errors),
        restored=list(grade.restored),
        timed_out=grade.timed_out,
        feedback=grade.feedback,
    )
