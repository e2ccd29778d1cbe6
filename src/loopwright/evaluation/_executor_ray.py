"""The Ray executor (optional extra `loopwright[ray]`): the same jobs as Ray tasks on a cluster.

`ray` is imported only when this executor is used. Each job is one Ray task asking for
`num_cpus` CPUs; when its worker or node dies the executor runs it again, up to `max_retries`
times, and records every lost attempt (its node and Ray's reason) as a `FailedAttempt`. The
head node is watched: when its GCS stops answering for `HEAD_LOST_S` seconds the run stops with
RunAbortedError (what finished is kept; `--resume` continues). Ray's own messages (raylet
errors, log tails, its logger) go to `RAY_LOG` in the run directory, never to the terminal.
The task runs
the job on whichever node it lands on (at the same run-directory path when it can; prompts and
token counts do not depend on the path either way) and returns the record and the run
directory's files, which are written into the job's run directory here, on the driver: a run
directory looks the same whichever executor filled it. Nothing Ray-specific leaves this module.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import logging
import re
import shutil
import socket
import tempfile
import threading
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, TextIO

from loopwright._caller import Caller, caller, speaking_as, spoken
from loopwright.errors import ConfigError, MissingDependencyError, RunAbortedError, UsageError
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
from loopwright.records import record_from_json
from loopwright.scoring import EvaluatorSnapshot, evaluator_snapshot, install_evaluators

if TYPE_CHECKING:
    from loopwright.evaluation._evaluator import Evaluator

__all__ = ["HEAD_LOST_S", "RAY_LOG", "RAY_PIP_HINT", "RayExecutor", "import_ray"]

RAY_PIP_HINT = "pip install 'loopwright[ray]'  (or: pip install ray)"
RAY_LOG = "ray.log"
"""Where Ray's own output goes, in the run directory (appended; one header line per connection)."""
HEAD_LOST_S = 3.0
"""Seconds the head node's GCS may refuse connections before the run stops (probed each second)."""
SHUTDOWN_WAIT_S = 10.0
"""Seconds the disconnect from a cluster whose head is lost may take (about 5 with Ray 2.60)."""
_PROBE_S = 1.0

_Payload = tuple[str, list[tuple[str, bytes]]]


def _address() -> str:
    return spoken("ray_address", "--ray-address")


def _unreachable_fix() -> str:
    return (f"start one (ray start --head) and pass its address, or omit {_address()} to "
            "start a local Ray instance")  # fmt: skip


def import_ray() -> ModuleType:
    """The `ray` module, or MissingDependencyError saying how to install it."""
    try:
        import ray
    except ImportError as exc:
        raise MissingDependencyError(
            "the Ray executor needs the ray package",
            got=f"import ray failed: {exc}",
            fix=f"install it: {RAY_PIP_HINT}; or use "
            + spoken("ExecutorSettings(kind='local')", "--executor local"),
        ) from None
    return ray


