"""One run of a workflow on one task: workspace, agents, grade, exhaust, CycleRecord.

The run directory is written as the run goes; a crash at any point leaves what was written
(events are flushed line by line). Nothing here raises for a failing agent: failures are data.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from loopwright import __version__
from loopwright.models import ChatModel, PriceTable
from loopwright.records import (
    EVENTS_FILE,
    CycleAnalyzer,
    CycleRecord,
    ErrorEvent,
    EventWriter,
    GradeEvent,
    RunEnd,
    RunStart,
    write_record,
)
from loopwright.runtime import EngineSettings, Runner
from loopwright.sandbox import Sandbox, create_workspace, remove_workspace
from loopwright.scoring import Grader, GradeResult, TaskTests
from loopwright.tasks import Task
from loopwright.workflow import Workflow, workflow_hash

__all__ = ["GRADE_FILE", "TaskRunSpec", "run_task"]

GRADE_FILE = "grade.json"
DIFF_FILE = "diff.patch"
NOTES_FILE = "notes.md"
INSTRUCTION_FILE = "instruction.md"


@dataclass(frozen=True)
class TaskRunSpec:
    """Everything one run needs. `run_dir` must not exist yet or be empty."""

    workflow: Workflow
    task: Task
    model: ChatModel
    sandbox: Sandbox
    prices: PriceTable
    run_dir: Path
    run_id: str
    seed: int
    repetition: int = 0
    run_timeout_s: float | None = None
    directives: str = ""
    engine: EngineSettings | None = None


def run_task(spec: TaskRunSpec) -> CycleRecord:
    """Run the workflow on the task in a fresh workspace, grade it, and return its CycleRecord.

    Writes events.jsonl, instruction.md, diff.patch, notes.md, grade.json and record.json into
    `spec.run_dir`. Deterministic for a deterministic model and seed.
    """
    spec.run_dir.mkdir(parents=True, exist_ok=True)
    instruction = spec.run_dir / INSTRUCTION_FILE
    shutil.copyfile(spec.task.root / INSTRUCTION_FILE, instruction)
    scratch = Path(tempfile.mkdtemp(prefix="lw-ws-"))
    started = time.monotonic()
    with EventWriter(spec.run_dir / EVENTS_FILE) as writer:
        writer.write(_run_start(spec, writer))
        workspace = create_workspace(spec.task.repo_dir, scratch)
        tests = TaskTests.capture(spec.task)  # before the agent can touch the task's files
        try:
            status, error = _run_agents(spec, workspace.path, instruction, writer)
            (spec.run_dir / DIFF_FILE).write_text(workspace.diff(), encoding="utf-8")
            grade = Grader(spec.sandbox).grade(workspace.path, spec.task, tests)
            _write_grade(spec.run_dir, grade, writer)
        finally:
            remove_workspace(workspace)
            shutil.rmtree(scratch, ignore_errors=True)
        writer.write(
            RunEnd(
                t=writer.now(), status=status, duration_s=time.monotonic() - started, error=error
            )
        )
    record = CycleAnalyzer(spec.run_dir).analyze(
        frozen_nodes=tuple(spec.workflow.frozen),
        mutable_node_ids=tuple(
            n.id for n in spec.workflow.nodes if n.id not in spec.workflow.frozen
        ),
    )
    write_record(record, spec.run_dir)
    return record


def _run_start(spec: TaskRunSpec, writer: EventWriter) -> RunStart:
    return RunStart(
        t=writer.now(),
        run_id=spec.run_id,
        task_id=spec.task.id,
        task_digest=spec.task.digest,
        workflow_name=spec.workflow.name,
        workflow_hash=workflow_hash(spec.workflow),
        model=spec.model.name,
        simulated=spec.model.simulated,
        seed=spec.seed,
        repetition=spec.repetition,
        loopwright_version=__version__,
        started_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )


def _run_agents(
    spec: TaskRunSpec, workspace: Path, instruction: Path, writer: EventWriter
) -> tuple[str, str | None]:
    runner = Runner(
        spec.model,
        spec.sandbox,
        cost_fn=spec.prices.cost_usd,
        price_table=spec.prices.version,
        engine=spec.engine,
    )
    try:
        outcome = runner.run(
            spec.workflow,
            spec.task,
            workspace,
            instruction,
            writer,
            run_timeout_s=spec.run_timeout_s,
            directives=spec.directives,
        )
    except Exception as exc:  # noqa: BLE001  the boundary: a runner bug is this run's error
        message = f"{type(exc).__name__}: {exc}"
        writer.write(ErrorEvent(t=writer.now(), where="runner", message=message))
        return "error", message
    if outcome.notes:
        (spec.run_dir / NOTES_FILE).write_text(outcome.notes, encoding="utf-8")
    return outcome.status, None


def _write_grade(run_dir: Path, grade: GradeResult, writer: EventWriter) -> None:
    (run_dir / GRADE_FILE).write_text(grade.model_dump_json(indent=2), encoding="utf-8")
    # The grade event carries the summary fields of the GradeResult, by name.
    shared = grade.model_dump(include=set(GradeEvent.model_fields) - {"t", "type"})
    writer.write(GradeEvent(t=writer.now(), **shared))
