"""Grading a workspace with a brief's hidden checks, and grading the briefs themselves.

`run_checks` runs `_checkrun.py` in the sandbox with the workspace on its import path: the
checks import the produced code and call it. Correctness is the fraction of checks passed.
`validate_brief` grades the untouched seed, the known-good and every known-bad solution, so
that a brief whose checks cannot tell right from wrong is caught before it measures anything.
"""

from __future__ import annotations

import json
import secrets
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from loopwright.harness._briefs import Brief
from loopwright.harness._rubric import CORRECTNESS_GATE_FLOOR
from loopwright.sandbox import Sandbox, create_workspace, remove_workspace
from loopwright.tasks import apply_overlay

__all__ = ["BriefValidation", "CheckOutcome", "CheckReport", "run_checks", "validate_brief"]

RUNNER = Path(__file__).with_name("_checkrun.py")
_RUNNER_SOURCE = RUNNER.read_text(encoding="utf-8")
PER_CHECK_S = 10.0
_TAIL = 1_000


class CheckOutcome(BaseModel):
    """One hidden check: passed, or the error it failed with."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    passed: bool
    error: str | None = None


@dataclass(frozen=True, slots=True)
class CheckReport:
    """Every check of the brief, in file order (a check that never ran counts as failed)."""

    checks: tuple[CheckOutcome, ...]

    @property
    def correctness(self) -> float:
        """Checks passed over checks owed, in [0, 1]."""
        return sum(c.passed for c in self.checks) / len(self.checks)


def run_checks(brief: Brief, workspace: Path, sandbox: Sandbox) -> CheckReport:
    """Grade `workspace` with the brief's hidden checks, in `sandbox`, within the brief's
    `check_timeout_s` (each check at most PER_CHECK_S). Never raises for what the produced code
    does: a crash, a hang or missing output fails the checks that did not report. Deterministic
    for deterministic produced code."""
    nonce = secrets.token_hex(16)
    per_check = min(PER_CHECK_S, brief.spec.check_timeout_s)
    python = sandbox.python or sys.executable  # a container sandbox runs its own Python
    argv = [python, "-I", "-S", "-c", _RUNNER_SOURCE, str(workspace), f"{per_check:g}"]
    source = brief.checks_file.read_text(encoding="utf-8")
    result = sandbox.run(
        argv, cwd=workspace, timeout_s=brief.spec.check_timeout_s, stdin=f"{nonce}\n{source}"
    )
    reported = _parse(result.stdout, nonce)
    if result.timed_out:
        missing = f"the checks were killed after {brief.spec.check_timeout_s:g}s"
    else:
        missing = f"did not run (exit code {result.exit_code}): {result.stderr[-_TAIL:].strip()}"
    outcomes = tuple(
        reported.get(name) or CheckOutcome(name=name, passed=False, error=missing)
        for name in brief.checks
    )
    return CheckReport(outcomes)


def _parse(stdout: str, nonce: str) -> dict[str, CheckOutcome]:
    lines = [line for line in stdout.splitlines() if line.startswith(nonce)]
    if not lines:
        return {}
    try:
        raw = json.loads(lines[-1][len(nonce) :])
        outcomes = [CheckOutcome.model_validate(item) for item in raw["checks"]]
    except (ValueError, KeyError, TypeError):
        return {}
    return {o.name: o for o in outcomes}


class BriefValidation(BaseModel):
    """How the brief's checks grade its seed, its known-good and its known-bad solutions, and
    the problems found: `ok` when the good one scores 1.0, every bad one less, and the
    untouched seed below the correctness gate."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    brief: str
    seed: float
    good: float
    bad: dict[str, float]
    problems: list[str]

    @property
    def ok(self) -> bool:
        return not self.problems


def validate_brief(brief: Brief, sandbox: Sandbox) -> BriefValidation:
    """Grade the seed, the solution and each flawed overlay, each in a fresh workspace."""
    seed = _grade(brief, sandbox, None)
    good = _grade(brief, sandbox, brief.solution_dir)
    bad = {f.name: _grade(brief, sandbox, brief.flawed_dir(f.name)) for f in brief.spec.flawed}
    problems = []
    if good < 1.0:
        problems.append(f"the known-good solution scores {good:.3f}, not 1.0")
    problems += [
        f"the checks cannot tell the known-bad {name!r} from the known-good (it scores 1.0)"
        for name, score in bad.items()
        if score >= 1.0
    ]
    if seed >= CORRECTNESS_GATE_FLOOR:
        problems.append(
            f"the untouched seed already scores {seed:.3f} (gate {CORRECTNESS_GATE_FLOOR})"
        )
    return BriefValidation(brief=brief.id, seed=seed, good=good, bad=bad, problems=problems)


def _grade(brief: Brief, sandbox: Sandbox, overlay: Path | None) -> float:
    scratch = Path(tempfile.mkdtemp(prefix="lw-brief-"))
    try:
        workspace = create_workspace(brief.repo_dir, scratch)
        try:
            if overlay is not None:
                apply_overlay(overlay, workspace.path)
            return run_checks(brief, workspace.path, sandbox).correctness
        finally:
            remove_workspace(workspace)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
