"""Bring your own evaluator: the `function` grader kind, a Python function registered by name.

A task whose task.toml says `[grading] runner = "function"`, `evaluator = "NAME"` is graded by
the function given to `register_evaluator("NAME", fn)` (DSPy's metric, OpenEvolve's evaluator):
it gets a `Submission` (the finished workspace) and returns an `Assessment` (a score in [0, 1],
named checks, feedback text for reflection) or a bare score. Its result becomes the same
GradeResult as any grader's (checks as tests, feedback as the grade's `feedback`, which the
record keeps and reflection reads), so records, the fitness cache and reports treat it like any
grade.

The name may instead be a reference, `package.module:function`, imported on first use (that is
how the CLI, which registers nothing, and a Ray worker find it): a name registered wins over an
import. `check_evaluators` resolves every function-graded task's evaluator before a run, so one
that cannot be found or imported is one ConfigError up front, not a run of invalid grades.

Trust: the function runs on the host, in the loopwright process (a local executor's worker is
forked from it, so a function registered before the run is there; a Ray worker gets the
registered ones shipped with its jobs, `evaluator_snapshot`/`install_evaluators`). The
workspace is the agent's: read it as untrusted data with `Submission.read_bytes` /
`read_text` (regular files inside the workspace only, never blocking, capped), and run its
code only through `Submission.run`, which runs in the task's sandbox. Never import or exec the
workspace's code in this process. docs/grading.md ("Your own evaluator") says more.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import math
import re
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from loopwright._caller import carried
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
    "EvaluatorSnapshot",
    "FunctionGrader",
    "Submission",
    "check_evaluators",
    "evaluator_key",
    "evaluator_snapshot",
    "install_evaluators",
    "register_evaluator",
    "registered_evaluators",
    "resolve_evaluator",
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


_REFERENCE = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")
REFERENCE_FIX = (
    "make it importable by the loopwright process: install its package, or put the directory "
    "holding it on PYTHONPATH (on every Ray node too)"
)


def _lookup(name: str) -> _Registered:
    """The evaluator registered under `name`, else the function the reference
    `module:attribute` names (imported now). ConfigError saying what failed and how to fix it."""
    if name in _EVALUATORS:
        return _EVALUATORS.get(name)
    if not _REFERENCE.fullmatch(name):
        known = ", ".join(registered_evaluators()) or "none"
        raise ConfigError(
            f"no evaluator is registered under {name!r}",
            got=f"registered: {known}",
            fix=f"call loopwright.register_evaluator({name!r}, fn) before the run, or name an "
            'importable function in task.toml: evaluator = "package.module:function"',
        )
    module, _, attribute = name.partition(":")
    try:
        found: object = importlib.import_module(module)
    except Exception as exc:  # noqa: BLE001  the user's module: any import failure is theirs
        raise ConfigError(
            f"the evaluator {name!r} cannot be imported",
            got=f"import {module} failed: {type(exc).__name__}: {exc}",
            fix=REFERENCE_FIX,
        ) from None
    for part in attribute.split("."):
        if not hasattr(found, part):
            raise ConfigError(
                f"the evaluator {name!r} does not exist",
                got=f"module {module} has no {attribute}",
                fix=f"define {attribute} in {module}, or correct the reference in task.toml",
            )
        found = getattr(found, part)
    if not callable(found):
        raise ConfigError(
            f"the evaluator {name!r} is not a function",
            got=type(found).__name__,
            fix="name a function taking a Submission and returning an Assessment or a float",
        )
    return _Registered(found, str(getattr(found, "evaluator_version", "1")))


def resolve_evaluator(name: str) -> EvaluatorFn:
    """The function a task's `evaluator = name` grades with: the one registered under `name`,
    else the one the reference `package.module:function` names (imported now; its optional
    `evaluator_version` attribute is its version). ConfigError when there is none, the module
    cannot be imported, or it names something that is not callable."""
    return _lookup(name).fn


def check_evaluators(tasks: Iterable[Task]) -> None:
    """Every function-graded task's evaluator resolves (`resolve_evaluator`): the first that
    does not is a ConfigError naming the task. What a run checks before it writes anything."""
    for task in tasks:
        name = task.spec.grading.evaluator
        if task.spec.grading.runner != FUNCTION_GRADER or name is None:
            continue
        try:
            _lookup(name)
        except ConfigError as exc:
            what = exc.what.replace(f"the evaluator {name!r} ", "it ")
            raise ConfigError(
                f"task {task.id} is graded by the evaluator {name!r}: {what}",
                got=exc.got,
                fix=exc.fix,
            ) from None


EvaluatorSnapshot = tuple[tuple[str, EvaluatorFn, str], ...]


def evaluator_snapshot() -> EvaluatorSnapshot:
    """The registered evaluators as (name, function, version), to ship to a process that was
    not forked from this one (a Ray worker; the function is pickled with it)."""
    return tuple(
        (n, _EVALUATORS.get(n).fn, _EVALUATORS.get(n).version) for n in _EVALUATORS.names()
    )


def install_evaluators(snapshot: EvaluatorSnapshot) -> None:
    """Register every evaluator of `snapshot` here (in a Ray worker, before its job runs)."""
    for name, fn, version in snapshot:
        register_evaluator(name, fn, version=version)


def evaluator_key(name: str) -> str:
    """What identifies the evaluator `name` resolves to in a fitness-cache key: its name,
    version and the sha256 of its source (its qualified name when the source cannot be read);
    `name:unregistered` when it does not resolve."""
    try:
        entry = _lookup(name)
    except ConfigError:
        return f"{name}:unregistered"
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
        """The task's evaluator, looked up now (`resolve_evaluator`; when it does not resolve,
        every grade says why)."""
        name = task.spec.grading.evaluator or ""
        try:
            return FunctionGrading(task, self.sandbox, name, _lookup(name))
        except ConfigError as exc:
            why = exc.what + (f" ({exc.got})" if exc.got else "") + f"; {exc.fix}"
            return FunctionGrading(task, self.sandbox, name, None, why)


@dataclass(frozen=True)
class FunctionGrading:
    """One task's grading by its evaluator function."""

    task: Task
    sandbox: Sandbox
    evaluator: str
    entry: _Registered | None
    problem: str = ""

    def grade(self, workspace: Path) -> GradeResult:
        """Call the evaluator on `workspace` within the grade timeout plus HOST_MARGIN_S.
        Never raises: a missing evaluator, one that raises, returns something else than an
        Assessment or a score in [0, 1], or does not return in time gives an invalid grade
        whose reason starts `grading failed:`."""
        if self.entry is None:
            return self._failed(self.problem)
        started = time.perf_counter()
        deadline = self.task.spec.timeouts.grade + HOST_MARGIN_S
        box: list[Assessment | BaseException] = []

        def call() -> None:
            box.append(self._call(workspace))

        worker = threading.Thread(
            target=carried(call),
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
