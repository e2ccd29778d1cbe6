"""Running one parallel wave of (spec, pass) submissions with allocated worker counts.

`WaveExecutor` is the seam: given the jobs and the `Allocation` (worker count per job, and the
method-wide cap), run every job's episodes and return their records. Two implementations:

- `ExecutorWave` (the default): the evaluation package's `Executor` (the local process pool,
  or any other executor factory). Each submission gets an executor of its own built with the
  submission's allocated worker count, and all submissions run at once (one thread per
  submission consumes its executor's result stream), so the allocation is what the pool uses.
  In a queued allocation (more submissions than the cap) at most `cap` submissions run at a
  time. Runs get the pool's isolation, per-job timeouts and crash retries.
- `ThreadWave`: worker threads in this process over `Evaluator.run_one`, as many per job as
  allocated, with a semaphore holding all runs to `cap`. No process isolation.

A run that fails is a record, never an exception; an exception from the evaluator or from
`on_record` stops the wave (running jobs are cancelled) and is re-raised.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from contextlib import closing, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from loopwright._caller import carried
from loopwright.evaluation import EvalJob, Evaluator, Executor, LocalExecutor
from loopwright.records import CycleRecord
from loopwright.research._allocate import Allocation
from loopwright.tasks import Task
from loopwright.workflow import Workflow

__all__ = ["ExecutorWave", "OnRecord", "ThreadWave", "WaveExecutor", "WaveJob", "WaveResult"]


@dataclass(frozen=True, slots=True)
class WaveJob:
    """One submission: `workflow` on every task at one repetition, written under `root`.

    `owner` is the spec id (or "baseline" for the workspace's own measurement)."""

    key: str
    owner: str
    repetition: int
    workflow: Workflow
    tasks: tuple[Task, ...]
    root: Path


@dataclass(frozen=True, slots=True)
class WaveResult:
    """A job's records in task order, the workers it had, and its wall time."""

    job: WaveJob
    records: tuple[CycleRecord, ...]
    workers: int
    wall_s: float


OnRecord = Callable[[WaveJob, CycleRecord], None]


class WaveExecutor(Protocol):
    """Runs a wave. `allocation.workers[job.key]` runs of a job may go at once, and at most
    `allocation.cap` in all. Returns one WaveResult per job, in the jobs' order."""

    name: str

    def run(
        self, jobs: Sequence[WaveJob], allocation: Allocation, on_record: OnRecord | None = None
    ) -> list[WaveResult]: ...


class ThreadWave:
    """The built-in WaveExecutor: worker threads per job over one Evaluator (see the module)."""

    name = "threads"

    def __init__(self, evaluator: Evaluator, run_id: str) -> None:
        self.evaluator = evaluator
        self.run_id = run_id

    def run(
        self, jobs: Sequence[WaveJob], allocation: Allocation, on_record: OnRecord | None = None
    ) -> list[WaveResult]:
        gate = threading.BoundedSemaphore(allocation.cap)
        lock = threading.Lock()
        pending = {job.key: list(enumerate(job.tasks)) for job in jobs}
        slots: dict[str, list[CycleRecord | None]] = {j.key: [None] * len(j.tasks) for j in jobs}
        spans: dict[str, list[float]] = {j.key: [] for j in jobs}
        failures: list[BaseException] = []

        def lane(job: WaveJob) -> None:
            while not failures:
                with lock:
                    if not pending[job.key]:
                        return
                    index, task = pending[job.key].pop(0)
                try:
                    with gate:
                        started = time.monotonic()
                        record = self.evaluator.run_one(
                            job.workflow, task, job.repetition, job.root, run_id=self.run_id
                        )
                        ended = time.monotonic()
                    with lock:
                        slots[job.key][index] = record
                        spans[job.key] += [started, ended]
                        if on_record is not None:
                            on_record(job, record)
                except BaseException as exc:  # noqa: BLE001  re-raised in the caller's thread
                    failures.append(exc)
                    return

        lanes = [job for job in jobs for _ in range(allocation.workers[job.key])]
        _run_threads(lane, lanes, failures)
        walls = {k: (max(v) - min(v)) if v else 0.0 for k, v in spans.items()}
        return _results(jobs, slots, allocation, walls)


class ExecutorWave:
    """The default WaveExecutor: one evaluation `Executor` per submission, sized by the
    allocation (see the module). `make(workers)` builds an executor; default the local pool."""

    def __init__(
        self,
        evaluator: Evaluator,
        run_id: str,
        make: Callable[[int], Executor] = LocalExecutor,
    ) -> None:
        self.evaluator = evaluator
        self.run_id = run_id
        self.make = make
        self.name = f"{make(1).name}-executor"

    def run(
        self, jobs: Sequence[WaveJob], allocation: Allocation, on_record: OnRecord | None = None
    ) -> list[WaveResult]:
        gate = threading.BoundedSemaphore(allocation.cap)
        lock = threading.Lock()
        slots: dict[str, list[CycleRecord | None]] = {j.key: [None] * len(j.tasks) for j in jobs}
        walls: dict[str, float] = {}
        failures: list[BaseException] = []

        def submission(job: WaveJob) -> None:
            try:
                with gate if allocation.queued else nullcontext():
                    started = time.monotonic()
                    self._stream(job, allocation.workers[job.key], slots, lock, failures, on_record)
                    walls[job.key] = time.monotonic() - started
            except BaseException as exc:  # noqa: BLE001  re-raised in the caller's thread
                failures.append(exc)

        _run_threads(submission, list(jobs), failures)
        return _results(jobs, slots, allocation, walls)

    def _stream(
        self,
        job: WaveJob,
        workers: int,
        slots: dict[str, list[CycleRecord | None]],
        lock: threading.Lock,
        failures: list[BaseException],
        on_record: OnRecord | None,
    ) -> None:
        executor = self.make(workers)
        evals = [
            EvalJob(job.workflow, task, job.repetition, job.root, self.run_id) for task in job.tasks
        ]
        try:
            with closing(executor.run(self.evaluator, evals)) as results:
                for result in results:
                    with lock:
                        slots[job.key][result.index] = result.record
                        if on_record is not None:
                            on_record(job, result.record)
                    if failures:
                        return  # another submission failed: closing cancels what still runs
        finally:
            executor.close()


def _run_threads(
    target: Callable[[WaveJob], None], jobs: list[WaveJob], failures: list[BaseException]
) -> None:
    """One thread per entry of `jobs` running `target(job)`; joined; the first failure a
    thread recorded in `failures` is raised here, in the caller's thread."""
    threads = [
        threading.Thread(target=carried(target), args=(job,), name=f"wave-{job.key}", daemon=True)
        for job in jobs
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise failures[0]


def _results(
    jobs: Sequence[WaveJob],
    slots: dict[str, list[CycleRecord | None]],
    allocation: Allocation,
    walls: dict[str, float],
) -> list[WaveResult]:
    return [
        WaveResult(
            job,
            tuple(r for r in slots[job.key] if r is not None),
            allocation.workers[job.key],
            walls.get(job.key, 0.0),
        )
        for job in jobs
    ]
