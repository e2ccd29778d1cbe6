"""Bring your own evaluator: the `function` grader kind, a Python function registered by name.

A task whose task.toml says `[grading] runner = "function"`, `evaluator = "NAME"` is graded by
the function given to `register_evaluator("NAME", fn)` (DSPy's metric, OpenEvolve's evaluator):
it gets a `Submission` (the finished workspace) and returns an `Assessment` (a score in [0, 1],
named checks, feedback text for reflection) or a bare score. Its result becomes the same
GradeResult as any grader's (checks as tests, feedback as the grade's `feedback`, which the
record keeps and reflection reads), so records, the fitness cache and reports treat it like any
grade.

Trust: the function runs on the host, in the loopwright process (a local executor's worker is
forked from it, so a function registered before the run is there; a Ray worker is not). The
workspace is the agent's: read it as untrusted data with `Submission.read_bytes` /
`read_text` (regular files inside the workspace only, never blocking, capped), and run its
code only through `Submission.run`, which runs in the task's sandbox. Never import or exec the
workspace's code in this process. docs/grading.md ("Your own evaluator") says more.
"""

from __future__ import annotations

import hashlib
import inspect
import math
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from loopwright._fs import read_regular
from loopwright.errors import ConfigError
from loopwright.registry import Registry
from loopwright.sandbox import CommandResult, Sandbox, default_sandbox
from loopwright.scoring._frame import HOST_MARGIN_S
from loopwright.scoring._guard import failed_grade
from loopwright.scoring._junit import Outcome
from loopwright.scoring._result import FEEDBACK_CHARS, GradeResult, TestResult
from loopwright.tasks import Task

__all__ = [
    "FUNCTION_GRADER",
    "Assessment",
    "Check",
    "EvaluatorFn",
    "FunctionGrader",
    "Submission",
    "evaluator_key",
    "register_evaluator",
    "registered_evaluators",
    "unregister_evaluator",
]

FUNCTION_GRADER = "function"
READ_LIMIT = 1 << 20  # bytes: what one read of a workspace file returns at most


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Check(_Strict):
    """One named check of an evaluation: recorded as a test of the grade (`message`: why it
    failed, which reflection reads)."""

    name: str = Field(min_length=1)
    passed: bool
    message: str = ""


class Assessment(_Strict):
    """What an evaluator function returns: `score` in [0, 1] (the grade's score), its `checks`
    and `feedback` (free text for reflection: the grade's and the record's `feedback`, its last
    2000 characters; reflection's digest and the offline rules quote it)."""

    score: float = Field(ge=0.0, le=1.0, allow_inf_nan=False)
    checks: tuple[Check, ...] = ()
    feedback: str = ""


@dataclass(frozen=True)
class Submission:
    """The finished workspace an evaluator grades. `root` is the agent's workspace: untrusted."""

    root: Path
    task: Task
    sandbox: Sandbox

    def read_bytes(self, rel: str, *, limit: int = READ_LIMIT) -> bytes:
        """The regular file `rel` (relative to the workspace), at most `limit` bytes. Raises
        OSError for a path that leaves the workspace (`..`, absolute, through a symlink), for
        a FIFO, a device, a symlink or a directory, and when it is missing."""
        path = self.root / rel
        if Path(rel).is_absolute() or ".." in Path(rel).parts:
            raise OSError(f"{rel!r} is not a path inside the workspace")
        if not path.parent.resolve().is_relative_to(self.root.resolve()):
            raise OSError(f"{rel!r} leads outside the workspace (through a symlink)")
        return read_regular(path, limit=limit)

    def read_text(self, rel: str, *, limit: int = READ_LIMIT) -> str:
        """`read_bytes(rel)` decoded as UTF-8 (undecodable bytes replaced)."""
        return self.read_bytes(rel, limit=limit).decode("utf-8", errors="replace")

    def run(self, argv: Sequence[str], *, timeout_s: float | None = None) -> CommandResult:
        """Run `argv` in the workspace in the task's sandbox (where the agent's code may run),
        with the task's network setting, for at most `timeout_s` (default: the grade timeout).
        Never raises because the command failed: read its exit code and output."""
        limit = self.task.spec.timeouts.grade if timeout_s is None else timeout_s
        return self.sandbox.run(
            argv, cwd=self.root, timeout_s=limit, network=self.task.spec.allow_internet
        )


EvaluatorFn = Callable[[Submission], Assessment | float]


@dataclass(frozen=True)
class _Registered:
    fn: EvaluatorFn
    version: str


_EVALUATORS: Registry[_Registered] = Registry("evaluator")


def register_evaluator(name: str, fn: EvaluatorFn, *, version: str = "1") -> None:
    """Register `fn` as the evaluator a task.toml names with `evaluator = "name"`, replacing
    any earlier one of that name. Cached grades are keyed by `name`, `version` and `fn`'s
    source: bump `version` when what `fn` depends on changes (a file it reads, a closure).
    Register before the run: a local executor's workers are forked with the registry as it
    is then. ConfigError when `fn` is not callable."""
    if not callable(fn):
        raise ConfigError(
            f"register_evaluator({name!r}, ...) needs a function",
            got=type(fn).__name__,
            fix="pass a function taking a Submission and returning an Assessment or a float",
        )
    if name in _EVALUATORS:
        _EVALUATORS.remove(name)  # re-registering (a notebook cell run again) replaces it
    _EVALUATORS.add(name, _Registered(fn, version))


