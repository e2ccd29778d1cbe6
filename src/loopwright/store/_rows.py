"""Typed rows of the run index: what is written and what queries return (docs/store.md)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from loopwright.records import CycleRecord

__all__ = [
    "EvaluationRow",
    "FailedAttemptRow",
    "FailureRow",
    "GenerationRow",
    "IndividualRow",
    "LedgerRow",
    "Spend",
    "StageRow",
    "TestOutcomeRow",
    "ledger_rows",
    "utc_now",
]


def utc_now() -> str:
    """The current wall-clock time, ISO 8601 UTC to the second (the index's timestamps)."""
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass(frozen=True, slots=True)
class StageRow:
    """A child's verdict after one stage of staged evaluation: its mean on the stage's runs
    (`tasks`, repetition 0) against its parent's on the same runs; `stopped` children went no
    further (docs/evolve.md, "Staged evaluation")."""

    run_id: str
    individual_id: str
    generation: int
    stage: int
    parent_id: str
    tasks: tuple[str, ...]
    child_mean: float | None
    parent_mean: float | None
    margin: float
    stopped: bool
    reason: str


@dataclass(frozen=True, slots=True)
class IndividualRow:
    """One candidate of an evolutionary run: identity, workflow and lineage."""

    run_id: str
    individual_id: str
    generation: int
    workflow_hash: str
    workflow_name: str
    operator: str
    parents: tuple[str, ...]
    target: str | None
    reason: str
    mode: str


@dataclass(frozen=True, slots=True)
class EvaluationRow:
    """One evaluation (a candidate on a task, one repetition) and its outcome.

    Identity: (run_id, individual_id, split, task_id, repetition); writing a row with the same
    identity replaces the earlier one. `individual_id` is the workflow name for runs that have
    no individuals (`loopwright run`, calibration). `cached` means the record came from the
    fitness cache (nothing was paid for it); `attempts` counts executor attempts (2 after a
    crashed worker was retried). `evaluation_id` is 0 until the row is written.
    """

    run_id: str
    individual_id: str
    generation: int | None
    split: str
    task_id: str
    task_digest: str
    repetition: int
    workflow_hash: str
    model: str
    simulated: bool
    seed: int
    score: float
    resolved: bool
    invalid: bool
    failure_category: str
    run_status: str
    input_tokens: int
    output_tokens: int
    cached_tokens: int
    cost_usd: float | None
    duration_s: float
    record_path: str
    cached: bool
    attempts: int
    executor: str
    finished_at: str
    evaluation_id: int = 0

    @classmethod
    def from_record(
        cls,
        record: CycleRecord,
        *,
        run_id: str,
        individual_id: str,
        generation: int | None,
        split: str,
        record_path: str,
        cached: bool = False,
        attempts: int = 1,
        executor: str = "serial",
    ) -> EvaluationRow:
        """The row of `record` as evaluated in `run_id` (its own run_id may name the run that
        produced it first, when it came from the cache)."""
        return cls(
            run_id=run_id,
            individual_id=individual_id,
            generation=generation,
            split=split,
            task_id=record.task_id,
            task_digest=record.task_digest,
            repetition=record.repetition,
            workflow_hash=record.workflow_hash,
            model=record.model,
            simulated=record.simulated,
            seed=record.seed,
            score=record.score_end,
            resolved=record.resolved,
            invalid=not record.scored,  # a tampered run is scored: a zero
            failure_category=str(record.failure_category),
            run_status=record.run_status,
            input_tokens=record.input_tokens,
            output_tokens=record.output_tokens,
            cached_tokens=record.cached_tokens,
            cost_usd=record.total_cost_usd,
            duration_s=record.duration_s,
            record_path=record_path,
            cached=cached,
            attempts=attempts,
            executor=executor,
            finished_at=utc_now(),
        )


@dataclass(frozen=True, slots=True)
class TestOutcomeRow:
    """One listed test of an evaluation's grade."""

    __test__ = False  # not a pytest test class

    evaluation_id: int
    test_id: str
    outcome: str
    fail_to_pass: bool
    passed: bool


@dataclass(frozen=True, slots=True)
class FailedAttemptRow:
    """An executor attempt of an evaluation that did not finish: a crashed worker, a job
    cancelled at its timeout, or an error outside the run. `kept_at` is where the attempt's
    partial run directory was kept (relative to the run), when it was."""

    attempt: int
    status: str
    message: str
    duration_s: float
    kept_at: str | None


@dataclass(frozen=True, slots=True)
class FailureRow:
    """A failed attempt with the evaluation it belongs to (what `RunIndex.failures` returns)."""

    individual_id: str
    split: str
    task_id: str
    repetition: int
    attempt: FailedAttemptRow


@dataclass(frozen=True, slots=True)
class LedgerRow:
    """Tokens and cost of one agent step of an evaluation. `paid` is False for a record served
    by the fitness cache: its cost is what it cost when it ran, not money spent again."""

    evaluation_id: int
    node_id: str
    role: str
    attempt: int
    model: str
    input_tokens: int
    output_tokens: int
    cached_tokens: int
    cost_usd: float | None
    paid: bool


@dataclass(frozen=True, slots=True)
class GenerationRow:
    """One generation's summary. `summary_json` is the whole GenerationSummary as logged."""

    run_id: str
    generation: int
    best_id: str
    best_hash: str
    train_best: float | None
    train_mean: float | None
    holdout_best: float | None
    overfit_gap: float | None
    overfit_alarm: bool
    diversity: int
    population_size: int
    archive_coverage: float
    evaluations: int
    spent_usd: float
    spent_wall_s: float
    summary_json: str


@dataclass(frozen=True, slots=True)
class Spend:
    """Money and work of a run, from the ledger. `paid_usd` sums priced steps actually run;
    `saved_usd` what cache hits would have cost; `unpriced_steps` counts steps whose model had
    no price (their cost is unknown, not zero)."""

    evaluations: int
    cached: int
    failed_attempts: int
    paid_usd: float
    saved_usd: float
    unpriced_steps: int


def ledger_rows(record: CycleRecord, evaluation_id: int, *, paid: bool) -> list[LedgerRow]:
    """One row per agent step, plus one row (`node_id` "-") for tokens the record counts
    outside agent steps (an LLM judge gate), so the rows sum to the record's totals."""
    rows = [
        LedgerRow(
            evaluation_id=evaluation_id,
            node_id=step.node_id,
            role=step.role,
            attempt=step.attempt,
            model=record.model,
            input_tokens=step.input_tokens,
            output_tokens=step.output_tokens,
            cached_tokens=step.cached_tokens,
            cost_usd=step.cost_usd,
            paid=paid,
        )
        for step in record.steps
    ]
    tokens_in = record.input_tokens - sum(r.input_tokens for r in rows)
    tokens_out = record.output_tokens - sum(r.output_tokens for r in rows)
    tokens_cached = record.cached_tokens - sum(r.cached_tokens for r in rows)
    if tokens_in > 0 or tokens_out > 0 or tokens_cached > 0:
        known = [r.cost_usd for r in rows]
        rest_cost = (
            None
            if record.total_cost_usd is None or any(c is None for c in known)
            else max(record.total_cost_usd - sum(c for c in known if c is not None), 0.0)
        )
        rows.append(
            LedgerRow(
                evaluation_id=evaluation_id,
                node_id="-",
                role="-",
                attempt=1,
                model=record.model,
                input_tokens=max(tokens_in, 0),
                output_tokens=max(tokens_out, 0),
                cached_tokens=max(tokens_cached, 0),
                cost_usd=rest_cost,
                paid=paid,
            )
        )
    return rows
