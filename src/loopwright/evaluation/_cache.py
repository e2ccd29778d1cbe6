"""The fitness cache: an evaluation already done is not paid for twice.

The key is a sha256 over (workflow canonical hash, task id, task digest, model spec, run
settings, repetition): two jobs with the same key run the same workflow on the same task
content with the same model and the same random draws, so they would produce the same record.
Repetitions stay independent (the key includes the repetition and the run seed). The cache
lives in a run index file (SQLite, WAL) and can be shared between runs by path.

`CachedExecutor` wraps any executor: hits are answered at once (the source run directory is
copied into the job's when it still exists, else the stored record alone is written, with a
`cache_hit.json` marker either way) and misses go to the inner executor; finished, validly
graded records are stored as they arrive.

Work in flight is claimed: before a miss is computed its key is claimed in the same file (a
lease of `lease_s` seconds, renewed by a heartbeat thread while the run lives). A job whose key
another live run has claimed is not computed again: it waits, polling every `poll_s`
seconds, and is answered from the cache when that run stores the result; if that run dies (its
lease expires, or at once when it was a process on this host) or finishes it without a
cacheable result, this run claims and computes it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import shutil
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from loopwright._fs import atomic_write
from loopwright._version import __version__
from loopwright.evaluation._executor import EvalJob, Executor, JobResult, JobStream
from loopwright.evaluation._health import model_never_answered
from loopwright.records import CycleRecord, record_from_json, write_record
from loopwright.scoring import FUNCTION_GRADER, evaluator_key
from loopwright.store import CacheEntry, CacheTable, ClaimState, claim_owner, utc_now
from loopwright.workflow import workflow_hash

if TYPE_CHECKING:
    from loopwright.evaluation._evaluator import Evaluator

__all__ = [
    "CACHE_HIT_FILE",
    "CACHE_KEY_VERSION",
    "CLAIM_LEASE_S",
    "CLAIM_POLL_S",
    "CachedExecutor",
    "FitnessCache",
    "cache_key",
]

CACHE_KEY_VERSION = 2
FEEDBACK_SCHEMA_VERSION = 3
"""The CycleRecord schema from which a record keeps the evaluator's feedback (`_outdated`)."""
CACHE_HIT_FILE = "cache_hit.json"
CLAIM_LEASE_S = 60.0
"""How long a claim holds without renewal; the owner renews it every third of that."""
CLAIM_POLL_S = 0.5
"""How often a run waiting for another run's evaluation looks for its result."""


def _settings(evaluator: Evaluator, job: EvalJob) -> dict[str, object]:
    """Everything besides workflow, task, model and repetition that decides a run's record. The
    grader kind is named only when it is not the default (pytest), and the models config and
    api_base only when set, so existing keys still hold."""
    settings: dict[str, object] = {
        "key_version": CACHE_KEY_VERSION,
        "loopwright": __version__,
        "seed": evaluator.job_seed(job),
        "run_timeout_s": evaluator.settings.run_timeout_s,
        "sandbox": evaluator.sandbox.name,
        "prices": evaluator.prices.version,
        "directives_sha256": hashlib.sha256(job.directives.encode()).hexdigest(),
        "engine": evaluator.settings.engine.model_dump(mode="json"),
    }
    if evaluator.grader is not None and evaluator.grader.name != "pytest":
        settings["grader"] = evaluator.grader.name
    table = job.task.spec.grading
    if table.runner == "function" and table.evaluator is not None:  # its code decides the grade
        settings["evaluator"] = evaluator_key(table.evaluator)
    models = evaluator.settings.models
    if models is not None and (models.tiers or models.roles):  # none: existing keys still hold
        settings["models"] = models.model_dump(mode="json")
    if evaluator.settings.api_base is not None:
        settings["api_base"] = evaluator.settings.api_base
    return settings


