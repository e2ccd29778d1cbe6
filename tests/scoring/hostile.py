"""Scripted hostile agents: a builder whose every move is written in advance, run end to end
through `run_task` (workspace, sandbox, grader, run directory) on a copy of a bundled task."""

from __future__ import annotations

import shutil
from pathlib import Path

from loopwright.evaluation import TaskRunSpec, run_task
from loopwright.models import DEFAULT_PRICES, Reply, ScriptedModel, ToolCall
from loopwright.records import CycleRecord
from loopwright.sandbox import Sandbox
from loopwright.scoring import GradeResult
from loopwright.tasks import Task, load_benchmark, load_task
from loopwright.workflow import Workflow, workflow_from_text

WORKFLOW = """
schema_version: 1
name: hostile
nodes:
  - id: builder
    kind: agent
    role: builder
    tools: [write_file, run_command]
    max_turns: 12
    prompt: "Do the task in {instruction_file} in {workspace}. {notes} {feedback} {rules}"
edges: []
"""

Step = tuple[str, dict[str, str]]  # (tool name, arguments)


def write(path: str, content: str) -> Step:
    return ("write_file", {"path": path, "content": content})


def shell(command: str) -> Step:
    return ("run_command", {"command": command})


def copy_task(task_id: str, dest: Path) -> Task:
    """A private copy of a bundled mini task, so an attack that reaches it harms nothing."""
    source = load_benchmark("mini").task(task_id).root
    shutil.copytree(source, dest / task_id)
    return load_task(dest / task_id)


def gold_steps(task: Task) -> list[Step]:
    assert task.solution_dir is not None
    return [
        write(p.relative_to(task.solution_dir).as_posix(), p.read_text())
        for p in sorted(task.solution_dir.rglob("*.py"))
    ]


def run_agent(
    task: Task, steps: list[Step], sandbox: Sandbox, run_dir: Path
) -> tuple[CycleRecord, GradeResult]:
    """Run the scripted builder: its steps, then finish. Returns the record and grade.json."""
    replies: list[Reply] = [
        ToolCall.make(f"c{i}", name, **args) for i, (name, args) in enumerate(steps)
    ]
    replies.append(ToolCall.make("done", "finish", summary="done"))
    spec = TaskRunSpec(
        workflow=_workflow(),
        task=task,
        model=ScriptedModel(replies),
        sandbox=sandbox,
        prices=DEFAULT_PRICES,
        run_dir=run_dir,
        run_id=run_dir.name,
        seed=0,
    )
    record = run_task(spec)
    grade = GradeResult.model_validate_json((run_dir / "grade.json").read_text())
    return record, grade


def _workflow() -> Workflow:
    return workflow_from_text(WORKFLOW, "yaml")
