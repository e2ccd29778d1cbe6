"""Check a benchmark's tasks: gold must resolve at 1.0; flawed variants and the untouched repo must not.

Used by `loopwright bench validate`. Each variant is graded in a fresh workspace, exactly as an
agent's work would be.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from loopwright.errors import LoopwrightError
from loopwright.sandbox import (
    DockerSandbox,
    EnvironmentCache,
    ImageBuilder,
    Sandbox,
    TaskEnvironment,
    attach_task_container,
    create_workspace,
    remove_workspace,
    task_environment,
)
from loopwright.scoring._frame import RunGrader
from loopwright.scoring._grader import PytestGrader
from loopwright.scoring._guard import failed_grade
from loopwright.scoring._protocol import Grader
from loopwright.scoring._result import GradeResult
from loopwright.scoring._runners import grader_for
from loopwright.tasks import Benchmark, Task, apply_overlay

__all__ = [
    "GOLD",
    "UNTOUCHED",
    "VariantCheck",
    "build_environment",
    "grade_variant",
    "task_variants",
    "validate_benchmark",
]

GOLD = "gold"
UNTOUCHED = "untouched"


@dataclass(frozen=True, slots=True)
class VariantCheck:
    """One (task, variant) graded, with the expectation it was held to and whether it held."""

    task_id: str
    variant: str  # "gold", "untouched", or a flawed variant's name
    kind: str  # "gold", "untouched", or the flawed variant's failure kind
    expectation: str
    grade: GradeResult | None
    ok: bool
    problem: str | None = None


def task_variants(task: Task) -> list[tuple[str, str, Path | None]]:
    """(variant, kind, overlay) for every variant `bench validate` grades: gold, flawed..., untouched."""
    variants: list[tuple[str, str, Path | None]] = []
    if task.gold is not None:
        variants.append((GOLD, GOLD, task.gold))
    variants += [(v.name, v.kind.value, task.flawed_dir(v.name)) for v in task.spec.flawed]
    variants.append((UNTOUCHED, UNTOUCHED, None))
    return variants


def grade_variant(
    task: Task,
    overlay: Path | None,
    grader: Grader,
    parent: Path,
    environment: TaskEnvironment | None = None,
) -> GradeResult:
    """Grade the task's repo with `overlay` applied (None: untouched) in a fresh workspace, with
    any grader kind, in the task's built `environment` when given (the pytest grader's kind:
    others grade in their own sandbox). A task whose hidden material cannot be read gets an
    invalid grade."""
    workspace = create_workspace(task.repo_dir, parent)
    try:
        _attach_image(task, grader.sandbox, workspace.path)
        placed = _placed(grader, environment, workspace.path)
        try:
            grading = placed.capture(task)
        except OSError as exc:
            reason = f"grading failed: {type(exc).__name__}: {exc}"
            return failed_grade(task, reason, placed.sandbox.name)
        if overlay is not None:
            try:
                apply_overlay(overlay, workspace.path)
            except (OSError, ValueError) as exc:
                return failed_grade(task, f"the variant does not apply: {exc}", placed.sandbox.name)
        return grading.grade(workspace.path)
    finally:
        grader.sandbox.release(workspace.path)
        remove_workspace(workspace)


def _attach_image(task: Task, sandbox: Sandbox, workspace: Path) -> None:
    """Start the workspace's container from the task's image, its `dockerfile` built first when
    the engine lacks it (container sandbox only; under another sandbox, the task is graded with
    that sandbox's own interpreter)."""
    table = task.spec.environment
    if table is not None and table.container and isinstance(sandbox, DockerSandbox):
        attach_task_container(sandbox, task, workspace)


def _placed(grader: Grader, environment: TaskEnvironment | None, workspace: Path) -> Grader:
    """A test-runner grader (pytest, unittest, command) placed in the task's environment for
    `workspace`; any other as is."""
    if environment is None or not isinstance(grader, RunGrader):
        return grader
    return grader.within(environment, workspace)


def _for_task(grader: Grader, task: Task) -> Grader:
    """The grader of `task`'s runner kind in `grader`'s sandbox when `grader` is the default
    kind (pytest) and the task names another runner; `grader` otherwise."""
    if not isinstance(grader, PytestGrader) or task.spec.grading.runner == "pytest":
        return grader
    return grader_for(task, grader.sandbox)


def validate_benchmark(
    benchmark: Benchmark,
    grader: Grader,
    *,
    on_check: Callable[[VariantCheck], None] | None = None,
    environments: EnvironmentCache | None = None,
) -> list[VariantCheck]:
    """Grade every task's gold, flawed variants and untouched repo; return one check per pair.

    Gold must score 1.0 and be resolved; flawed variants and the untouched repo must score below
    1.0; an invalid grade fails its check. A pytest `grader` stands for the default kind: a
    task whose `[grading] runner` is another is graded by that kind in the same sandbox. A task
    without a gold (solution/ or solution.patch) fails a "gold" check.
    A task with a Python `[environment]` is graded in it, built first when `environments` (default:
    the default cache) does not hold it; a build that fails fails the task's checks, saying why.
    `on_check` is called as each check finishes (for progress display). Never raises on a bad task.
    """
    parent = Path(tempfile.mkdtemp(prefix="lw-validate-"))
    cache = environments or EnvironmentCache()
    try:
        checks = []
        for check in _checks(benchmark, grader, parent, cache):
            checks.append(check)
            if on_check is not None:
                on_check(check)
        return checks
    finally:
        shutil.rmtree(parent, ignore_errors=True)


def _checks(
    benchmark: Benchmark, grader: Grader, parent: Path, cache: EnvironmentCache
) -> Iterator[VariantCheck]:
    for task in benchmark.tasks:
        if task.gold is None:
            yield VariantCheck(
                task.id,
                GOLD,
                GOLD,
                "score 1.0, resolved",
                None,
                False,
                "no solution/: unvalidated (no gold to check that the tests can be passed)",
            )
        environment, problem = _environment(task, cache, grader.sandbox)
        for variant, kind, overlay in task_variants(task):
            if problem is not None:
                yield VariantCheck(
                    task.id, variant, kind, "a built environment", None, False, problem
                )
                continue
            grade = grade_variant(task, overlay, _for_task(grader, task), parent, environment)
            yield _judge(task.id, variant, kind, grade)


def build_environment(
    task: Task, cache: EnvironmentCache, sandbox: Sandbox
) -> TaskEnvironment | None:
    """The task's built Python environment for `sandbox` (None for a task without one; under the
    container sandbox, built into a derived image). A `dockerfile` image is built here
    (container sandbox only), so its failure fails the task; each run's container then starts
    from the task's image. Raises the build's LoopwrightError."""
    table = task.spec.environment
    if table is None:
        return None
    if table.container:
        if table.dockerfile is not None and isinstance(sandbox, DockerSandbox):
            ImageBuilder(sandbox.engine).ensure(task)
        return None
    return task_environment(task, sandbox, cache)


def _environment(
    task: Task, cache: EnvironmentCache, sandbox: Sandbox
) -> tuple[TaskEnvironment | None, str | None]:
    """`build_environment`, or why there is none."""
    try:
        return build_environment(task, cache, sandbox), None
    except LoopwrightError as exc:
        return None, f"environment: {exc}"


def _judge(task_id: str, variant: str, kind: str, grade: GradeResult) -> VariantCheck:
    if variant == GOLD:
        expectation = "score 1.0, resolved"
        ok = grade.score == 1.0 and grade.resolved
    else:
        expectation = "score < 1.0"
        ok = grade.score < 1.0
    problem = None
    if grade.invalid:
        ok, problem = False, f"invalid: {grade.invalid_reason}"
    elif not ok:
        problem = f"expected {expectation}, got {grade.score:.2f}" + (
            "" if grade.resolved or variant != GOLD else " (not resolved)"
        )
        problem += _collection_errors(grade)
    return VariantCheck(task_id, variant, kind, expectation, grade, ok, problem)


def _collection_errors(grade: GradeResult, shown: int = 3) -> str:
    """`; collection errors: ...` naming the first `shown` test files that could not be
    collected (the usual reason a gold scores 0), or nothing."""
    errors = grade.collection_errors
    if not errors:
        return ""
    more = f" (+{len(errors) - shown} more)" if len(errors) > shown else ""
    return "; collection errors: " + "; ".join(errors[:shown]) + more
