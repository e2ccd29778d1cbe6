"""One run of a workflow on one task: workspace, agents, grade, exhaust, CycleRecord.

The run directory is written as the run goes; a crash at any point leaves what was written
(events are written through line by line). Nothing here raises for what happens in a run, the
agent's doing or loopwright's: failures are data, recorded in that run's record.
"""

from __future__ import annotations

import contextlib
import dataclasses
import shutil
import tempfile
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

from loopwright._caller import spoken
from loopwright._fs import atomic_write
from loopwright._version import __version__
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
    RunStatus,
    write_record,
)
from loopwright.runtime import EngineSettings, Registries, Runner
from loopwright.sandbox import (
    DockerSandbox,
    EnvironmentCache,
    Sandbox,
    Workspace,
    attach_task_container,
    create_workspace,
    remove_workspace,
    task_environment,
)
from loopwright.scoring import Grader, Grading, grader_for, mark_tampered
from loopwright.tasks import Task
from loopwright.workflow import Workflow, workflow_hash

__all__ = ["GRADE_FILE", "AgentScope", "TaskRunSpec", "run_task"]

GRADE_FILE = "grade.json"
DIFF_FILE = "diff.patch"
NOTES_FILE = "notes.md"
INSTRUCTION_FILE = "instruction.md"
BROKEN_EVENTS_FILE = "events.broken.jsonl"

_T = TypeVar("_T")

AgentScope = Callable[[], AbstractContextManager[object]]
"""Makes the context the agents run in (entered just before the Runner starts, left when it
returns): a client's own bookkeeping around the agent phase, e.g. the A/B harness's metering
relay and wall clock."""


@dataclass(frozen=True)
class TaskRunSpec:
    """Everything one run needs. `run_dir` must not exist yet or be empty.

    `grader` grades the finished workspace (None: `grader_for(task, sandbox)`, the task's hidden
    tests run by the runner its task.toml names, pytest by default); `registries` supply the Runner's tools and loops (None: the default ones);
    `agent_scope` wraps the agent phase (None: nothing)."""

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
    grader: Grader | None = None
    registries: Registries | None = None
    agent_scope: AgentScope | None = None
    environments: EnvironmentCache | None = None  # None: the default cache, for tasks with one

    def grading(self) -> Grading:
        """The grader's hold on the task's hidden material, taken now (before the agent). The
        default grader (the task's runner kind) runs in this spec's sandbox (placed in the task's environment by then);
        a given grader grades in its own."""
        grader = self.grader if self.grader is not None else grader_for(self.task, self.sandbox)
        return grader.capture(self.task)


def run_task(spec: TaskRunSpec) -> CycleRecord:
    """Run the workflow on the task in a fresh workspace, grade it, and return its CycleRecord.

    Writes events.jsonl, instruction.md, diff.patch, notes.md, grade.json and record.json into
    `spec.run_dir`, never through a symlink an agent put at one of those names (it is
    replaced). Deterministic for a deterministic model and seed.

    The agents are adversaries, so nothing that goes wrong in the run raises; it is recorded:
    a workspace that cannot be created ends the run with status `error`; a diff that cannot be
    taken leaves a `NO_DIFF` note in diff.patch and an error event, and the run is still
    graded, invalid with a `tamper:` reason when the agent removed or corrupted the
    workspace's git repository; any other failure (the exhaust made unreadable, say) sets the
    exhaust aside as events.broken.jsonl and records the error in a new one. Raises only when
    the run directory cannot be written at all.
    """
    started = time.monotonic()
    try:
        return _run(spec, started)
    except Exception as exc:  # noqa: BLE001  the boundary: a run that broke is a record
        return _broken_record(spec, f"{type(exc).__name__}: {exc}", time.monotonic() - started)


def _run(spec: TaskRunSpec, started: float) -> CycleRecord:
    spec.run_dir.mkdir(parents=True, exist_ok=True)
    instruction = spec.run_dir / INSTRUCTION_FILE
    atomic_write(instruction, (spec.task.root / INSTRUCTION_FILE).read_bytes())
    with EventWriter(spec.run_dir / EVENTS_FILE) as writer:
        writer.write(_run_start(spec, writer))
        status, error = _in_fresh_workspace(spec, instruction, writer)
        writer.write(
            RunEnd(
                t=writer.now(), status=status, duration_s=time.monotonic() - started, error=error
            )
        )
    return _analyze(spec)