class RayExecutor:
    """Runs jobs as Ray tasks on the cluster at `address` ("auto", "HOST:PORT"), or on a local
    Ray instance started for this process when `address` is None (stopped by `close`).

    `workers` caps the jobs in flight (default: the cluster's CPUs // `num_cpus`).
    `job_timeout_s` as for the local executor; a job past it is cancelled (its worker killed).
    A job whose worker or node died is run again up to `max_retries` times; every lost attempt
    is a FailedAttempt naming the node and the reason; one still lost after that is `crashed`.
    Ray's output goes to `log_dir/RAY_LOG` (None: discarded). A head node that stops
    answering raises RunAbortedError from the stream within about `HEAD_LOST_S` seconds.
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
        log_dir: Path | None = None,
    ) -> None:
        if workers is not None and workers < 1:
            raise ConfigError("the Ray executor needs at least one worker", got=str(workers),
                              fix=f"set {spoken('workers', '--workers')} to 1 or more, or omit it "
                                  "(the cluster's CPUs)")  # fmt: skip
        if num_cpus <= 0:
            raise ConfigError("a Ray job must ask for some CPU", got=str(num_cpus), fix="use 1")
        self.address = address
        self.job_timeout_s = job_timeout_s
        self.num_cpus = num_cpus
        self.max_retries = max_retries
        self.log_dir = log_dir
        self._workers = workers
        self._ray: ModuleType | None = None
        self._owns_runtime = False
        self._log: TextIO | None = None
        self._head: _HeadWatch | None = None

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
        _silence(ray, None)  # before init: nothing of Ray's reaches the terminal
        plain = self.address is not None and _HOST_PORT.fullmatch(self.address)
        if plain and not _HeadWatch(self.address or "").reachable():
            raise UsageError(
                "cannot connect to the Ray cluster",
                got=f"{_address()} {self.address}: nothing accepts connections there",
                fix=_unreachable_fix(),
            )  # ray.init would retry for ever, printing Ray's warnings
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
                    got=f"{_address()} {self.address}: {exc}",
                    fix=_unreachable_fix(),
                ) from None
            self._owns_runtime = True
        self._ray = ray
        self._log = _silence(ray, self.log_dir)
        gcs = ray.get_runtime_context().gcs_address if self.address else None
        self._head = _HeadWatch(gcs) if gcs else None
        return ray

    def run(self, evaluator: Evaluator, jobs: Sequence[EvalJob]) -> JobStream:
        """Stream the jobs' results in completion order (see `Executor`)."""
        return self._stream(evaluator.detached(), list(jobs))

    def _stream(self, evaluator: Evaluator, jobs: list[EvalJob]) -> JobStream:
        ray = self.connect()
        limit = self.workers
        remote = ray.remote(_run_remote).options(
            num_cpus=self.num_cpus, max_retries=0, retry_exceptions=False
        )
        shared = ray.put(evaluator)
        evaluators = ray.put(evaluator_snapshot())  # the registered ones: not forked there
        order = deque(schedule(jobs))
        flying: dict[Any, _Flight] = {}
        lost: list[_Flight] = []  # attempts to run again, first
        try:
            while order or flying or lost:
                while (lost or order) and len(flying) < limit:
                    flight = lost.pop(0) if lost else _Flight(order.popleft())
                    flight.started = time.monotonic()
                    timeout = job_timeout_s(evaluator, jobs[flight.index], self.job_timeout_s)
                    flight.deadline = flight.started + timeout
                    job = jobs[flight.index]
                    flying[remote.remote(shared, job, evaluators, caller())] = flight
                nearest = min(flight.deadline for flight in flying.values())
                wait_s = min(max(nearest - time.monotonic(), 0.0), _PROBE_S)
                ready, _ = ray.wait(list(flying), num_returns=1, timeout=wait_s)
                for ref in ready:
                    flight = flying.pop(ref)
                    done = self._collect(ray, ref, evaluator, jobs[flight.index], flight)
                    if done is None:
                        lost.append(flight)
                    else:
                        yield done
                for ref, flight in list(flying.items()):
                    if time.monotonic() >= flight.deadline:
                        del flying[ref]
                        ray.cancel(ref, force=True)
                        job = jobs[flight.index]
                        yield self._failed(evaluator, job, flight, "timeout",
                                           f"job cancelled at its timeout ({job.describe()})")  # fmt: skip
                self._check_head()
        finally:
            if self._head is None or not self._head.lost:
                for ref in flying:
                    ray.cancel(ref, force=True)

    def _check_head(self) -> None:
        """RunAbortedError when the head node has not answered for HEAD_LOST_S seconds."""
        if self._head is None or self._head.alive():
            return
        if self._ray is not None:
            atexit.unregister(self._ray.shutdown)  # at exit it would try the head for a minute
        raise RunAbortedError(
            f"the Ray cluster's head node at {self._head.address} stopped answering "
            f"(no connection for {HEAD_LOST_S:.0f} s): the run stopped; finished evaluations "
            f"are kept. Start the cluster again (or use {spoken('the local executor', '--executor local')}) "
            "and resume"
        )

    def _collect(
        self, ray: ModuleType, ref: Any, evaluator: Evaluator, job: EvalJob, flight: _Flight
    ) -> JobResult | None:
        """The job's result, or None when its attempt was lost and it is to run again."""
        try:
            record_json, files = ray.get(ref)
        except ray.exceptions.RayTaskError as exc:  # an exception outside the run itself
            return self._failed(evaluator, job, flight, "error", str(exc)[-2000:])
        except ray.exceptions.RayError as exc:  # its worker or node died
            self._check_head()  # a lost head is not the job's failure
            message = _lost_reason(ray, exc)
            if flight.attempt > self.max_retries:
                return self._failed(evaluator, job, flight, "crashed", message)
            duration = time.monotonic() - flight.started
            flight.failures.append(FailedAttempt(flight.attempt, "crashed", message, duration))
            flight.attempt += 1
            return None
        _write_files(job.run_dir, files)
        return JobResult(
            index=flight.index,
            job=job,
            record=record_from_json(record_json),
            status="ok",
            attempts=flight.attempt,
            failures=tuple(flight.failures),
            wall_s=time.monotonic() - flight.started,
            executor=self.name,
        )

    def _failed(
        self, evaluator: Evaluator, job: EvalJob, flight: _Flight, status: JobStatus,
        message: str,
    ) -> JobResult:  # fmt: skip
        duration = time.monotonic() - flight.started
        return JobResult(
            index=flight.index,
            job=job,
            record=failure_record(evaluator, job, status, message, duration),
            status=status,
            attempts=flight.attempt,
            failures=(*flight.failures, FailedAttempt(flight.attempt, status, message, duration)),
            wall_s=duration,
            executor=self.name,
        )

    def close(self) -> None:
        """Disconnect; stop the local Ray instance when this executor started it. After a lost
        head node the disconnect is given `SHUTDOWN_WAIT_S` seconds in a thread (Ray retries
        the head meanwhile; without a disconnect its core worker crashes at exit)."""
        lost = self._head is not None and self._head.lost
        if self._ray is not None and self._owns_runtime:
            if lost:
                done = threading.Thread(target=self._ray.shutdown, daemon=True)
                done.start()
                done.join(SHUTDOWN_WAIT_S)
            else:
                self._ray.shutdown()
        if self._log is not None:
            self._log.close()
        self._ray, self._log, self._head = None, None, None
        self._owns_runtime = False