def unregister_evaluator(name: str) -> None:
    """Forget the evaluator registered under `name` (nothing when there is none)."""
    if name in _EVALUATORS:
        _EVALUATORS.remove(name)


def registered_evaluators() -> tuple[str, ...]:
    """The names evaluators are registered under, sorted."""
    return _EVALUATORS.names()


def evaluator_key(name: str) -> str:
    """What identifies the evaluator registered under `name` in a fitness-cache key: its
    name, version and the sha256 of its source (its qualified name when the source cannot
    be read); `name:unregistered` when there is none."""
    if name not in _EVALUATORS:
        return f"{name}:unregistered"
    entry = _EVALUATORS.get(name)
    try:
        source = inspect.getsource(entry.fn)
    except (OSError, TypeError):
        source = getattr(entry.fn, "__qualname__", type(entry.fn).__qualname__)
    return f"{name}:{entry.version}:{hashlib.sha256(source.encode()).hexdigest()[:16]}"


class FunctionGrader:
    """Grades with the evaluator function a task's `[grading] evaluator` names; `sandbox` is
    where `Submission.run` runs (default: the default sandbox). Implements `Grader`."""

    name = FUNCTION_GRADER

    def __init__(self, sandbox: Sandbox | None = None) -> None:
        self.sandbox = sandbox or default_sandbox()

    def capture(self, task: Task) -> FunctionGrading:
        """The task's evaluator, looked up now (None when none is registered: every grade
        then says so)."""
        name = task.spec.grading.evaluator or ""
        entry = _EVALUATORS.get(name) if name in _EVALUATORS else None
        return FunctionGrading(task, self.sandbox, name, entry)


@dataclass(frozen=True)
class FunctionGrading:
    """One task's grading by its evaluator function."""

    task: Task
    sandbox: Sandbox
    evaluator: str
    entry: _Registered | None

    def grade(self, workspace: Path) -> GradeResult:
        """Call the evaluator on `workspace` within the grade timeout plus HOST_MARGIN_S.
        Never raises: a missing evaluator, one that raises, returns something else than an
        Assessment or a score in [0, 1], or does not return in time gives an invalid grade
        whose reason starts `grading failed:`."""
        if self.entry is None:
            known = ", ".join(registered_evaluators()) or "none"
            return self._failed(
                f"no evaluator is registered under {self.evaluator!r} (registered: {known}); "
                f"call loopwright.scoring.register_evaluator({self.evaluator!r}, fn) before "
                "the run"
            )
        started = time.perf_counter()
        deadline = self.task.spec.timeouts.grade + HOST_MARGIN_S
        box: list[Assessment | BaseException] = []
        worker = threading.Thread(
            target=lambda: box.append(self._call(workspace)),
            name=f"evaluate-{self.task.id}",
            daemon=True,
        )
        worker.start()
        worker.join(deadline)
        if not box:
            return self._failed(f"the evaluator did not return within {deadline:.0f}s")
        got = box[0]
        if isinstance(got, BaseException):
            return self._failed(f"{type(got).__name__}: {got}")
        return self._grade(got, time.perf_counter() - started)

    def _call(self, workspace: Path) -> Assessment | BaseException:
        assert self.entry is not None
        submission = Submission(workspace.resolve(), self.task, self.sandbox)
        try:
            return _evaluation(self.entry.fn(submission), self.evaluator)
        except Exception as exc:  # noqa: BLE001  the boundary: the user's function is data
            return exc

    def _grade(self, evaluation: Assessment, duration_s: float) -> GradeResult:
        checks = evaluation.checks
        tests = [
            TestResult(
                id=c.name,
                outcome=Outcome.PASSED if c.passed else Outcome.FAILED,
                fail_to_pass=True,
                passed=c.passed,
                message=c.message,
            )
            for c in checks
        ]
        passed = sum(c.passed for c in checks)
        return GradeResult(
            task_id=self.task.id,
            score=evaluation.score,
            resolved=evaluation.score == 1.0 and passed == len(checks),
            invalid=False,
            f2p_passed=passed,
            f2p_total=len(checks),
            p2p_passed=0,
            p2p_total=0,
            tests=tests,
            exit_code=None,
            sandbox=self.sandbox.name,
            duration_s=round(duration_s, 4),
            pytest_duration_s=round(duration_s, 4),
            output_tail=evaluation.feedback[-FEEDBACK_CHARS:],
            feedback=evaluation.feedback[-FEEDBACK_CHARS:],
        )

    def _failed(self, why: str) -> GradeResult:
        return failed_grade(
            self.task, f"grading failed: evaluator {self.evaluator!r}: {why}", self.sandbox.name
        )


def _evaluation(got: object, name: str) -> Assessment:
    """`got` as an Assessment: a bare number is the score. Raises ValueError for anything else
    and for a score outside [0, 1]."""
    if isinstance(got, Assessment):
        return got
    if isinstance(got, bool) or not isinstance(got, int | float):
        raise ValueError(
            f"returned {type(got).__name__}; expected an Assessment or a number in [0, 1]"
        )
    if not (math.isfinite(got) and 0.0 <= got <= 1.0):
        raise ValueError(f"returned the score {got!r}; expected a number in [0, 1]")
    try:
        return Assessment(score=float(got))
    except ValidationError as exc:  # pragma: no cover  checked above
        raise ValueError(f"evaluator {name!r}: {exc}") from exc
