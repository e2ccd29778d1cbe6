"""What the evolution engine writes, as pure conversions: a CycleRecord into the TaskResult an
individual keeps, individuals and generation summaries into run-index rows, and lineage and
reflection reports into progress-event fields."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Literal

from loopwright.evaluation import JobResult
from loopwright.records import CycleRecord
from loopwright.reflection import ReflectionReport
from loopwright.search._individual import Individual, TaskResult
from loopwright.search._progress import (
    ChildCreated,
    GenerationSummary,
    ReflectionFinished,
    ReflectionSkipped,
)
from loopwright.store import EvaluationRow, FailedAttemptRow, GenerationRow, IndividualRow

__all__ = [
    "Split",
    "child_created",
    "evaluation_rows",
    "generation_row",
    "individual_row",
    "mean_durations",
    "reflection_event",
    "relative_path",
    "task_result",
]

Split = Literal["train", "holdout"]
"""Which task set an evaluation belongs to."""


def mean_durations(individuals: Iterable[Individual]) -> dict[str, float]:
    """task id -> mean duration of its results so far (the executor's scheduling hint)."""
    sums: dict[str, list[float]] = {}
    for ind in individuals:
        for r in ind.results:
            sums.setdefault(r.task_id, []).append(r.duration_s)
    return {task: sum(d) / len(d) for task, d in sums.items()}


def relative_path(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)


def individual_row(run_id: str, ind: Individual) -> IndividualRow:
    return IndividualRow(
        run_id=run_id,
        individual_id=ind.id,
        generation=ind.generation,
        workflow_hash=ind.hash,
        workflow_name=ind.workflow.name,
        operator=ind.lineage.operator,
        parents=ind.lineage.parents,
        target=ind.lineage.target,
        reason=ind.lineage.reason,
        mode=ind.mode,
    )


def generation_row(run_id: str, s: GenerationSummary) -> GenerationRow:
    return GenerationRow(
        run_id=run_id, generation=s.generation, best_id=s.best_id, best_hash=s.best_hash,
        train_best=s.train_best, train_mean=s.train_mean, holdout_best=s.holdout_best,
        overfit_gap=s.overfit.gap, overfit_alarm=s.overfit.alarm, diversity=s.diversity,
        population_size=s.population_size, archive_coverage=s.archive_coverage,
        evaluations=s.evaluations, spent_usd=s.spent.usd, spent_wall_s=s.spent.wall_s,
        summary_json=s.model_dump_json(),
    )  # fmt: skip


def child_created(child: Individual) -> ChildCreated:
    lineage = child.lineage
    guidance = lineage.guidance
    return ChildCreated(
        generation=child.generation,
        individual_id=child.id,
        parents=list(lineage.parents),
        operator=lineage.operator,
        target=lineage.target,
        guidance=None if guidance is None else guidance.model_dump(mode="json"),
        reason=lineage.reason,
    )


def reflection_event(
    report: ReflectionReport, file_name: str, unreadable: int
) -> ReflectionSkipped | ReflectionFinished:
    if report.source == "empty":
        return ReflectionSkipped(generation=report.generation, reason=report.note, path=file_name)
    return ReflectionFinished(
        generation=report.generation,
        source=report.source,
        path=file_name,
        failure_patterns=len(report.failure_patterns),
        success_patterns=len(report.success_patterns),
        suggestions=len(report.mutation_suggestions),
        dropped=len(report.dropped),
        attempts=len(report.attempts),
        unreadable_records=unreadable,
    )


def task_result(record: CycleRecord, split: Split, rel: Path) -> TaskResult:
    return TaskResult(
        task_id=record.task_id,
        repetition=record.repetition,
        split=split,
        score=record.score_end,
        resolved=record.resolved,
        invalid=not record.scored,  # a tampered run is scored: a zero
        failure_category=str(record.failure_category),
        cost_usd=record.total_cost_usd,
        duration_s=record.duration_s,
        gate_loops=sum(record.gate_loops.values()),
        record_path=rel.as_posix(),
    )


def evaluation_rows(
    done: JobResult,
    run_dir: Path,
    *,
    individual_id: str,
    generation: int,
    split: Split,
    rel: Path,
) -> tuple[EvaluationRow, list[FailedAttemptRow]]:
    """The run-index rows of one finished evaluation: the evaluation, and its failed attempts
    (paths relative to `run_dir` when inside it)."""
    row = EvaluationRow.from_record(
        done.record,
        run_id=run_dir.name,
        individual_id=individual_id,
        generation=generation,
        split=split,
        record_path=rel.as_posix(),
        cached=done.cached,
        attempts=done.attempts,
        executor=done.executor,
    )
    failed = [
        FailedAttemptRow(f.attempt, f.status, f.message, f.duration_s,
                         None if f.kept_at is None else relative_path(f.kept_at, run_dir))
        for f in done.failures
    ]  # fmt: skip
    return row, failed
