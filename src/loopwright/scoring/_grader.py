"""The pytest grader: restore the tests, run pytest in the sandbox, parse junit, score with partial
credit. The default implementation of the Grader protocol (scoring/_protocol.py); the frame it
shares with the other kinds is scoring/_frame.py."""

from __future__ import annotations

import functools
import hashlib
import os
import shlex
import stat
import sys
from dataclasses import dataclass
from pathlib import Path

from loopwright._fs import read_regular
from loopwright.sandbox import CommandResult
from loopwright.scoring._frame import RunGrader, RunnerGrading, Step, Verdict
from loopwright.scoring._guard import guard_verdict
from loopwright.scoring._junit import JunitReport, Outcome, parse_junit
from loopwright.scoring._kit import BOOT, RECORD_ENV, Kit, write_kit
from loopwright.scoring._precompile import precompiled
from loopwright.tasks import Task, node_files

__all__ = ["PytestGrader", "PytestGrading"]

# pytest's exit codes: 0 all passed, 1 some failed, 2 interrupted, 3 internal error,
# 4 usage error, 5 no tests collected.
_EXIT_MEANING = {2: "interrupted", 3: "internal error", 4: "usage error", 5: "no tests collected"}

PytestGrading = RunnerGrading
"""One task's grading by a PytestGrader (the grading every runner kind shares)."""


@dataclass(frozen=True, slots=True)
class _Run:
    result: CommandResult
    report: JunitReport | None
    problem: str | None  # why the junit could not be read
    tamper: str | None = None  # what the guard and the canaries say was forged, if anything


class PytestGrader(RunGrader):
    """Grades a workspace against a task's hidden tests, run by pytest (the `Grader` protocol's
    default kind, "pytest"). One PytestGrader may grade many workspaces.

    The rules are the anchors' (SWE-bench, FeatureBench): tests restored from the task, agent
    hooks removed, pytest run with the grader's own config (`-c`, so agent ini files are inert),
    isolated Python (`-I`: no PYTHONPATH, no user site), plugin autoload off, the workspace last
    on `sys.path` (nothing in it can shadow a module pytest or the standard library provides),
    no conftest above the workspace, no bytecode read from or written to the workspace, junit
    (xunit1) written to a fresh private directory and parsed with the standard library. A guard
    plugin and canary tests from a private read-only kit detect a run the code under test
    forged or cut short: such a grade is invalid with a reason starting `tamper:`.
    Grading never raises: any failure, a bad workspace included, is an invalid grade saying why.
    """

    name = "pytest"

    def outcomes(
        self, workspace: Path, task: Task, conftests: tuple[Path, ...] = ()
    ) -> tuple[dict[str, Outcome], str | None]:
        """Every case the grader's run of `task` in `workspace` reports, by junit id, with no
        invalid reason; or ({}, why the run is invalid). The tests must be restored already
        (`restore_tests`; `conftests` its conftest list). The same run as `grade` (sandbox,
        private kit, guard, junit parsing, invalid-run rules) for a caller that does not know
        the test ids yet (mining), so it scores nothing. Raises what the run raises."""
        verdict = self.verdict(workspace.resolve(), task, conftests)
        if verdict.reason is not None or verdict.report is None:
            return {}, verdict.reason or "no junit report"
        return {case_id: case.outcome for case_id, case in verdict.report.cases.items()}, None

    def _step(
        self, workspace: Path, task: Task, private: Path, conftests: tuple[Path, ...]
    ) -> Step:
        seen = self.sandbox.visible
        tests = node_files(task.test_ids)
        rels = [p.relative_to(workspace) for p in conftests]
        helpers = _helpers(workspace, task, {*tests, *map(str, rels)})
        restored = _contents(workspace, [*tests, *(p.as_posix() for p in rels), *helpers])
        digests = {rel: hashlib.sha256(data).hexdigest() for rel, data in restored.items()}
        compiled = None
        if self.sandbox.environment is None and self.python == sys.executable:
            # The graded Python is this one: its test and conftest files compiled here, once.
            compiled = precompiled(data for rel, data in restored.items() if rel not in helpers)
        tracing = "frame-inspection" in task.spec.grading.allow
        kit = write_kit(private, rels, tests, helpers, digests, compiled, tracing)
        environment = self.sandbox.environment
        paths = environment.import_paths(seen(workspace)) if environment else [seen(workspace)]
        flags = ["-I", "-S", "-B"] if environment else ["-I", "-B"]
        return Step(
            [self.python, *flags, "-c", BOOT, str(kit.directory), "\n".join(paths), kit.plugin,
             *self._pytest_args(seen(workspace), task, kit)],
            {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "LANG": "C.UTF-8", "PYTHONHASHSEED": "0",
             RECORD_ENV: str(kit.record)},
            functools.partial(_read, kit, tuple(task.test_ids)),
            writable=(kit.out,),
            readonly=(kit.directory,),
            channel=True,
        )  # fmt: skip

    def _pytest_args(self, workspace: str, task: Task, kit: Kit) -> list[str]:
        extra = shlex.split(task.spec.test_cmd)[3:]  # after "python -m pytest"
        return [
            *extra,
            "-c",
            str(kit.ini),
            "--rootdir",
            workspace,
            "--confcutdir",
            workspace,
            "--import-mode=append",
            "-p",
            "no:cacheprovider",
            "-p",
            "pytest_timeout",
            f"--timeout={task.spec.timeouts.per_test:g}",
            "-o",
            "junit_family=xunit1",
            f"--junitxml={kit.junit}",
            "--continue-on-collection-errors",
            "-q",
            *node_files(task.test_ids),
        ]


