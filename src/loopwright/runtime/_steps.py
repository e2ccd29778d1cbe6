"""Function nodes and gate checks: the `Fn` and `Check` protocols, their `@fn` and `@check`
registries, and the built-in ones. Registered on import."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Protocol

from loopwright.errors import ConfigError, SandboxError
from loopwright.runtime._commands import run_visible_tests
from loopwright.runtime._context import StepResult, ToolContext
from loopwright.runtime._registry import Registry
from loopwright.sandbox import Workspace
from loopwright.workflow import ArgValue

__all__ = ["CHECKS", "FUNCTIONS", "Check", "Fn", "changed_files", "check", "fn"]


class Fn(Protocol):
    """A function node's body. One verb: run it with the node's `args`; `passed` False makes
    the node end "failed" (recorded; the run goes on). May raise: the runner records it."""

    def __call__(self, ctx: ToolContext, args: Mapping[str, ArgValue]) -> StepResult: ...


class Check(Protocol):
    """A gate's check. One verb: decide; a failed result's `detail` is the RELOOP feedback."""

    def __call__(self, ctx: ToolContext) -> StepResult: ...


FUNCTIONS: Registry[Fn] = Registry("function")
CHECKS: Registry[Check] = Registry("check")


def fn(name: str) -> Callable[[Fn], Fn]:
    """Register a Fn under `name` in FUNCTIONS (the name FnNodes give as `fn`)."""
    return FUNCTIONS.register(name)


def check(name: str) -> Callable[[Check], Check]:
    """Register a Check under `name` in CHECKS (the name gates give as `check`)."""
    return CHECKS.register(name)


def _only(args: Mapping[str, ArgValue], name: str, allowed: frozenset[str]) -> None:
    extra = sorted(set(args) - allowed)
    if extra:
        raise ConfigError(
            f"function {name} got unknown args {extra}",
            fix=f"it takes: {', '.join(sorted(allowed)) or 'no args'}",
        )


def changed_files(ctx: ToolContext) -> list[str]:
    """Workspace files added, modified or deleted since the run's base commit (via git).
    Raises SandboxError when the workspace had no base commit or git fails."""
    if ctx.base_commit is None:
        raise SandboxError(f"{ctx.workspace} is not a workspace with a base commit")
    return Workspace(ctx.workspace, ctx.base_commit).changed_files()


def _tests_failed_feedback(text: str) -> str:
    return f"The visible tests do not pass.\n{text}"


@fn("run_visible_tests")
def fn_run_visible_tests(ctx: ToolContext, args: Mapping[str, ArgValue]) -> StepResult:
    """Run the visible tests (optional arg `path`); passed when they exit 0. The detail is
    the exit code and the output tail. (`verbose` is accepted and has no effect.)"""
    _only(args, "run_visible_tests", frozenset({"path", "verbose"}))
    path = args.get("path")
    report = run_visible_tests(ctx, None if path is None else str(path))
    return StepResult(report.ok, report.text)


@fn("check_diff_nonempty")
def fn_check_diff_nonempty(ctx: ToolContext, args: Mapping[str, ArgValue]) -> StepResult:
    """Passed when the workspace differs from its base commit; the detail lists the files."""
    _only(args, "check_diff_nonempty", frozenset())
    return _diff_nonempty(ctx)


@fn("collect_notes")
def fn_collect_notes(ctx: ToolContext, args: Mapping[str, ArgValue]) -> StepResult:
    """Append the files changed so far to the run's notes, so later nodes see what earlier
    ones did. Always passes."""
    _only(args, "collect_notes", frozenset())
    files = changed_files(ctx)
    text = "Files changed so far: " + (", ".join(files) if files else "none")
    ctx.add_notes(text)
    return StepResult(True, text)


@check("visible_tests_pass")
def check_visible_tests_pass(ctx: ToolContext) -> StepResult:
    """Run the visible tests; passed on exit code 0, else the feedback is their output tail."""
    report = run_visible_tests(ctx)
    return (
        StepResult(True, report.text)
        if report.ok
        else StepResult(False, _tests_failed_feedback(report.text))
    )


@check("diff_nonempty")
def check_diff_nonempty(ctx: ToolContext) -> StepResult:
    """Passed when the workspace differs from its base commit."""
    return _diff_nonempty(ctx)


def _diff_nonempty(ctx: ToolContext) -> StepResult:
    files = changed_files(ctx)
    if files:
        return StepResult(True, "changed: " + ", ".join(files))
    return StepResult(False, "No file in the workspace was changed: the task is not done yet.")
