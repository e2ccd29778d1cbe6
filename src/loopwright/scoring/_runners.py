"""The grader kinds besides pytest, chosen by a task's `[grading]` table: `unittest` (its
verbose output parsed) and `command` (any language: a junit file, a reward file, or the exit
code), and `grader_for`, which picks a task's kind.

Both run in the pytest grader's frame (scoring/_frame.py): the hidden tests restored and hooks
neutralised (`restore_tests`), one run in the grader's sandbox with the grade timeout, never
raising; each gives only its command and how to read it. What
they cannot do is what the pytest grader's guard plugin and canaries do: watch the test process
from inside. docs/task-format.md ("[grading]") says what holds against a hostile agent.
"""

from __future__ import annotations

import functools
import math
from pathlib import Path

from loopwright.sandbox import CommandResult, Sandbox
from loopwright.scoring._frame import RunGrader, RunnerGrading, Step, Verdict
from loopwright.scoring._function import FunctionGrader
from loopwright.scoring._grader import PytestGrader
from loopwright.scoring._junit import JunitReport, parse_junit
from loopwright.scoring._protocol import Grader
from loopwright.scoring._result import TAMPER_PREFIX
from loopwright.scoring._unittest import UnittestReport, parse_unittest
from loopwright.tasks import GradingTable, Task

__all__ = ["OUTPUT_ENV", "CommandGrader", "RunnerGrading", "UnittestGrader", "grader_for"]

OUTPUT_ENV = "LOOPWRIGHT_OUTPUT"
"""The variable naming the command's private output directory (outside the workspace, fresh
and empty for every grade): where `junit` and `reward` files are read from."""

_REWARD_CAP = 64  # bytes: a reward file holds one number
_ENV = {"LANG": "C.UTF-8", "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1"}


def grader_for(task: Task, sandbox: Sandbox | None = None) -> Grader:
    """The grader of the kind `task.toml`'s `[grading] runner` names, running in `sandbox`
    (default: the default sandbox): pytest (the default), unittest, command or function."""
    runner = task.spec.grading.runner
    if runner == "function":
        return FunctionGrader(sandbox)
    if runner == "unittest":
        return UnittestGrader(sandbox)
    if runner == "command":
        return CommandGrader(sandbox)
    return PytestGrader(sandbox)


class UnittestGrader(RunGrader):
    """Runs `python -m unittest -v -b` on the modules of the task's test ids (`pkg.mod.Class.test`
    -> `pkg.mod`) in the workspace, and reads per-test outcomes from its verbose output.

    Invalid when the run timed out, printed no results or more than the output cap, or ended
    without its `Ran N tests` summary (the code under test cut it short: `tamper:`), or when
    the number of tests its lines name differs from that N, or its exit code contradicts the
    outcomes it printed (both `tamper:`: lines were forged)."""

    name = "unittest"

    def _step(
        self, workspace: Path, task: Task, private: Path, conftests: tuple[Path, ...]
    ) -> Step:
        modules = list(dict.fromkeys(test_id.rsplit(".", 2)[0] for test_id in task.test_ids))
        return Step(
            [self.python, "-B", "-E", "-s", "-m", "unittest", "-v", "-b", *modules],
            _ENV,
            _read_unittest,
        )


def _read_unittest(result: CommandResult) -> Verdict:
    parsed = parse_unittest(result.stderr)
    return Verdict(result, _unittest_problem(result, parsed), parsed.report)


