"""The grade of one workspace on one task, as written to grade.json."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from loopwright.records import forfeited
from loopwright.scoring._junit import Outcome

__all__ = [
    "FEEDBACK_CHARS",
    "GRADE_SCHEMA_VERSION",
    "SUSPECT_PREFIX",
    "TAMPER_PREFIX",
    "GradeResult",
    "TestResult",
]

GRADE_SCHEMA_VERSION: Literal[1] = 1
FEEDBACK_CHARS = 2000
"""The most of an evaluator's feedback a grade keeps (its end, where a summary usually is)."""
TAMPER_PREFIX = "tamper:"
"""How an invalid reason starts when the agent's code forged or cut short the test run."""
SUSPECT_PREFIX = "suspect:"
"""How an invalid reason starts when the audit of the agent's change found code that interferes
with the test machinery (scoring/_audit.py); it counts as a zero, like `tamper:`."""


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class TestResult(_Strict):
    """One listed test id: its merged outcome, whether it is fail_to_pass, and whether it counts."""

    __test__ = False  # not a pytest test class

    id: str
    outcome: Outcome
    fail_to_pass: bool
    passed: bool
    duration_s: float = 0.0
    message: str = ""


class GradeResult(_Strict):
    """The grade of one workspace on one task.

    `score` is the fraction of fail_to_pass tests passing (partial credit). `resolved` means every
    fail_to_pass and pass_to_pass test passed. An `invalid` grade is not a measurement (the test
    run produced no trustworthy results; `invalid_reason` says why): its score is 0.0 and it must
    be reported as invalid, not averaged in as a zero; except a *tampered* grade (the reason
    starts with `tamper:`), which the agent's own code caused, and which counts as the zero it is.
    `feedback` is what an evaluator function said about the work (the `function` runner's
    `Assessment.feedback`, its last FEEDBACK_CHARS characters; empty for the other runners): the
    record keeps it and reflection reads it. grade.json version 1 gained it as an optional field.
    """

    schema_version: Literal[1] = GRADE_SCHEMA_VERSION
    task_id: str
    score: float = Field(ge=0.0, le=1.0)
    resolved: bool
    invalid: bool
    invalid_reason: str | None = None
    f2p_passed: int
    f2p_total: int
    p2p_passed: int
    p2p_total: int
    tests: list[TestResult]
    collection_errors: list[str] = Field(default_factory=list)
    restored: list[str] = Field(default_factory=list)
    exit_code: int | None
    timed_out: bool = False
    sandbox: str
    duration_s: float
    pytest_duration_s: float
    output_tail: str = ""
    feedback: str = Field(default="", max_length=FEEDBACK_CHARS)

    @property
    def tampered(self) -> bool:
        """Invalid because the agent forfeited the run: its code forged or cut short the test
        run (`tamper:`), or the audit of its change flagged it (`suspect:`); see
        `records.forfeited`. Counts as a zero."""
        return self.invalid and forfeited(self.invalid_reason)