def cache_key(evaluator: Evaluator, job: EvalJob) -> str:
    """The job's cache key (hex sha256). Deterministic; the same across processes and runs.

    The model part is `evaluator.settings.model` (the spec, e.g. "sim" or
    "anthropic/claude-sonnet-4-5"): an evaluator whose factory makes another model than its
    settings name must not share a cache.
    """
    parts = {
        "workflow_hash": workflow_hash(job.workflow),
        "task_id": job.task.id,
        "task_digest": job.task.digest,
        "model": evaluator.settings.model,
        "settings": _settings(evaluator, job),
        "repetition": job.repetition,
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


class FitnessCache:
    """Finished evaluations by cache key, in the `fitness_cache` table of the index file at
    `path` (created when missing; usually a run's `runs.db`, or a file shared by runs), and
    this process's claims of evaluations in flight (owner `owner`, lease `lease_s`)."""

    def __init__(self, path: Path, *, lease_s: float = CLAIM_LEASE_S) -> None:
        self.path = path
        self.table = CacheTable(path)
        self.owner = claim_owner()
        self.lease_s = lease_s

    def claim(self, evaluator: Evaluator, job: EvalJob) -> ClaimState:
        """Claim `job`'s key for this process (see `CacheTable.claim`)."""
        return self.table.claim(cache_key(evaluator, job), self.owner, self.lease_s)

    def release(self, evaluator: Evaluator, jobs: Sequence[EvalJob]) -> None:
        """Drop this process's claims on the jobs' keys."""
        self.table.release([cache_key(evaluator, job) for job in jobs], self.owner)

    def get(self, evaluator: Evaluator, job: EvalJob) -> tuple[CycleRecord, CacheEntry] | None:
        """The stored record for `job` and its entry, or None. An entry that lacks what a run
        of `job` gives today (`_outdated`) is dropped and counts as a miss, so it is run again
        and stored afresh."""
        key = cache_key(evaluator, job)
        entry = self.table.get(key)
        if entry is None:
            return None
        if _outdated(job, entry.record_json):
            self.table.drop(key)
            return None
        return record_from_json(entry.record_json), entry

    def put(self, evaluator: Evaluator, job: EvalJob, record: CycleRecord) -> bool:
        """Store `record` as `job`'s result unless the key is taken; True when stored."""
        entry = CacheEntry(
            key=cache_key(evaluator, job),
            workflow_hash=workflow_hash(job.workflow),
            task_id=job.task.id,
            task_digest=job.task.digest,
            model=evaluator.settings.model,
            settings_json=json.dumps(_settings(evaluator, job), sort_keys=True),
            repetition=job.repetition,
            record_json=record.model_dump_json(),
            source_run_id=job.run_id,
            source_path=str(job.run_dir),
            created_at=utc_now(),
        )
        return self.table.put(entry)

    def __len__(self) -> int:
        return len(self.table)

    def close(self) -> None:
        self.table.close()


def _outdated(job: EvalJob, record_json: str) -> bool:
    """True for a function-graded task's record of CycleRecord schema 1 or 2: it was stored
    before records kept the evaluator's feedback (schema 3), so a hit would give reflection no
    feedback on the task until it was run again. A pytest-graded record of those schemas loses
    nothing (its grade has no feedback) and still serves."""
    if job.task.spec.grading.runner != FUNCTION_GRADER:
        return False
    version = json.loads(record_json).get("schema_version")
    return isinstance(version, int) and version < FEEDBACK_SCHEMA_VERSION


def cacheable(result: JobResult) -> bool:
    """Only runs that finished with a valid grade are stored: a timeout, a crash, an invalid
    grade or a model that failed every call says more about the machine (or the provider)
    than about the workflow, and may not happen again."""
    grade = result.record.grade
    if model_never_answered(result.record):
        return False
    return result.status == "ok" and not result.cached and grade is not None and not grade.invalid


class CachedExecutor:
    """An executor that answers cache hits itself, sends the misses it claims to `inner` and
    waits for the ones another run has claimed (see the module doc). `hits` counts answers
    from the cache (`waited` of them after waiting), `misses` the jobs sent to `inner`."""

    def __init__(
        self, inner: Executor, cache: FitnessCache, *, poll_s: float = CLAIM_POLL_S
    ) -> None:
        self.inner = inner
        self.cache = cache
        self.poll_s = poll_s
        self.name = inner.name
        self.hits = 0
        self.misses = 0
        self.waited = 0

    @property
    def workers(self) -> int:
        return self.inner.workers

    def run(self, evaluator: Evaluator, jobs: Sequence[EvalJob]) -> JobStream:
        """Hits first (in job order), then the inner executor's results as they complete and
        the results other runs computed for jobs this one waited for."""
        mine: list[int] = []
        waiting: list[int] = []
        for index, job in enumerate(jobs):
            started = time.monotonic()
            found = self.cache.get(evaluator, job)
            if found is not None:
                yield self._served(index, job, found, started)
                continue
            state = self.cache.claim(evaluator, job)
            if state == "done" and (hit := self._hit(evaluator, index, job, started)):
                yield hit  # stored between the look-up and the claim
            elif state == "taken":
                waiting.append(index)
            else:
                mine.append(index)
        if not mine and not waiting:
            return
        held = [jobs[i] for i in mine]
        try:
            with _heartbeat(self.cache):
                while mine or waiting:
                    if mine:
                        batch, mine = mine, []
                        self.misses += len(batch)
                        for result in self.inner.run(evaluator, [jobs[i] for i in batch]):
                            yield self._store(evaluator, replace(result, index=batch[result.index]))
                            yield from self._poll(evaluator, jobs, waiting, mine, held)
                    else:
                        time.sleep(self.poll_s)
                        yield from self._poll(evaluator, jobs, waiting, mine, held)
        finally:
            self.cache.release(evaluator, held)

    def _store(self, evaluator: Evaluator, result: JobResult) -> JobResult:
        if cacheable(result):
            self.cache.put(evaluator, result.job, result.record)
        self.cache.release(evaluator, [result.job])  # a waiting run takes over a failure
        return result

    def _poll(
        self, evaluator: Evaluator, jobs: Sequence[EvalJob], waiting: list[int], mine: list[int],
        held: list[EvalJob],
    ) -> Iterator[JobResult]:  # fmt: skip
        """The waited-for jobs another run has finished; the ones it gave up move to `mine`."""
        for index in list(waiting):
            started = time.monotonic()
            state = self.cache.claim(evaluator, jobs[index])
            if state == "taken":
                continue
            waiting.remove(index)
            if state == "done" and (hit := self._hit(evaluator, index, jobs[index], started)):
                self.waited += 1
                yield hit
            else:
                mine.append(index)
                held.append(jobs[index])

    def _hit(
        self, evaluator: Evaluator, index: int, job: EvalJob, started: float
    ) -> JobResult | None:
        found = self.cache.get(evaluator, job)
        return None if found is None else self._served(index, job, found, started)

    def _served(
        self, index: int, job: EvalJob, found: tuple[CycleRecord, CacheEntry], started: float
    ) -> JobResult:
        self.hits += 1
        _materialise(job, *found)
        return JobResult(
            index=index,
            job=job,
            record=found[0],
            status="ok",
            attempts=0,
            cached=True,
            wall_s=time.monotonic() - started,
            executor=self.name,
        )

    def close(self) -> None:
        self.inner.close()
        self.cache.close()


@contextlib.contextmanager
def _heartbeat(cache: FitnessCache) -> Iterator[None]:
    """Renew `cache`'s claims every third of their lease while the block runs (a thread with its
    own connection: SQLite connections stay in their thread)."""
    stop = threading.Event()

    def beat() -> None:
        table = CacheTable(cache.path)
        try:
            while not stop.wait(cache.lease_s / 3):
                table.renew(cache.owner, cache.lease_s)
        finally:
            table.close()

    thread = threading.Thread(target=beat, name="loopwright-cache-claims", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def _materialise(job: EvalJob, record: CycleRecord, entry: CacheEntry) -> None:
    """Fill the job's run directory from the cache: a copy of the source run directory when it
    is still on this machine (the whole exhaust), else the record alone; plus a marker."""
    source = Path(entry.source_path)
    own = job.run_dir.is_dir() and source.is_dir() and source.samefile(job.run_dir)
    if not own:  # (own: a finished run a kill kept out of the checkpoint; its files stay)
        if job.run_dir.exists():
            shutil.rmtree(job.run_dir)
        if source.is_dir():
            shutil.copytree(source, job.run_dir, ignore=shutil.ignore_patterns(CACHE_HIT_FILE))
    job.run_dir.mkdir(parents=True, exist_ok=True)
    write_record(record, job.run_dir)
    marker = {
        "schema_version": 1,
        "key": entry.key,
        "source_run_id": entry.source_run_id,
        "source_path": entry.source_path,
        "stored_at": entry.created_at,
        "served_at": utc_now(),
    }
    atomic_write(job.run_dir / CACHE_HIT_FILE, json.dumps(marker, indent=2) + "\n")
