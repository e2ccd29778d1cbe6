"""Scripted adversaries against the local sandbox (class 8 of issue 29): unsandboxed, the agent
can reach the task directory itself (task.toml, instruction.md, solution/, flawed/, repo/), and
can kill the process reaper so that a daemon outlives its command into grading."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from loopwright.evaluation import TaskRunSpec, run_task
from loopwright.models import DEFAULT_PRICES, ScriptedModel, ToolCall
from loopwright.records import CycleRecord
from loopwright.sandbox import LocalSandbox
from loopwright.sandbox._process import reaper_supported
from loopwright.tasks import Task, load_task
from tests.evaluation.test_hostile_runs import workflow
from tests.sandbox.conftest import processes_with, sleep_marker
from tests.sandbox.test_local_reaper import kill_all_with, scrubbed_daemon_command
from tests.taskfactory import GOLD, make_calc_task

# Every hidden test of make_calc_task, by its id, passing (no single quote: a shell argument).
PASSING_STUBS = """import pytest


def test_mul():
    pass


@pytest.mark.parametrize("a", [1, 2], ids=["six by [3]", "one by four"])
def test_div(a):
    pass


def test_div_by_zero():
    pass


class TestMulCase:
    def test_mul_zero(self):
        pass

    def test_mul_table(self):
        pass
"""

# PASSING_STUBS for `printf '...'` inside `sh -c "..."`: newlines as \n, double quotes escaped.
STUB_TESTS = PASSING_STUBS.replace("\n", "\\n").replace('"', '\\"')


def _tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink() and "__pycache__" not in p.parts
    }


def _run(task: Task, run_dir: Path, *commands: str, gold: bool = False) -> CycleRecord:
    calls = [ToolCall.make("w", "write_file", path="calc/core.py", content=GOLD)] if gold else []
    calls += [ToolCall.make(f"c{i}", "run_command", command=c) for i, c in enumerate(commands)]
    calls.append(ToolCall.make("f", "finish", summary="done"))
    spec = TaskRunSpec(
        workflow=workflow(),
        task=task,
        model=ScriptedModel(calls),
        sandbox=LocalSandbox(),
        prices=DEFAULT_PRICES,
        run_dir=run_dir,
        run_id="local",
        seed=1,
    )
    return run_task(spec)


@pytest.fixture
def task(tmp_path: Path) -> Task:
    return make_calc_task(tmp_path / "bench")


def test_rewriting_any_file_of_the_task_directory_is_tamper_and_repaired(
    task: Task, tmp_path: Path
) -> None:
    before = _tree(task.root)
    root = task.root
    poison = " && ".join(
        [
            f"echo 'fail_to_pass = []' >> {root}/task.toml",
            f"echo 'Do nothing.' > {root}/instruction.md",
            f"echo 'def mul(a, b): return 0' > {root}/solution/calc/core.py",
            f"cp {root}/solution/calc/core.py {root}/flawed/only-mul/calc/core.py",
            f"echo '# planted' >> {root}/repo/calc/core.py",
            f"echo 'x = 1' > {root}/repo/calc/planted.py",
            f"rm {root}/repo/tests/test_add.py",
            f"python3 -c \"import os; os.mkfifo('{root}/repo/pyproject.toml')\"",
        ]
    )
    record = _run(task, tmp_path / "run", poison, gold=True)
    assert record.grade is not None and record.tampered, record.grade
    reason = record.grade.invalid_reason or ""
    assert "the agent rewrote the task's own files" in reason
    assert "instruction.md" in reason and "could not be put back" not in reason
    assert _tree(task.root) == before  # every file put back, the planted ones gone
    assert not (task.root / "repo" / "pyproject.toml").exists()
    assert load_task(task.root).spec == task.spec
    later = _run(task, tmp_path / "later", gold=True)
    assert later.grade is not None and (later.grade.score, later.grade.invalid) == (1.0, False)


@pytest.mark.skipif(not reaper_supported(), reason="the reaper needs Linux and /proc")
@pytest.mark.skipif(shutil.which("setsid") is None, reason="needs util-linux setsid")
def test_a_daemon_that_kills_the_reaper_cannot_rewrite_the_tests_during_grading(
    task: Task, tmp_path: Path
) -> None:
    """The daemon keeps writing passing stubs over the hidden test file (which restoration
    writes just before pytest runs); the command kills its reaper so the daemon survives it."""
    target = "tests/test_ops_hidden.py"
    loop = f"while true; do printf '{STUB_TESTS}' > {target}; sleep 0.02; done"
    command = f'setsid sh -c "{loop}" & sleep 0.2; kill -9 $PPID'
    started = time.monotonic()
    record = _run(task, tmp_path / "run", command)
    assert record.grade is not None
    assert record.grade.score == 0.0, (record.grade.score, time.monotonic() - started)
    assert not record.grade.resolved


@pytest.mark.skipif(not reaper_supported(), reason="the reaper needs Linux and /proc")
def test_a_daemon_that_kills_the_reaper_and_drops_what_it_inherited_cannot_forge_the_grade(
    task: Task, tmp_path: Path
) -> None:
    """The daemon kills the reaper, closes every descriptor (0..1023), re-executes itself with an
    empty environment in `/`, then keeps writing passing stubs over the hidden test file while it
    is restored and run. It must be dead before grading (on the old code it survived: 1.0)."""
    marker = sleep_marker()
    command = scrubbed_daemon_command(marker, "tests/test_ops_hidden.py", PASSING_STUBS)
    try:
        record = _run(task, tmp_path / "run", command)
        alive = processes_with(marker)
    finally:
        kill_all_with(marker)
    assert alive == [], "the daemon survived into grading"
    assert record.grade is not None
    assert record.grade.score == 0.0 or record.tampered, record.grade
    assert not record.grade.resolved
