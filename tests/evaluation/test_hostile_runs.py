"""Scripted adversaries against the run itself: an agent that destroys the evidence of its
change, scribbles in the exhaust, or plants symlinks where loopwright writes. Every run must
end as a record (never an exception that loses the other runs), and no write may leave the
run directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from loopwright.evaluation import TaskRunSpec, _task_run, run_task
from loopwright.models import DEFAULT_PRICES, ScriptedModel, ToolCall
from loopwright.records import CycleRecord, FailureCategory, load_record, read_events
from loopwright.sandbox import NO_DIFF, LocalSandbox
from loopwright.scoring import TAMPER_PREFIX
from loopwright.tasks import Task
from loopwright.workflow import Workflow, workflow_from_text
from tests.taskfactory import GOLD, make_calc_task

WORKFLOW = """
schema_version: 1
name: hostile
nodes:
  - id: builder
    kind: agent
    role: builder
    tools: [write_file, run_command, write_notes]
    max_turns: 8
    prompt: "Implement {instruction_file} in {workspace}. {rules}"
"""

RUN_FILES = ("grade.json", "record.json", "diff.patch", "notes.md", "events.jsonl")


def workflow() -> Workflow:
    return workflow_from_text(WORKFLOW, "yaml")


@pytest.fixture
def task(tmp_path: Path) -> Task:
    return make_calc_task(tmp_path / "bench")


def run(task: Task, run_dir: Path, *commands: str, notes: bool = False) -> CycleRecord:
    """One run of an agent that writes the gold solution, then runs `commands`, then ends."""
    calls = [ToolCall.make("w", "write_file", path="calc/core.py", content=GOLD)]
    if notes:
        calls.append(ToolCall.make("n", "write_notes", text="notes of the hostile agent"))
    calls += [ToolCall.make(f"c{i}", "run_command", command=c) for i, c in enumerate(commands)]
    calls.append(ToolCall.make("f", "finish", summary="done"))
    spec = TaskRunSpec(
        workflow=workflow(),
        task=task,
        model=ScriptedModel(calls),
        sandbox=LocalSandbox(),  # the unsandboxed case: the agent can reach the run directory
        prices=DEFAULT_PRICES,
        run_dir=run_dir,
        run_id="hostile",
        seed=1,
    )
    return run_task(spec)


def assert_tampered(record: CycleRecord) -> None:
    assert record.grade is not None and record.grade.invalid
    assert (record.grade.invalid_reason or "").startswith(TAMPER_PREFIX)
    assert "git repository was removed or corrupted" in (record.grade.invalid_reason or "")
    assert record.score_end == 0.0 and not record.grade.resolved
    assert record.failure_category is FailureCategory.INVALID_GRADE


def test_an_agent_that_deletes_git_gets_a_tamper_grade_and_the_next_run_still_works(
    task: Task, tmp_path: Path
) -> None:
    record = run(task, tmp_path / "first", "rm -rf .git")
    assert_tampered(record)
    assert (tmp_path / "first" / "diff.patch").read_text().startswith(NO_DIFF)
    assert any(e.startswith("diff: the workspace diff could not be taken") for e in record.errors)
    assert load_record(tmp_path / "first") == record
    events = read_events(tmp_path / "first" / "events.jsonl")
    assert [e.type for e in events][-2:] == ["grade", "run_end"]

    honest = run(task, tmp_path / "second")
    assert honest.score_end == 1.0 and honest.grade is not None and not honest.grade.invalid
    assert "def div" in (tmp_path / "second" / "diff.patch").read_text()


def test_an_agent_that_corrupts_the_base_objects_gets_a_tamper_grade(
    task: Task, tmp_path: Path
) -> None:
    record = run(
        task,
        tmp_path / "run",
        "chmod -R u+w .git/objects && for f in .git/objects/??/* .git/objects/pack/*; "
        "do [ -f $f ] && echo x > $f; done",
    )
    assert_tampered(record)


def test_an_agent_that_hides_its_change_with_gitattributes_is_still_seen(
    task: Task, tmp_path: Path
) -> None:
    record = run(task, tmp_path / "run", "printf '*.py binary\\n' > .gitattributes")
    diff = (tmp_path / "run" / "diff.patch").read_text()
    assert "+def div(a, b):" in diff and "Binary files" not in diff
    assert record.diff_files == [".gitattributes", "calc/core.py"]


def test_a_workspace_that_cannot_be_created_is_a_recorded_error(
    task: Task, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_workspace(*args: object, **kwargs: object) -> None:
        raise OSError("disk full (simulated)")

    monkeypatch.setattr(_task_run, "create_workspace", no_workspace)
    record = run(task, tmp_path / "run")
    assert record.run_status == "error" and record.grade is None
    assert any("workspace" in e and "disk full" in e for e in record.errors)


def test_an_agent_that_scribbles_in_the_exhaust_still_leaves_a_record(
    task: Task, tmp_path: Path
) -> None:
    run_dir = tmp_path / "run"
    record = run(task, run_dir, f"echo 'not an event' >> {run_dir.resolve()}/events.jsonl")
    assert record.run_status == "error"
    assert any("not a valid event" in e for e in record.errors)
    assert (run_dir / "events.broken.jsonl").is_file()  # what was there is kept to look at
    assert load_record(run_dir) == record


def plant_links(run_dir: Path, outside: Path, names: tuple[str, ...]) -> str:
    return " && ".join(f"ln -sfn {outside} {run_dir.resolve()}/{name}" for name in names)


def test_symlinks_planted_during_the_run_are_replaced_not_written_through(
    task: Task, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("precious\n")
    run_dir = tmp_path / "run"
    # instruction.md is written before the agent starts, so it is not among them
    record = run(task, run_dir, plant_links(run_dir, outside, RUN_FILES), notes=True)
    assert outside.read_text() == "precious\n"
    for name in RUN_FILES:
        assert (run_dir / name).is_file() and not (run_dir / name).is_symlink(), name
    # the exhaust written while the link stood was put back: the record is the whole run
    assert record.score_end == 1.0 and record.steps[0].tool_calls == 4
    assert [e.type for e in read_events(run_dir / "events.jsonl")][-1] == "run_end"


def test_symlinks_already_in_the_run_directory_are_replaced_not_written_through(
    task: Task, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("precious\n")
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    names = (*RUN_FILES, "instruction.md")
    for name in names:
        (run_dir / name).symlink_to(outside)
    record = run(task, run_dir, notes=True)
    assert outside.read_text() == "precious\n"
    for name in names:
        assert (run_dir / name).is_file() and not (run_dir / name).is_symlink(), name
    assert record.score_end == 1.0