def _contents(workspace: Path, rels: list[str]) -> dict[str, bytes]:
    """Each restored file `rels` (workspace-relative) as the host reads it right after
    restoration: the guard holds what it reads as it loads to their SHA-256, so that a file
    rewritten in between (by a process left running beside the grade) is `tamper:`. A file that
    cannot be read as a regular file is left out (the guard then reads nothing of it either)."""
    found: dict[str, bytes] = {}
    for rel in rels:
        try:
            found[rel] = read_regular(workspace / rel)
        except OSError:
            continue
    return found


def _helpers(workspace: Path, task: Task, known: set[str]) -> list[str]:
    """The Python files of the task's restored test directory other than `known` (its test and
    conftest files), workspace-relative. Restoration rebuilt that directory from the task, so
    they are the task's; symlinks and special files are left out (never followed or opened)."""
    found: list[str] = []
    top = (workspace / task.spec.test_dir).resolve()
    if top == workspace:  # the whole repository: not rebuilt by restoration
        return found
    for folder, dirs, files in os.walk(top, followlinks=False):
        dirs[:] = sorted(d for d in dirs if d not in ("__pycache__", ".git"))
        for name in sorted(files):
            path = Path(folder, name)
            rel = path.relative_to(workspace).as_posix()
            if name.endswith(".py") and rel not in known and stat.S_ISREG(path.lstat().st_mode):
                found.append(rel)
    return found


def _read(kit: Kit, ids: tuple[str, ...], result: CommandResult) -> Verdict:
    """pytest's run read: its junit report (with the kit's canaries), the guard's verdict."""
    report, problem = None, None
    if not kit.junit.is_file():
        problem = "pytest wrote no junit XML"
    else:
        try:
            report = parse_junit(kit.junit, canaries=kit.canaries, files=node_files(ids))
        except ValueError as exc:
            problem = str(exc)
    run = _Run(result, report, problem, guard_verdict(kit, result, report, ids))
    return Verdict(result, _invalid_reason(run), report)


def _invalid_reason(run: _Run) -> str | None:
    result, report = run.result, run.report
    if result.timed_out:
        return f"pytest timed out after {result.duration_s:.0f}s (the grade timeout)"
    if run.tamper is not None:
        return run.tamper
    if report is None:
        return f"{run.problem} (exit code {result.exit_code})"
    if report.empty:
        return f"no test results parsed (exit code {result.exit_code})"
    code = result.exit_code
    if code in _EXIT_MEANING:
        return f"pytest exit code {code} ({_EXIT_MEANING[code]})"
    if code == 0 and report.any_failure:
        return "tamper: exit code 0 but the junit XML reports failures: results are not trustworthy"
    if code == 1 and not report.any_failure:
        return (
            "tamper: exit code 1 but the junit XML reports no failure: results are not trustworthy"
        )
    if code not in (0, 1):
        return f"pytest ended abnormally (exit code {code})"
    return None