@dataclass
class _Flight:
    """One job in flight: its index, the attempt running, and the attempts lost before it."""

    index: int
    attempt: int = 1
    started: float = 0.0
    deadline: float = 0.0
    failures: list[FailedAttempt] = field(default_factory=list)


class _HeadWatch:
    """Whether the head node's GCS at `address` ("HOST:PORT") still accepts connections:
    probed at most once a second; lost after HEAD_LOST_S seconds without one."""

    def __init__(self, address: str) -> None:
        self.address = address
        host, _, port = address.rpartition(":")
        self._target = (host.strip("[]"), int(port))
        self._last_ok = time.monotonic()
        self._probed = 0.0
        self.lost = False

    def reachable(self) -> bool:
        """True when the address accepts a connection within HEAD_LOST_S seconds."""
        deadline = time.monotonic() + HEAD_LOST_S
        while True:
            try:
                with socket.create_connection(self._target, timeout=_PROBE_S):
                    return True
            except OSError:
                if time.monotonic() >= deadline:
                    return False
                time.sleep(0.2)

    def alive(self) -> bool:
        now = time.monotonic()
        if self.lost or now - self._probed < _PROBE_S:
            return not self.lost
        self._probed = now
        try:
            with socket.create_connection(self._target, timeout=_PROBE_S):
                self._last_ok = time.monotonic()
        except OSError:
            self.lost = time.monotonic() - self._last_ok >= HEAD_LOST_S
        return not self.lost


_HOST_PORT = re.compile(r"[\w.\-]+:\d+")
_NODE = re.compile(r"node[ _]?(?:id)?[:= ]+([0-9a-f]{16,})", re.IGNORECASE)
_IP = re.compile(r"(?:IP|address)[:= ]+([0-9a-fA-F.:]+[0-9a-fA-F])")


def _lost_reason(ray: ModuleType, exc: BaseException) -> str:
    """One line for a lost attempt: the node it ran on (from Ray's message, else the nodes now
    dead) and Ray's error type and first line."""
    text = str(exc)
    node, ip = _NODE.search(text), _IP.search(text)
    where = f"node {node.group(1)[:12]}" if node else ""
    if ip:
        where = f"{where} ({ip.group(1)})" if where else f"node {ip.group(1)}"
    if not where:
        with contextlib.suppress(Exception):
            dead = [n for n in ray.nodes() if not n.get("Alive", True)]
            where = ", ".join(f"node {n['NodeID'][:12]} ({n.get('NodeManagerAddress')})"
                              for n in dead) or "node unknown"  # fmt: skip
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return f"attempt lost on {where or 'node unknown'}: {type(exc).__name__}: {first}"[:2000]


def _silence(ray: ModuleType, log_dir: Path | None) -> TextIO | None:
    """Send what Ray prints (raylet errors, worker log tails, its `ray` logger) to
    `log_dir/RAY_LOG` (None: nowhere) instead of this process's stdout and stderr. Returns
    the open log file (the caller closes it)."""
    out: TextIO | None = None
    if log_dir is not None:
        with contextlib.suppress(OSError):
            log_dir.mkdir(parents=True, exist_ok=True)
            out = (log_dir / RAY_LOG).open("a", encoding="utf-8")
            out.write(
                f"--- ray {ray.__version__}, connected {time.strftime('%Y-%m-%dT%H:%M:%S')}\n"
            )
            out.flush()

    def to_log(data: dict[str, Any], ignore_prefix: bool = False) -> None:
        if out is None or out.closed:
            return
        prefix = f"({data.get('pid', 'ray')}) "
        out.writelines(prefix + str(line) + "\n" for line in data.get("lines", ()))
        out.flush()

    with contextlib.suppress(Exception):  # Ray's internals: best effort, never fatal
        import ray._private.worker as ray_worker

        ray_worker.print_to_stdstream = to_log
    logger = logging.getLogger("ray")
    for handler in list(logger.handlers):
        logger.removeHandler(handler)
    logger.addHandler(logging.StreamHandler(out) if out is not None else logging.NullHandler())
    logger.propagate = False
    return out


def _run_remote(
    evaluator: Evaluator, job: EvalJob, evaluators: EvaluatorSnapshot = (), who: Caller = "python"
) -> _Payload:
    """On a Ray worker: register the driver's evaluator functions (`evaluators`), run the job
    as the driver's caller `who` speaks (a worker is not forked from the driver: its messages
    would speak to a Python caller) and return its record and its run directory's files."""
    with speaking_as(who):
        return _run_here(evaluator, job, evaluators)


def _run_here(evaluator: Evaluator, job: EvalJob, evaluators: EvaluatorSnapshot) -> _Payload:
    """`_run_remote`'s work, in the worker.

    It runs at the driver's run-directory path when it can create it there (always on the
    driver's machine; on other nodes when the path is writable), else in a scratch directory
    (agents are never shown either path: docs/runtime.md, "Path-independent runs").
    The directory is removed before returning: the driver writes the files back."""
    install_evaluators(evaluators)
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
