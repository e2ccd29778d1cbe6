"""The fitness cache: a repeated job gets the stored record and costs nothing; another
repetition, workflow or task content is another key; failed runs are never stored."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from loopwright.evaluation import (
    CACHE_HIT_FILE,
    CachedExecutor,
    EvalJob,
    Evaluator,
    FitnessCache,
    JobResult,
    SerialExecutor,
    cache_key,
)
from loopwright.evaluation._cache import cacheable
from loopwright.models import ChatModel
from loopwright.records import load_record
from loopwright.tasks import load_task
from loopwright.workflow import AgentNode
from tests.evaluation.test_executor import evaluator, one_builder, tasks


class Counting:
    """Wraps a model factory and counts the models made (one per run actually executed)."""

    def __init__(self, inner: Evaluator) -> None:
        self.inner = inner.make_model
        self.made = 0

    def __call__(self, seed: int) -> ChatModel:
        self.made += 1
        return self.inner(seed)


def test_a_repeated_job_gets_the_stored_record_and_another_repetition_does_not(
    tmp_path: Path,
) -> None:
    ev = evaluator(tmp_path / "marks")
    counter = Counting(ev)
    ev = dataclasses.replace(ev, make_model=counter)
    (task,) = tasks(tmp_path, "calc")
    wf = one_builder()
    cache_file = tmp_path / "shared" / "runs.db"

    def run(run_name: str, rep: int) -> JobResult:
        root = tmp_path / run_name
        executor = CachedExecutor(SerialExecutor(), FitnessCache(cache_file))
        try:
            (result,) = executor.run(ev, [EvalJob(wf, task, rep, root, run_name)])
        finally:
            executor.close()
        return result

    first = run("run-a", 0)
    assert not first.cached and counter.made == 1 and first.record.score_end == 1.0

    again = run("run-b", 0)  # another run, same cache file: not paid for twice
    assert again.cached and counter.made == 1
    assert again.record == first.record  # the stored record, as it was
    assert load_record(again.job.run_dir) == first.record
    marker = json.loads((again.job.run_dir / CACHE_HIT_FILE).read_text())
    assert marker["source_run_id"] == "run-a" and marker["schema_version"] == 1
    assert (again.job.run_dir / "events.jsonl").is_file()  # the exhaust came along

    # the same run again (a resume after a kill that kept a finished run out of the
    # checkpoint): served from the cache, and its own run directory, exhaust and all, stays
    resumed = run("run-a", 0)
    assert resumed.cached and counter.made == 1
    assert (resumed.job.run_dir / "events.jsonl").is_file()
    assert (resumed.job.run_dir / CACHE_HIT_FILE).is_file()

    other = run("run-c", 1)  # repetitions stay independent
    assert not other.cached and counter.made == 2
    assert other.record.repetition == 1 and other.record.seed != first.record.seed
    assert len(FitnessCache(cache_file)) == 2


def test_the_key_names_workflow_task_content_model_seed_and_repetition(tmp_path: Path) -> None:
    ev = evaluator(tmp_path / "marks")
    (task,) = tasks(tmp_path, "calc")
    wf = one_builder()
    job = EvalJob(wf, task, 0, tmp_path / "run", "run")
    key = cache_key(ev, job)
    assert cache_key(ev, dataclasses.replace(job, root=tmp_path / "elsewhere")) == key
    builder = wf.nodes[0]
    assert isinstance(builder, AgentNode)
    changed = wf.model_copy(
        update={"nodes": (builder.model_copy(update={"prompt": builder.prompt + "x"}),)}
    )
    (task.root / "instruction.md").write_text("Add mul and div, and a docstring.\n")
    edited = load_task(task.root)
    others = [
        cache_key(ev, dataclasses.replace(job, repetition=1)),
        cache_key(ev, dataclasses.replace(job, workflow=changed)),
        cache_key(ev, dataclasses.replace(job, task=edited)),
        cache_key(ev, dataclasses.replace(job, directives="Check edge cases.")),
        cache_key(
            dataclasses.replace(ev, settings=ev.settings.model_copy(update={"seed": 1})), job
        ),
        cache_key(
            dataclasses.replace(ev, settings=ev.settings.model_copy(update={"model": "sim"})), job
        ),
    ]
    assert key not in others and len(set(others)) == len(others)


def test_runs_that_did_not_finish_or_have_no_valid_grade_are_not_stored(tmp_path: Path) -> None:
    ev = evaluator(tmp_path / "marks")
    (task,) = tasks(tmp_path, "calc")
    job = EvalJob(one_builder(), task, 0, tmp_path / "run", "run")
    (done,) = SerialExecutor().run(ev, [job])
    assert cacheable(done)
    assert not cacheable(dataclasses.replace(done, status="timeout"))
    assert not cacheable(dataclasses.replace(done, status="crashed"))
    assert not cacheable(dataclasses.replace(done, cached=True))
    no_grade = done.record.model_copy(update={"grade": None})
    assert not cacheable(dataclasses.replace(done, record=no_grade))
