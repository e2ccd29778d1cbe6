"""Scripted adversaries that turn workspace names into special files (class 7 of issue 29): a FIFO
at a config file loopwright sniffs blocks any process that opens it until a writer comes. The
host must never open one: every run ends with a grade, whatever the sandbox."""

from __future__ import annotations

import dataclasses
import os
import threading
from pathlib import Path

import pytest

from loopwright._fs import SpecialFileError, read_regular
from loopwright.evaluation import TaskRunSpec, run_task
from loopwright.models import DEFAULT_PRICES, ScriptedModel, ToolCall
from loopwright.records import CycleRecord
from loopwright.sandbox import (
    BubblewrapSandbox,
    LocalSandbox,
    Sandbox,
    bubblewrap_available,
    create_workspace,
)
from loopwright.scoring import PytestGrader, _frame
from loopwright.tasks import Task, Timeouts
from tests.containers import docker_sandbox_or_skip
from tests.evaluation.test_hostile_runs import workflow
from tests.taskfactory import GOLD, make_calc_task

# How long one run may take before the check calls it hung (a run here takes a few seconds;
# the FIFO blocked loopwright's own process forever before the defence).
_HUNG_S = 120.0

SANDBOXES = [
    pytest.param("local", id="local"),
    pytest.param(
        "bubblewrap",
        id="bubblewrap",
        marks=pytest.mark.skipif(not bubblewrap_available(), reason="no bubblewrap here"),
    ),
    pytest.param("docker", id="docker", marks=pytest.mark.docker),
]
_MKFIFO = (
    "import os, sys; p = sys.argv[1]; os.makedirs(os.path.dirname(p) or '.', exist_ok=True); "
    "os.path.lexists(p) and os.remove(p); os.mkfifo(p)"
)
PLACES = ["pyproject.toml", "setup.cfg", "calc/conftest.py", "tests/conftest.py"]


def _sandbox(kind: str) -> Sandbox:
    if kind == "docker":
        return docker_sandbox_or_skip()
    return BubblewrapSandbox() if kind == "bubblewrap" else LocalSandbox()


def _run_with_deadline(spec: TaskRunSpec) -> CycleRecord:
    """run_task(spec) in a daemon thread; fails the test when it has not returned in _HUNG_S."""
    done: list[CycleRecord] = []
    worker = threading.Thread(target=lambda: done.append(run_task(spec)), daemon=True)
    worker.start()
    worker.join(_HUNG_S)
    assert done, f"the run did not end within {_HUNG_S:.0f}s: loopwright blocked on a special file"
    return done[0]


@pytest.fixture
def task(tmp_path: Path) -> Task:
    return make_calc_task(tmp_path / "bench")


@pytest.mark.parametrize("kind", SANDBOXES)
@pytest.mark.parametrize("place", PLACES)
def test_a_fifo_at_a_config_file_ends_with_a_grade(
    task: Task, tmp_path: Path, kind: str, place: str
) -> None:
    make = f"python3 -c {_MKFIFO!r} {place}"  # the test image has python3, not mkfifo
    calls = [
        ToolCall.make("w", "write_file", path="calc/core.py", content=GOLD),
        ToolCall.make("c", "run_command", command=make),
        # the runner's own tools open the FIFO too, when the agent asks them to
        ToolCall.make("r", "read_file", path=place),
        ToolCall.make("s", "search_code", pattern="anything"),
        ToolCall.make("f", "finish", summary="done"),
    ]
    spec = TaskRunSpec(
        workflow=workflow(),
        task=task,
        model=ScriptedModel(calls),
        sandbox=_sandbox(kind),
        prices=DEFAULT_PRICES,
        run_dir=tmp_path / "run",
        run_id="fifo",
        seed=1,
    )
    record = _run_with_deadline(spec)
    assert record.grade is not None, record.errors
    # the FIFO was a hook the task does not have: removed, and the gold graded as the gold
    assert not record.grade.invalid, record.grade.invalid_reason
    assert record.grade.score == 1.0
    assert f"removed {place} (added by the agent)" in record.grade.restored or place.startswith(
        "tests/"
    )
    assert (tmp_path / "run" / "grade.json").is_file()


@pytest.mark.parametrize("kind", ["fifo", "symlink to /dev/zero", "directory"])
def test_read_regular_refuses_without_blocking(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "x"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    else:
        path.symlink_to("/dev/zero")
    with pytest.raises(SpecialFileError):
        read_regular(path)


def test_read_regular_reads_a_regular_file_up_to_its_limit(tmp_path: Path) -> None:
    path = tmp_path / "x"
    path.write_bytes(b"0123456789")
    assert read_regular(path) == b"0123456789"
    assert read_regular(path, limit=4) == b"0123"


def test_a_grade_whose_host_side_blocks_ends_as_grading_failed(
    task: Task, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whatever blocks the host's own reads (a filesystem that never answers, say), the grade
    ends: after the grade timeout plus the margin it is `grading failed:`, never lost."""
    release = threading.Event()

    def blocked(*args: object, **kwargs: object) -> None:
        release.wait(60)
        raise OSError("released")

    monkeypatch.setattr(_frame, "restore_tests", blocked)
    monkeypatch.setattr(_frame, "HOST_MARGIN_S", 0.5)
    quick = dataclasses.replace(
        task, spec=task.spec.model_copy(update={"timeouts": Timeouts(grade=0.5)})
    )
    workspace = create_workspace(task.repo_dir, tmp_path)
    try:
        grade = PytestGrader(LocalSandbox()).grade(workspace.path, quick)
    finally:
        release.set()
    assert grade.invalid
    assert (grade.invalid_reason or "").startswith("grading failed: grading did not finish within")


@pytest.mark.parametrize("kind", SANDBOXES)
def test_a_tracked_file_replaced_by_a_fifo_is_tamper(task: Task, tmp_path: Path, kind: str) -> None:
    """git cannot take a diff of a FIFO: the change would be hidden behind a note. A file of the
    task's repository replaced by one is a `tamper:` grade naming it (was a valid 1.0)."""
    place = "tests/test_add.py"  # tracked; restoration puts it back, so the tests still run
    calls = [
        ToolCall.make("w", "write_file", path="calc/core.py", content=GOLD),
        ToolCall.make("c", "run_command", command=f"python3 -c {_MKFIFO!r} {place}"),
        ToolCall.make("f", "finish", summary="done"),
    ]
    spec = TaskRunSpec(
        workflow=workflow(),
        task=task,
        model=ScriptedModel(calls),
        sandbox=_sandbox(kind),
        prices=DEFAULT_PRICES,
        run_dir=tmp_path / "run",
        run_id="fifo-tracked",
        seed=1,
    )
    record = _run_with_deadline(spec)
    assert record.grade is not None, record.errors
    reason = record.grade.invalid_reason or ""
    assert record.grade.invalid and reason.startswith("tamper:"), reason
    assert place in reason
    assert record.grade.score == 0.0
