"""The local executor: a pool of worker processes on this machine (the default).

Each job runs in a fresh process forked from this one (so any Evaluator works, closures and
all, and nothing mutable is shared between jobs), at most `workers` at a time. The worker
sends its record back through a pipe and exits. A job past its timeout is cancelled: the
worker is stopped, and it and every process under it (the sandbox's commands run in their own
sessions, so a process-group kill would miss them) are killed. A worker that dies without
answering (SIGKILL, out of memory) is recorded and its job retried once. Linux: the process
tree is read from /proc, and workers die with this process (PR_SET_PDEATHSIG).
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
import traceback
from collections import defaultdict, deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import TYPE_CHECKING

from loopwright._caller import spoken
from loopwright.errors import ConfigError
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
from loopwright.records import CycleRecord, record_from_json
from loopwright.sandbox import process_descendants

if TYPE_CHECKING:
    from loopwright.evaluation._evaluator import Evaluator

__all__ = ["LocalExecutor", "default_workers"]

LOG_TAIL_CHARS = 2000
_PR_SET_PDEATHSIG = 1


def default_workers() -> int:
    """The number of CPU cores this process may use (at least 1)."""
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except AttributeError:  # not Linux
        return max(os.cpu_count() or 1, 1)


class LocalExecutor:
    """A local process pool: `workers` jobs at once (default: the cores this process may use).

    `job_timeout_s` caps every job (default: per task, its agent + grade timeouts + 60 s).
    `retries` is how many times a job whose worker crashed is run again (1). Crashed attempts'
    partial run directories are kept beside the final one as `rep_<k>.attempt<n>`. Holds no
    resources between `run` calls; `close` does nothing.
    """

    name = "local"

    def __init__(
        self, workers: int | None = None, *, job_timeout_s: float | None = None, retries: int = 1
    ) -> None:
        if workers is not None and workers < 1:
            raise ConfigError(
                "the local executor needs at least one worker",
                got=f"{spoken('workers', '--workers')} {workers}",
                fix=f"set {spoken('workers', '--workers')} to 1 or more (default: the number of cores)",
            )
        if job_timeout_s is not None and job_timeout_s <= 0:
            raise ConfigError(
                "the job timeout must be positive", got=str(job_timeout_s), fix="omit it or pass >0"
            )
        self.workers = workers if workers is not None else default_workers()
        self.job_timeout_s = job_timeout_s
        self.retries = max(retries, 0)

    def run(self, evaluator: Evaluator, jobs: Sequence[EvalJob]) -> JobStream:
        """Stream the jobs' results in completion order (see `Executor`)."""
        return _Pool(self, evaluator.detached(), list(jobs)).results()

    def close(self) -> None:
        return None


@dataclass
class _Running:
    index: int
    attempt: int
    process: BaseProcess
    conn: Connection
    started: float
    deadline: float
    log: Path
    message: tuple[str, str] | None = None
    closed: bool = False


@dataclass
class _Pool:
    """One `run` call: the queue, the running workers and what failed so far."""

    executor: LocalExecutor
    evaluator: Evaluator
    jobs: list[EvalJob]
    failures: dict[int, list[FailedAttempt]] = field(default_factory=lambda: defaultdict(list))

    def results(self) -> JobStream:
        scratch = Path(tempfile.mkdtemp(prefix="lw-pool-"))
        pending: deque[tuple[int, int]] = deque((i, 1) for i in schedule(self.jobs))
        running: dict[int, _Running] = {}
        try:
            while pending or running:
                while pending and len(running) < self.executor.workers:
                    index, attempt = pending.popleft()
                    running[index] = self._start(index, attempt, scratch)
                _wait_any(list(running.values()))
                for index, worker in list(running.items()):
                    status = _poll(worker)
                    if status is None:
                        continue
                    del running[index]
                    result = self._finish(worker, status)
                    if result is None:
                        pending.appendleft((index, worker.attempt + 1))  # retry first
                    else:
                        yield result
        finally:  # also on close() of this generator and on an exception in the consumer
            for worker in running.values():
                _kill_tree(worker)
            shutil.rmtree(scratch, ignore_errors=True)

    def _start(self, index: int, attempt: int, scratch: Path) -> _Running:
        job = self.jobs[index]
        ctx = multiprocessing.get_context("fork")
        receive, send = ctx.Pipe(duplex=False)
        log = scratch / f"job{index}-attempt{attempt}.log"
        process = ctx.Process(
            target=_worker_main,
            args=(self.evaluator, job, send, log, os.getpid()),
            name=f"loopwright-job-{index}",
            daemon=True,
        )
        started = time.monotonic()
        try:
            with _interrupts_held():
                process.start()
        except BaseException:  # a Ctrl-C held during the fork: this worker is nobody's yet
            if process.pid is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(process.pid, signal.SIGKILL)
                process.join(timeout=10)
            raise
        send.close()  # the worker holds the write end; its death shows as EOF here
        timeout = job_timeout_s(self.evaluator, job, self.executor.job_timeout_s)
        return _Running(index, attempt, process, receive, started, started + timeout, log)

    def _finish(self, worker: _Running, status: JobStatus) -> JobResult | None:
        """The job's result, or None when a crashed job is to be retried."""
        job = self.jobs[worker.index]
        duration = time.monotonic() - worker.started
        failures = self.failures[worker.index]
        if status == "ok" and worker.message is not None:
            record = record_from_json(worker.message[1])
            return self._result(worker, record, status, duration)
        message = _failure_message(worker, status, job, self.executor, duration)
        if status == "crashed" and worker.attempt <= self.executor.retries:
            kept = job.run_dir.with_name(f"{job.run_dir.name}.attempt{worker.attempt}")
            shutil.rmtree(kept, ignore_errors=True)
            if job.run_dir.exists():
                job.run_dir.rename(kept)
                failure_record(self.evaluator, job, status, message, duration, run_dir=kept)
            failures.append(FailedAttempt(worker.attempt, status, message, duration, kept))
            return None
        failures.append(FailedAttempt(worker.attempt, status, message, duration))
        record = failure_record(self.evaluator, job, status, message, duration)
        return self._result(worker, record, status, duration)

    def _result(
        self, worker: _Running, record: CycleRecord, status: JobStatus, duration: float
    ) -> JobResult:
        return JobResult(
            index=worker.index,
            job=self.jobs[worker.index],
            record=record,
            status=status,
            attempts=worker.attempt,
            failures=tuple(self.failures[worker.index]),
            wall_s=duration,
            executor=self.executor.name,
        )


