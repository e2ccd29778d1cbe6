"""The Executor interface: evaluation jobs in, finished CycleRecords out, as they complete.

A job is one candidate workflow on one task, one repetition, under its own run directory.
An executor runs jobs with `Evaluator.run_job` (one Runner, one Grader), at most `workers` at
a time, and yields a `JobResult` for each as soon as it is done, in completion order (each
carries the job's index, so callers restore their own order). A job's failure (a crashed
worker, a timeout) is data: the result holds a record of it, never an exception.

Implementations: `SerialExecutor` (in this process, one at a time: the reference), the local
process pool (`LocalExecutor`, the default) and Ray (`RayExecutor`, optional extra). Nothing
above this interface knows which one runs the jobs.
"""

from __future__ import annotations

import os
import time
from collections.abc import Generator, Sequence
from contextlib import closing
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

from loopwright._fs import atomic_write, open_append
from loopwright._version import __version__
from loopwright.records import (
    EVENTS_FILE,
    CycleAnalyzer,
    CycleRecord,
    ErrorEvent,
    RunEnd,
    RunStart,
    read_events,
    write_record,
)
from loopwright.tasks import Task
from loopwright.workflow import Workflow, workflow_hash

if TYPE_CHECKING:
    from loopwright.evaluation._evaluator import Evaluator

__all__ = [
    "EvalJob",
    "Executor",
    "FailedAttempt",
    "JobResult",
    "JobStatus",
    "JobStream",
    "SerialExecutor",
    "failure_record",
    "in_job_order",
    "job_timeout_s",
    "schedule",
]

JobStatus = Literal["ok", "timeout", "crashed", "error"]
"""How a job's last attempt ended: `ok` (the run finished, whatever its score), `timeout`
(cancelled at the job's timeout), `crashed` (the worker died, e.g. SIGKILL or a lost node),
`error` (an exception outside the run's own error handling)."""

TIMEOUT_MARGIN_S = 60.0
"""Added to a task's agent and grade timeouts for the default per-job timeout: set-up,
workspace copy and record writing take time too."""


@dataclass(frozen=True)
class EvalJob:
    """One evaluation: `workflow` on `task`, repetition `repetition`, written under `root`
    (the run directory is `root/<task id>/rep_<k>`). `directives` reach every agent through
    `{rules}`. `expected_s` is the expected duration when known (scheduling hint only)."""

    workflow: Workflow
    task: Task
    repetition: int
    root: Path
    run_id: str
    directives: str = ""
    expected_s: float | None = None

    @property
    def run_dir(self) -> Path:
        return self.root / self.task.id / f"rep_{self.repetition}"

    def describe(self) -> str:
        return f"{self.workflow.name} on {self.task.id} rep {self.repetition}"


@dataclass(frozen=True)
class FailedAttempt:
    """An attempt that did not finish. `kept_at` is where its partial run directory was moved
    (a crashed attempt that was retried), or None when the final record is this attempt's."""

    attempt: int
    status: JobStatus
    message: str
    duration_s: float
    kept_at: Path | None = None


@dataclass(frozen=True)
class JobResult:
    """A finished job. `index` is the job's position in the sequence given to `run`.

    `record` is the run's CycleRecord; for a job that did not finish it is built from what the
    run wrote plus the executor's error (run_status `timeout` or `error`, no grade, so it is
    invalid and never averaged in as a zero). `failures` lists the attempts that did not finish
    (a crashed attempt followed by a successful retry leaves one). `cached` is True when the
    record came from the fitness cache. `wall_s` is the time from start to finish of the last
    attempt as the executor saw it.
    """

    index: int
    job: EvalJob
    record: CycleRecord
    status: JobStatus
    attempts: int
    failures: tuple[FailedAttempt, ...] = ()
    cached: bool = False
    wall_s: float = 0.0
    executor: str = ""


JobStream = Generator["JobResult", None, None]
"""What `Executor.run` returns: results in completion order; `close()` cancels the rest."""


@runtime_checkable
class Executor(Protocol):
    """Runs evaluation jobs; one verb, `run`.

    `run(evaluator, jobs)` returns an iterator of JobResults in completion order, one per job.
    At most `workers` jobs run at once; each gets its own workspace, run directory and model
    instance (no mutable state is shared between jobs). Closing the iterator early (or an
    exception in the consumer) cancels every job not yet finished: running ones are killed.
    A job running past its timeout is cancelled and yields a `timeout` result. `close()`
    releases what the executor holds (a Ray connection); the local pool holds nothing.
    """

    name: str

    @property
    def workers(self) -> int:
        """How many jobs may run at once."""
        ...

    def run(self, evaluator: Evaluator, jobs: Sequence[EvalJob]) -> JobStream:
        """Start the jobs; yield each one's result as it finishes (see the class doc)."""
        ...

    def close(self) -> None:
        """Release what the executor holds (nothing for the local pool)."""
        ...