def _unittest_problem(result: CommandResult, parsed: UnittestReport) -> str | None:
    report = parsed.report
    if result.timed_out:
        return f"unittest timed out after {result.duration_s:.0f}s (the grade timeout)"
    if result.truncated:
        return "unittest's output was cut at the output cap: its results cannot be read"
    if parsed.ran is None:
        return (
            f"{TAMPER_PREFIX} the test process ended before unittest finished "
            f"(exit code {result.exit_code}): the code under test stopped it"
        )
    if parsed.ran != parsed.reported:
        return (
            f"{TAMPER_PREFIX} unittest ran {parsed.ran} tests but its output names "
            f"{parsed.reported}: test lines were forged"
        )
    if report.empty:
        return f"no test results parsed (exit code {result.exit_code})"
    if result.exit_code == 0 and report.any_failure:
        return f"{TAMPER_PREFIX} exit code 0 but unittest reported failures"
    if result.exit_code != 0 and not report.any_failure:
        return f"{TAMPER_PREFIX} exit code {result.exit_code} but unittest reported no failure"
    return None


class CommandGrader(RunGrader):
    """Runs the task's `[grading] command` with `sh -c` in the workspace, with `$PYTHON` (the
    sandbox's interpreter) and `$LOOPWRIGHT_OUTPUT` (a fresh private directory outside the
    workspace, the one place besides the workspace it may write) set.

    Per-test outcomes come from the junit XML file `junit` under `$LOOPWRIGHT_OUTPUT` (ids
    `classname.name`), or the score from the reward file `reward` there (a number in [0, 1];
    resolved at 1.0), or with neither from the exit code (0: 1.0, else 0.0). A timed-out run
    and a junit or reward file that is missing or garbled make the grade invalid, not zero.
    """

    name = "command"

    def _step(
        self, workspace: Path, task: Task, private: Path, conftests: tuple[Path, ...]
    ) -> Step:
        table = task.spec.grading
        out = private / "out"
        out.mkdir()
        return Step(
            ["sh", "-c", table.command or "false"],
            {**_ENV, "PYTHON": self.python, OUTPUT_ENV: str(out)},
            functools.partial(_read_command, table, out),
            writable=(out,),
        )


def _read_command(table: GradingTable, out: Path, result: CommandResult) -> Verdict:
    """The junit file's per-test outcomes, else the reward file's score, else the exit code's."""
    if table.junit is not None:
        report, reason = _read_junit(out, table.junit, result)
        return Verdict(result, reason, report)
    if table.reward is not None:
        value, reason = _read_reward(out, table.reward, result)
        return Verdict(result, reason, value=value)
    return Verdict(result, _timeout(result), value=1.0 if result.exit_code == 0 else 0.0)


def _timeout(result: CommandResult) -> str | None:
    if result.timed_out:
        return f"the grading command timed out after {result.duration_s:.0f}s (the grade timeout)"
    return None


def _read_junit(
    out: Path, rel: str, result: CommandResult
) -> tuple[JunitReport | None, str | None]:
    reason = _timeout(result)
    if reason is not None:
        return None, reason
    path = out / rel
    if not path.is_file():
        return (
            None,
            f"the command wrote no junit XML at ${OUTPUT_ENV}/{rel} (exit code {result.exit_code})",
        )
    try:
        report = parse_junit(path, node_ids=False)
    except ValueError as exc:
        return None, str(exc)
    if report.empty:
        return report, f"no test results in the junit XML (exit code {result.exit_code})"
    return report, None


def _read_reward(out: Path, rel: str, result: CommandResult) -> tuple[float, str | None]:
    reason = _timeout(result)
    if reason is not None:
        return 0.0, reason
    path = out / rel
    if not path.is_file():  # a regular file: a FIFO or a device is never read
        return (
            0.0,
            f"the command wrote no reward file at ${OUTPUT_ENV}/{rel} (exit code {result.exit_code})",
        )
    with path.open("rb") as handle:
        raw = handle.read(_REWARD_CAP + 1)
    try:
        value = float(raw.decode("utf-8").strip())
    except (UnicodeDecodeError, ValueError):
        value = math.nan
    if len(raw) > _REWARD_CAP or not 0.0 <= value <= 1.0:
        return 0.0, f"the reward file does not hold a number in [0, 1]: {raw[:_REWARD_CAP]!r}"
    return value, None