def _wait_any(running: Sequence[_Running]) -> None:
    """Block until a worker answers or ends, or the nearest deadline passes."""
    if not running:
        return
    handles: list[Connection | int] = [w.process.sentinel for w in running]
    handles += [w.conn for w in running if w.message is None and not w.closed]
    nearest = min(w.deadline for w in running)
    wait(handles, timeout=max(nearest - time.monotonic(), 0.0))


def _poll(worker: _Running) -> JobStatus | None:
    """How the worker's attempt ended, or None while it is still going."""
    _receive(worker)
    if worker.message is not None:
        worker.process.join(timeout=10)  # it has answered and is exiting
        if worker.process.exitcode is None:
            _kill_tree(worker)
        worker.conn.close()
        return "ok" if worker.message[0] == "ok" else "error"
    if worker.process.exitcode is not None:
        _receive(worker)  # an answer sent just before exiting
        worker.conn.close()
        if worker.message is not None:
            return "ok" if worker.message[0] == "ok" else "error"
        return "crashed"
    if time.monotonic() >= worker.deadline:
        _kill_tree(worker)
        worker.conn.close()
        return "timeout"
    return None


def _receive(worker: _Running) -> None:
    if worker.message is not None or worker.closed:
        return
    try:
        if worker.conn.poll():
            worker.message = worker.conn.recv()
    except (EOFError, OSError):
        worker.closed = True  # the worker died before (or while) answering


def _failure_message(
    worker: _Running, status: JobStatus, job: EvalJob, executor: LocalExecutor, duration: float
) -> str:
    if status == "timeout":
        head = f"job cancelled at its timeout after {duration:.1f}s ({job.describe()})"
    elif status == "error" and worker.message is not None:
        head = f"the worker raised outside the run: {worker.message[1]}"
    else:
        code = worker.process.exitcode
        how = (
            f"killed by {signal.Signals(-code).name}"
            if code is not None and code < 0
            else f"exit code {code}"
        )
        retry = " (retried)" if worker.attempt <= executor.retries else ""
        head = f"worker process {worker.process.pid} died without answering: {how}{retry}"
    tail = _tail(worker.log)
    return head + (f"\nworker output (tail):\n{tail}" if tail else "")


def _tail(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")[-LOG_TAIL_CHARS:].strip()
    except OSError:
        return ""


def _worker_main(
    evaluator: Evaluator, job: EvalJob, conn: Connection, log: Path, parent: int
) -> None:
    """In the forked worker: run the job and send ("ok", record JSON) or ("error", text).

    A worker whose parent is gone or stopping (its log directory removed, its pipe closed)
    exits quietly with status 1: it never prints into the parent's terminal."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides; it kills us if need be
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not the CLI's SIGTERM-as-Ctrl-C handler
    _die_with_parent(parent)
    try:
        _redirect_output(log)
    except OSError:  # the parent removed its scratch directory: it is stopping
        os._exit(1)
    try:
        record = evaluator.run_job(job)
        message = ("ok", record.model_dump_json())
    except BaseException as exc:  # noqa: BLE001  the worker's boundary: sent back as data
        message = ("error", f"{type(exc).__name__}: {exc}\n{traceback.format_exc()[-1500:]}")
    try:
        conn.send(message)
        conn.close()
    except OSError:  # the parent stopped listening
        os._exit(1)


_INTERRUPTS = (signal.SIGINT, signal.SIGTERM)


@contextlib.contextmanager
def _interrupts_held() -> Iterator[None]:
    """Hold Ctrl-C and SIGTERM while a worker is forked: Python runs fork hooks (logging's)
    in the parent, and a KeyboardInterrupt raised inside one is printed and dropped, so the
    run would go on. Held signals are noted and raised again just after the fork, under the
    handlers there were. Main thread only (the only one that may set handlers)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous = {signum: signal.signal(signum, _noter(caught)) for signum in _INTERRUPTS}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        for held in dict.fromkeys(caught):
            signal.raise_signal(held)


def _noter(caught: list[int]) -> Callable[[int, object], None]:
    def note(signum: int, _frame: object) -> None:
        caught.append(signum)

    return note


def _die_with_parent(parent: int) -> None:
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the parent died before the line above took effect
        os._exit(1)


def _redirect_output(log: Path) -> None:
    """Send everything the worker (and its children) print to its own log file."""
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", encoding="utf-8", closefd=False)  # noqa: SIM115


def _kill_tree(worker: _Running) -> None:
    """Stop the worker, then SIGKILL it and every process under it, and reap it.

    Only while the worker is unreaped (alive or a zombie) does its pid surely name it; once
    reaped the pid may be reused, so nothing is killed (what it left behind was re-parented
    and can no longer be told apart)."""
    pid = worker.process.pid
    if pid is None or worker.process.exitcode is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGSTOP)  # no new children while the tree is read
    for victim in [pid, *process_descendants(pid)]:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(victim, signal.SIGKILL)
    worker.process.join(timeout=10)
