"""The Ray executor (optional extra `loopwright[ray]`): the same jobs as Ray tasks on a cluster.

`ray` is imported only when this executor is used. Each job is one Ray task asking for
`num_cpus` CPUs; Ray retries it `max_retries` times when its worker or node dies. The task runs
the job on whichever node it lands on (at the same run-directory path when it can, so prompts
and token counts are the same as with the local executor) and returns the record and the run
directory's files, which are written into the job's run directory here, on the driver: a run
directory looks the same whichever executor filled it. Nothing Ray-specific leaves this module.
"""

from __future__ import annotations

import dataclasses
import logging
import shutil
import tempfile
import time
from collections import deque
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from loopwright.errors import ConfigError, MissingDependencyError, UsageError
from loopwright.evaluation._executor import (
    EvalJob,
    FailedAttempt,
    JobResult,
    JobStatus,
    JobStream,
    failure_record,
    job_timeout_s,
    schedule,
)
from loopwright.records import CycleRecord

if TYPE_CHECKING:
    from loopwright.evaluation._evaluator import Evaluator

__all__ = ["RAY_PIP_HINT", "RayExecutor", "import_ray"]

RAY_PIP_HINT = "pip install 'loopwright[ray]'  (or: pip install ray)"

_Payload = tuple[str, list[tuple[str, bytes]]]


def import_ray() -> ModuleType:
    """The `ray` module, or MissingDependencyError saying how to install it."""
    try:
        import ray
    except ImportError as exc:
        raise MissingDependencyError(
            "the Ray executor needs the ray package",
            got=f"import ray failed: {exc}",
            fix=f"install it: {RAY_PIP_HINT}; or use --executor local",
        ) from None
    return ray


