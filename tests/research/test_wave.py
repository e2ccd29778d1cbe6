"""The built-in wave executor honours the allocation: per-job worker counts and the cap."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any, ClassVar

import pytest

from loopwright.research import ExecutorWave, ThreadWave, WaveJob, WaveSubmission, allocate_workers
from loopwright.workflow import builtin_workflow


class CountingEvaluator:
    """Stands in for Evaluator.run_one: sleeps a little and records concurrency per job."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.now: dict[str, int] = {}
        self.peak: dict[str, int] = {}
        self.total_peak = 0

    def run_one(self, workflow: Any, task: Any, repetition: int, root: Path, *, run_id: str) -> Any:
        key = f"{root.name}/{repetition}"
        with self.lock:
            self.now[key] = self.now.get(key, 0) + 1
            self.peak[key] = max(self.peak.get(key, 0), self.now[key])
            self.total_peak = max(self.total_peak, sum(self.now.values()))
        time.sleep(0.02)
        with self.lock:
            self.now[key] -= 1
        return SimpleNamespace(task_id=task.id, repetition=repetition, score_end=1.0)


def jobs(sizes: dict[str, int]) -> list[WaveJob]:
    wf = builtin_workflow("builder-only")
    return [
        WaveJob(
            f"{name}/pass_0",
            name,
            0,
            wf,
            tuple(SimpleNamespace(id=f"t{i}") for i in range(n)),
            Path(name),
        )  # type: ignore[misc]
        for name, n in sizes.items()
    ]


def test_each_job_gets_its_allocated_workers_and_the_cap_holds() -> None:
    wave = jobs({"a": 8, "b": 3, "c": 2})
    allocation = allocate_workers([WaveSubmission(j.key, len(j.tasks), 8) for j in wave], 6)
    evaluator = CountingEvaluator()
    results = ThreadWave(evaluator, "t").run(wave, allocation)  # type: ignore[arg-type]
    assert [len(r.records) for r in results] == [8, 3, 2]
    assert [r.records[0].task_id for r in results] == ["t0", "t0", "t0"]  # task order kept
    for job in wave:
        assert evaluator.peak[f"{job.owner}/0"] <= allocation.workers[job.key]
    assert evaluator.total_peak <= 6 and allocation.workers["a/pass_0"] >= 3


def test_a_queued_wave_never_exceeds_the_cap_and_errors_propagate() -> None:
    wave = jobs({"a": 2, "b": 2, "c": 2})
    allocation = allocate_workers([WaveSubmission(j.key, 2, 1) for j in wave], 2)
    evaluator = CountingEvaluator()
    ThreadWave(evaluator, "t").run(wave, allocation)  # type: ignore[arg-type]
    assert allocation.queued and evaluator.total_peak <= 2

    def boom(job: WaveJob, record: Any) -> None:
        raise RuntimeError("listener crashed")

    with pytest.raises(RuntimeError, match="listener crashed"):
        ThreadWave(CountingEvaluator(), "t").run(wave, allocation, boom)  # type: ignore[arg-type]


class SizedSerial:
    """An evaluation Executor that records the worker count it was built with."""

    made: ClassVar[list[int]] = []

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self.name = "sized"
        SizedSerial.made.append(workers)

    def run(self, evaluator: Any, jobs: Any) -> Any:
        from loopwright.evaluation import SerialExecutor

        return SerialExecutor().run(evaluator, jobs)

    def close(self) -> None:
        return None


def test_the_default_wave_builds_one_executor_per_submission_with_its_allocation() -> None:
    wave = jobs({"a": 5, "b": 2})
    allocation = allocate_workers([WaveSubmission(j.key, len(j.tasks), 8) for j in wave], 4)
    evaluator = CountingEvaluator()
    evaluator.run_job = lambda job: evaluator.run_one(  # type: ignore[attr-defined]
        job.workflow, job.task, job.repetition, job.root, run_id=job.run_id
    )
    SizedSerial.made.clear()
    results = ExecutorWave(evaluator, "t", make=SizedSerial).run(wave, allocation)  # type: ignore[arg-type]
    assert sorted(SizedSerial.made[1:]) == sorted(
        allocation.workers.values()
    )  # [0]: the name probe
    assert [len(r.records) for r in results] == [5, 2]
    assert [r.workers for r in results] == [allocation.workers[j.key] for j in wave]