def in_job_order(results: JobStream) -> JobStream:
    """`results` re-ordered by job index: each is held back until every earlier job's result
    has been yielded. For callers whose decisions must not depend on completion order (a
    dollar budget checked before each job). Closing it closes `results`."""
    held: dict[int, JobResult] = {}
    expected = 0
    with closing(results):
        for result in results:
            held[result.index] = result
            while expected in held:
                yield held.pop(expected)
                expected += 1


def schedule(jobs: Sequence[EvalJob]) -> list[int]:
    """The order to start jobs in: longest expected first. Jobs without an expected duration go
    first in their given order (an unknown job may be the longest); ties keep the given order.
    Ordering changes only when results arrive, never what they are."""
    unknown = [i for i, job in enumerate(jobs) if job.expected_s is None]
    known = [i for i, job in enumerate(jobs) if job.expected_s is not None]
    known.sort(key=lambda i: -(jobs[i].expected_s or 0.0))
    return unknown + known


def job_timeout_s(evaluator: Evaluator, job: EvalJob, configured: float | None) -> float:
    """`configured` when set, else the task's agent timeout (or the settings' run timeout)
    plus its grade timeout plus a margin for set-up and records."""
    if configured is not None:
        return configured
    agent = evaluator.settings.run_timeout_s or job.task.spec.timeouts.agent
    return agent + job.task.spec.timeouts.grade + TIMEOUT_MARGIN_S


def failure_record(
    evaluator: Evaluator,
    job: EvalJob,
    status: JobStatus,
    message: str,
    duration_s: float,
    run_dir: Path | None = None,
) -> CycleRecord:
    """The CycleRecord of a job that did not finish, built from what its run directory
    (`run_dir`, default the job's) holds.

    A truncated last events line is dropped; a run_start is written when the run never got
    that far; then an `error` event (where="executor") and a run_end with status `timeout`
    (for a timeout) or `error` close the exhaust, and the directory is analysed as usual.
    Writes record.json. Deterministic given the files.
    """
    run_dir = run_dir or job.run_dir
    run_dir.mkdir(parents=True, exist_ok=True)
    events = run_dir / EVENTS_FILE
    last_t = _repair_events(events)
    lines = []
    if last_t is None:
        lines.append(_run_start(evaluator, job).model_dump_json())
        last_t = 0.0
    end_status: Literal["timeout", "error"] = "timeout" if status == "timeout" else "error"
    lines.append(ErrorEvent(t=last_t, where="executor", message=message).model_dump_json())
    lines.append(
        RunEnd(
            t=last_t, status=end_status, duration_s=max(duration_s, 0.0), error=message
        ).model_dump_json()
    )
    fd = open_append(events)  # never through a symlink the agent left there
    try:
        os.write(fd, "".join(line + "\n" for line in lines).encode("utf-8"))
    finally:
        os.close(fd)
    record = CycleAnalyzer(run_dir).analyze(
        frozen_nodes=tuple(job.workflow.frozen),
        mutable_node_ids=tuple(n.id for n in job.workflow.nodes if n.id not in job.workflow.frozen),
    )
    write_record(record, run_dir)
    return record


def _repair_events(path: Path) -> float | None:
    """Drop a truncated last line; the last event's time, or None without a run_start."""
    if not path.is_file():
        return None
    if path.is_symlink():  # not loopwright's: the run's own exhaust is gone
        path.unlink()
        return None
    text = path.read_text(encoding="utf-8")
    if text and not text.endswith("\n"):
        atomic_write(path, text[: text.rfind("\n") + 1])
    events = read_events(path)
    if not events or not isinstance(events[0], RunStart):
        path.unlink()
        return None
    return max(e.t for e in events)


def _run_start(evaluator: Evaluator, job: EvalJob) -> RunStart:
    seed = evaluator.job_seed(job)
    model = evaluator.make_model(seed)
    return RunStart(
        t=0.0,
        run_id=job.run_id,
        task_id=job.task.id,
        task_digest=job.task.digest,
        workflow_name=job.workflow.name,
        workflow_hash=workflow_hash(job.workflow),
        model=model.name,
        simulated=model.simulated,
        seed=seed,
        repetition=job.repetition,
        loopwright_version=__version__,
        started_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )


class SerialExecutor:
    """Runs jobs one after another in this process: the reference executor (and a debugger's
    friend). It cannot enforce a timeout or survive a crash; the run's own timeout still
    applies. Results come in the given order."""

    name = "serial"
    workers = 1

    def run(self, evaluator: Evaluator, jobs: Sequence[EvalJob]) -> JobStream:
        for index, job in enumerate(jobs):
            started = time.monotonic()
            record = evaluator.run_job(job)
            yield JobResult(
                index=index,
                job=job,
                record=record,
                status="ok",
                attempts=1,
                wall_s=time.monotonic() - started,
                executor=self.name,
            )

    def close(self) -> None:
        return None