class RayExecutor:
    """Runs jobs as Ray tasks on the cluster at `address` ("auto", "HOST:PORT"), or on a local
    Ray instance started for this process when `address` is None (stopped by `close`).

    `workers` caps the jobs in flight (default: the cluster's CPUs // `num_cpus`).
    `job_timeout_s` as for the local executor; a job past it is cancelled (its worker killed).
    A task that still fails after Ray's retries is recorded as `crashed`.
    """

    name = "ray"

    def __init__(
        self,
        address: str | None = None,
        *,
        workers: int | None = None,
        job_timeout_s: float | None = None,
        num_cpus: float = 1.0,
        max_retries: int = 1,
    ) -> None:
        if workers is not None and workers < 1:
            raise ConfigError("the Ray executor needs at least one worker", got=str(workers),
                              fix="pass --workers 1 or more, or omit it (the cluster's CPUs)")  # fmt: skip
        if num_cpus <= 0:
            raise ConfigError("a Ray job must ask for some CPU", got=str(num_cpus), fix="use 1")
        self.address = address
        self.job_timeout_s = job_timeout_s
        self.num_cpus = num_cpus
        self.max_retries = max_retries
        self._workers = workers
        self._ray: ModuleType | None = None
        self._owns_runtime = False

    @property
    def workers(self) -> int:
        """The jobs run at once (connects to the cluster when not given)."""
        if self._workers is not None:
            return self._workers
        ray = self.connect()
        cpus = float(ray.cluster_resources().get("CPU", 1.0))
        return max(int(cpus // self.num_cpus), 1)

    def connect(self) -> ModuleType:
        """Connect now (the first job does otherwise); returns the ray module. UsageError when
        the cluster cannot be reached."""
        if self._ray is not None:
            return self._ray
        ray = import_ray()
        if not ray.is_initialized():
            try:
                ray.init(
                    address=self.address,
                    num_cpus=None if self.address else self._workers,
                    include_dashboard=False,
                    log_to_driver=False,
                    logging_level=logging.ERROR,
                )
            except (ConnectionError, RuntimeError, ValueError) as exc:
                raise UsageError(
                    "cannot connect to the Ray cluster",
                    got=f"--ray-address {self.address}: {exc}",
                    fix="start one (ray start --head) and pass its address, or omit "
                    "--ray-address to start a local Ray instance",
                ) from None
            self._owns_runtime = True
        self._ray = ray
        return ray

    def run(self, evaluator: Evaluator, jobs: Sequence[EvalJob]) -> JobStream:
        """Stream the jobs' results in completion order (see `Executor`)."""
        return self._stream(evaluator.detached(), list(jobs))

    def _stream(self, evaluator: Evaluator, jobs: list[EvalJob]) -> JobStream:
        ray = self.connect()
        limit = self.workers
        remote = ray.remote(_run_remote).options(
            num_cpus=self.num_cpus, max_retries=self.max_retries, retry_exceptions=False
        )
        shared = ray.put(evaluator)
        order = deque(schedule(jobs))
        flying: dict[Any, tuple[int, float, float]] = {}  # ref -> (index, started, deadline)
        try:
            while order or flying:
                while order and len(flying) < limit:
                    index = order.popleft()
                    started = time.monotonic()
                    timeout = job_timeout_s(evaluator, jobs[index], self.job_timeout_s)
                    flying[remote.remote(shared, jobs[index])] = (index, started, started + timeout)
                nearest = min(deadline for _, _, deadline in flying.values())
                ready, _ = ray.wait(
                    list(flying), num_returns=1, timeout=max(nearest - time.monotonic(), 0.0)
                )
                for ref in ready:
                    index, started, _ = flying.pop(ref)
                    yield self._collect(ray, ref, evaluator, jobs[index], index, started)
                for ref, (index, started, deadline) in list(flying.items()):
                    if time.monotonic() >= deadline:
                        del flying[ref]
                        ray.cancel(ref, force=True)
                        yield self._failed(evaluator, jobs[index], index, started, "timeout",
                                           f"job cancelled at its timeout ({jobs[index].describe()})")  # fmt: skip
        finally:
            for ref in flying:
                ray.cancel(ref, force=True)

    def _collect(
        self, ray: ModuleType, ref: Any, evaluator: Evaluator, job: EvalJob, index: int,
        started: float,
    ) -> JobResult:  # fmt: skip
        try:
            record_json, files = ray.get(ref)
        except ray.exceptions.RayTaskError as exc:  # an exception outside the run itself
            return self._failed(evaluator, job, index, started, "error", str(exc)[-2000:])
        except ray.exceptions.RayError as exc:  # worker or node died, after Ray's retries
            message = f"Ray task failed after {self.max_retries} retries: {exc}"[-2000:]
            return self._failed(evaluator, job, index, started, "crashed", message)
        _write_files(job.run_dir, files)
        return JobResult(
            index=index,
            job=job,
            record=CycleRecord.model_validate_json(record_json),
            status="ok",
            attempts=1,
            wall_s=time.monotonic() - started,
            executor=self.name,
        )

    def _failed(
        self, evaluator: Evaluator, job: EvalJob, index: int, started: float,
        status: JobStatus, message: str,
    ) -> JobResult:  # fmt: skip
        duration = time.monotonic() - started
        attempts = 1 + self.max_retries if status == "crashed" else 1
        return JobResult(
            index=index,
            job=job,
            record=failure_record(evaluator, job, status, message, duration),
            status=status,
            attempts=attempts,
            failures=(FailedAttempt(attempts, status, message, duration),),
            wall_s=duration,
            executor=self.name,
        )

    def close(self) -> None:
        """Disconnect; stop the local Ray instance when this executor started it."""
        if self._ray is not None and self._owns_runtime:
            self._ray.shutdown()
        self._ray = None
        self._owns_runtime = False


def _run_remote(evaluator: Evaluator, job: EvalJob) -> _Payload:
    """On a Ray worker: run the job and return its record and its run directory's files.

    It runs at the driver's run-directory path when it can create it there (always on the
    driver's machine; on other nodes when the path is writable), so paths in prompts, and with
    them token counts, match what the local executor would give; else in a scratch directory.
    The directory is removed before returning: the driver writes the files back."""
    scratch: Path | None = None
    try:
        if job.run_dir.exists():
            shutil.rmtree(job.run_dir)  # what a retried attempt left here
        job.run_dir.mkdir(parents=True)
        local = job
    except OSError:
        scratch = Path(tempfile.mkdtemp(prefix="lw-ray-"))
        local = dataclasses.replace(job, root=scratch)
    try:
        record = evaluator.run_job(local)
        files = [
            (path.relative_to(local.run_dir).as_posix(), path.read_bytes())
            for path in sorted(local.run_dir.rglob("*"))
            if path.is_file()
        ]
        return record.model_dump_json(), files
    finally:
        shutil.rmtree(scratch or local.run_dir, ignore_errors=True)


def _write_files(run_dir: Path, files: list[tuple[str, bytes]]) -> None:
    if run_dir.exists():
        shutil.rmtree(run_dir)
    for rel, data in files:
        path = run_dir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    run_dir.mkdir(parents=True, exist_ok=True)
