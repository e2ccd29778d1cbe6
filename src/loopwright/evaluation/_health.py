"""Failing fast on a model that never answers.

A run whose model rejects every call (a bad key, a model the provider does not serve, a server
that is down) would otherwise record every evaluation as `agent_error` at score 0 and still
name a "winner". `ModelHealth` watches the records of an Evaluator as they finish: once a model
call has succeeded it is silent for good; until then, `threshold` runs in which calls were made
and every one failed stop the run with a ModelUnavailableError carrying the first error
(redacted), and so does the end of an evaluation in which no call succeeded. Simulated models
(`sim`, `scripted:`) are never watched: their failures are scripted on purpose.
"""

from __future__ import annotations

from dataclasses import dataclass

from loopwright.errors import ModelUnavailableError
from loopwright.models import redact
from loopwright.records import CycleRecord

__all__ = ["DEAD_MODEL_THRESHOLD", "ModelHealth", "model_never_answered"]

DEAD_MODEL_THRESHOLD = 3
"""Runs in a row whose every model call failed, with none succeeded before, that stop a run."""


def model_never_answered(record: CycleRecord) -> bool:
    """The run called its model and every call failed: the record says nothing about the
    workflow (it is never cached, and it counts towards ModelHealth's threshold)."""
    calls = sum(step.turns for step in record.steps)
    return calls > 0 and sum(step.model_errors for step in record.steps) == calls


@dataclass
class ModelHealth:
    """Whether the evaluator's model has answered yet (see the module docstring). One per
    Evaluator, in the process that collects the records; deterministic given the records."""

    threshold: int = DEAD_MODEL_THRESHOLD
    answered: bool = False
    failed_runs: int = 0
    first_error: str | None = None
    model: str = ""

    def see(self, record: CycleRecord) -> None:
        """Count `record`; ModelUnavailableError when `threshold` dead runs are reached."""
        if self.answered or record.simulated:
            return
        calls = sum(step.turns for step in record.steps)
        if calls == 0:
            return  # no model call (a function-only workflow, a run cut short): no evidence
        if not model_never_answered(record):
            self.answered = True
            return
        self.failed_runs += 1
        self.model = record.model
        self.first_error = self.first_error or _first_error(record)
        if self.failed_runs >= self.threshold:
            raise self.error()

    def check_finished(self) -> None:
        """At the end of an evaluation: ModelUnavailableError when runs were seen that called
        the model and no call ever succeeded (a run smaller than the threshold)."""
        if not self.answered and self.failed_runs > 0:
            raise self.error()

    def error(self) -> ModelUnavailableError:
        runs = "run" if self.failed_runs == 1 else "runs"
        return ModelUnavailableError(
            f"no call to the model {self.model} succeeded in the first {self.failed_runs} "
            f"{runs}, so the run stopped instead of recording failures as scores. First error: "
            f"{self.first_error or '(none recorded)'}"
        )


def _first_error(record: CycleRecord) -> str:
    for step in record.steps:
        if step.model_errors and step.error:
            return redact(step.error)[:600]
    return redact(record.run_error or (record.errors[0] if record.errors else ""))[:600]
