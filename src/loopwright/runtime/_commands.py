"""Commands an agent's tools and the runtime's checks run in the sandbox: shell and visible tests."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from loopwright.runtime._context import ToolContext
from loopwright.sandbox import CommandResult

__all__ = ["OUTPUT_TAIL_CHARS", "CommandReport", "run_shell", "run_visible_tests", "tail"]

OUTPUT_TAIL_CHARS = 8_000
"""Characters of a command's output an agent is shown (the end, where pytest's summary is)."""

_OUTPUT_CAP = 2_000_000
# The visible tests run like the grader runs them, minus the junit: no plugins from the host's
# site-packages, no bytecode or cache files left in the workspace for `produced` to report.
_TEST_ENV = {
    "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONHASHSEED": "0",
    "LANG": "C.UTF-8",
}


@dataclass(frozen=True, slots=True)
class CommandReport:
    """A command's result as an agent sees it: `text` is the exit code and the output tail."""

    exit_code: int | None
    timed_out: bool
    text: str

    @property
    def ok(self) -> bool:
        """True when the command exited 0 in time."""
        return self.exit_code == 0 and not self.timed_out


def tail(text: str, limit: int = OUTPUT_TAIL_CHARS) -> str:
    """The last `limit` characters of `text`, with a note saying how much was cut."""
    if len(text) <= limit:
        return text
    return f"[... {len(text) - limit} earlier characters cut ...]\n{text[-limit:]}"


def _report(ctx: ToolContext, result: CommandResult, timeout_s: float) -> CommandReport:
    output = result.stdout + (
        ("\n" if result.stdout else "") + result.stderr if result.stderr else ""
    )
    if result.timed_out:
        head = f"timed out after {timeout_s:.0f}s (the command was killed)"
    else:
        head = f"exit code {result.exit_code}"
    text = f"{head}\n{tail(ctx.shown(output).rstrip())}"
    return CommandReport(result.exit_code, result.timed_out, text)


def run_shell(ctx: ToolContext, command: str) -> CommandReport:
    """`sh -c command` in the workspace, in the sandbox, for at most the time the node has left;
    network only when the task allows internet. Raises ToolError when no time is left and
    SandboxError when the sandbox cannot start it."""
    timeout = ctx.time_left()
    result = ctx.sandbox.run(
        ["sh", "-c", command],
        cwd=ctx.workspace,
        timeout_s=timeout,
        output_cap=_OUTPUT_CAP,
        network=ctx.task.spec.allow_internet,
    )
    return _report(ctx, result, timeout)


def run_visible_tests(ctx: ToolContext, target: str | None = None) -> CommandReport:
    """`python -m pytest -q <target>` (default: the task's visible test_dir) with the sandbox's
    interpreter (the task environment's, a container's, else this one), in the workspace, in the
    sandbox, for at most min(time left, the task's grade timeout).

    `target` must already be checked to lie inside the workspace (see resolve_path); an
    absolute one is passed as the sandbox shows it."""
    timeout = ctx.time_left(ctx.task.spec.timeouts.grade)
    argv = [ctx.sandbox.interpreter(), "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    if target is not None and Path(target).is_absolute():
        target = ctx.sandbox.visible(Path(target))
    argv.append(target if target is not None else ctx.task.spec.test_dir)
    result = ctx.sandbox.run(
        argv,
        cwd=ctx.workspace,
        timeout_s=timeout,
        env=_TEST_ENV,
        output_cap=_OUTPUT_CAP,
        network=ctx.task.spec.allow_internet,
    )
    return _report(ctx, result, timeout)