def _in_fresh_workspace(
    spec: TaskRunSpec, instruction: Path, writer: EventWriter
) -> tuple[RunStatus, str | None]:
    """Create the workspace, run the agents in it, keep its diff and grade it; remove it."""
    scratch = Path(tempfile.mkdtemp(prefix="lw-ws-"))
    try:
        try:
            workspace = create_workspace(spec.task.repo_dir, scratch)
        except Exception as exc:  # noqa: BLE001  the boundary: no workspace is this run's error
            message = f"the workspace could not be created: {type(exc).__name__}: {exc}"
            writer.write(ErrorEvent(t=writer.now(), where="workspace", message=message))
            return "error", message
        try:
            placed = _in_environment(spec, workspace, writer)
            if placed is None:
                return "error", "the task's environment could not be built"
            grading = _guarded(writer, "grade", placed.grading)  # before the agent runs
            if grading is None:
                return "error", "the task's hidden material could not be read"
            status, error = _run_agents(placed, workspace.path, instruction, writer)
            _keep_and_grade(placed, workspace, grading, writer)
        finally:
            _guarded(writer, "cleanup", lambda: spec.sandbox.release(workspace.path))
            _guarded(writer, "cleanup", lambda: remove_workspace(workspace))
        return status, error
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _in_environment(
    spec: TaskRunSpec, workspace: Workspace, writer: EventWriter
) -> TaskRunSpec | None:
    """`spec` with its sandbox placed in the task's environment (built or reused from the
    cache; under the container sandbox, its derived image) for this workspace; `spec` itself for a task without one (or with a container image,
    which is the container sandbox's). None when the build failed: an error event says why."""
    table = spec.task.spec.environment
    if table is None:
        return spec
    if table.container:
        return _in_image(spec, workspace, writer)
    cache = spec.environments or EnvironmentCache()
    placed = _guarded(
        writer, "environment",
        lambda: spec.sandbox.within(
            task_environment(spec.task, spec.sandbox, cache), workspace.path
        ),
    )  # fmt: skip
    return None if placed is None else dataclasses.replace(spec, sandbox=placed)


def _in_image(spec: TaskRunSpec, workspace: Workspace, writer: EventWriter) -> TaskRunSpec | None:
    """`spec` with the workspace's container started from the task's image (its `image`, or its
    `dockerfile` built once per content; the container sandbox). None, with an error event
    saying what to do, when the sandbox runs no containers or the image cannot be built."""
    table = spec.task.spec.environment
    assert table is not None
    sandbox = spec.sandbox
    if isinstance(sandbox, DockerSandbox):
        started = _guarded(writer, "environment",
                           lambda: attach_task_container(sandbox, spec.task, workspace.path))  # fmt: skip
        return spec if started is not None else None
    source = table.image or f"the image of {table.dockerfile}"
    use = spoken("sandbox='docker'", "--sandbox docker")
    problem = f"the task runs in the container image {source}: use {use}"
    writer.write(ErrorEvent(t=writer.now(), where="environment", message=problem))
    return None


def _keep_and_grade(
    spec: TaskRunSpec, workspace: Workspace, grading: Grading, writer: EventWriter
) -> None:
    """Write diff.patch and grade.json. A diff that cannot be taken is an error event and a
    note in diff.patch; when the agent broke the repository, the grade is a tamper verdict."""
    evidence = workspace.evidence()
    if evidence.error is not None:
        writer.write(ErrorEvent(t=writer.now(), where="diff", message=evidence.error))
    _guarded(writer, "diff", lambda: atomic_write(spec.run_dir / DIFF_FILE, evidence.text))
    graded = _guarded(writer, "grade", lambda: grading.grade(workspace.path))
    if graded is None:
        return
    grade = graded if evidence.tamper is None else mark_tampered(graded, evidence.tamper)
    text = grade.model_dump_json(indent=2)
    _guarded(writer, "grade", lambda: atomic_write(spec.run_dir / GRADE_FILE, text))
    # The grade event carries the summary fields of the GradeResult, by name.
    shared = grade.model_dump(include=set(GradeEvent.model_fields) - {"t", "type"})
    writer.write(GradeEvent(t=writer.now(), **shared))


def _guarded(writer: EventWriter, where: str, step: Callable[[], _T]) -> _T | None:
    """`step()`, or None when it raised: then the exception is this run's error event."""
    try:
        return step()
    except Exception as exc:  # noqa: BLE001  the boundary: recorded as the run's error event
        writer.write(
            ErrorEvent(t=writer.now(), where=where, message=f"{type(exc).__name__}: {exc}")
        )
        return None


def _analyze(spec: TaskRunSpec) -> CycleRecord:
    workflow = spec.workflow
    record = CycleAnalyzer(spec.run_dir).analyze(
        frozen_nodes=tuple(workflow.frozen),
        mutable_node_ids=tuple(n.id for n in workflow.nodes if n.id not in workflow.frozen),
    )
    write_record(record, spec.run_dir)
    return record


def _broken_record(spec: TaskRunSpec, message: str, duration_s: float) -> CycleRecord:
    """The record of a run that raised outside every other handler: its exhaust (if any) is
    kept as events.broken.jsonl and a new one holds run_start, the error and run_end (status
    `error`); diff.patch and grade.json, when written, stand."""
    spec.run_dir.mkdir(parents=True, exist_ok=True)
    events = spec.run_dir / EVENTS_FILE
    with contextlib.suppress(FileNotFoundError):
        events.replace(spec.run_dir / BROKEN_EVENTS_FILE)  # a symlink moves as itself
    with EventWriter(events) as writer:
        writer.write(_run_start(spec, writer))
        writer.write(ErrorEvent(t=writer.now(), where="run", message=message))
        writer.write(
            RunEnd(t=writer.now(), status="error", duration_s=max(duration_s, 0.0), error=message)
        )
    return _analyze(spec)


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
) -> tuple[RunStatus, str | None]:
    runner = Runner(
        spec.model,
        spec.sandbox,
        cost_fn=spec.prices.cost_usd,
        price_table=spec.prices.version,
        registries=spec.registries,
        engine=spec.engine,
    )
    scope = spec.agent_scope() if spec.agent_scope is not None else contextlib.nullcontext()
    try:
        with scope:
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
        atomic_write(spec.run_dir / NOTES_FILE, outcome.notes)
    return outcome.status, None
