"""What the runtime tells agents: the fixed system preambles and the prompt placeholder values."""

from __future__ import annotations

from pathlib import Path

from loopwright.tasks import Task

__all__ = ["JUDGE_PREAMBLE", "SYSTEM_PREAMBLE", "prompt_values", "rules_text"]

SYSTEM_PREAMBLE = (
    "You are an autonomous software engineering agent working on one step of a coding task. "
    "You act only through the tools you are given; their results come back to you. "
    "Paths are relative to the workspace root. When you are done with this step, call the "
    "finish tool with a short summary of what you did."
)
"""The system message of every agent node (the node's rendered prompt is the user message)."""

JUDGE_PREAMBLE = (
    "You are a strict reviewer judging whether one step of a coding task succeeded. "
    "Answer PASS or FAIL on the first line, then give your reasons."
)
"""The system message of an LLM judge gate. Its verdict is the first PASS or FAIL word."""


def rules_text(task: Task, directives: str = "") -> str:
    """The `{rules}` paragraph: the task's working rules as the runtime enforces them.

    Lines start with "- ", to continue the rule lists of the built-in prompts. Depends on the
    task (test directory and command, internet, the agent time budget) and on the outer loop's
    `directives` (steering text, one rule per non-empty line); deterministic.
    """
    spec = task.spec
    internet = (
        "- This task allows internet access from commands."
        if spec.allow_internet
        else "- Commands have no network access."
    )
    return "\n".join(
        [
            f"- The visible tests are in {spec.test_dir}/; run_tests runs them with "
            f"`python -m pytest -q {spec.test_dir}` in the workspace.",
            internet,
            f"- The whole run has {spec.timeouts.agent:.0f} seconds; each step has its own "
            "limit of turns and time. Call finish when your step is done.",
            *(f"- {line.strip()}" for line in directives.splitlines() if line.strip()),
        ]
    )


def prompt_values(
    task: Task,
    workspace: Path | str,
    instruction_file: Path | str,
    *,
    notes: str,
    feedback: str,
    directives: str = "",
) -> dict[str, str]:
    """The value of every placeholder in `workflow.PLACEHOLDERS` for one node visit.

    `instruction_file` and `workspace` are the paths the agent is told (the runner passes
    `INSTRUCTION_VIEW` and `workspace_view`, never host paths, so that a prompt does not depend
    on where the run directory or the temporary directory is); `notes` is the run's notes so far
    and `feedback` the failed gate's feedback for a node re-run by RELOOP, both "" when there
    are none (so that a prompt's "(empty if none)" reads true).
    """
    return {
        "instruction_file": str(instruction_file),
        "workspace": str(workspace),
        "task_id": task.id,
        "rules": rules_text(task, directives),
        "notes": notes,
        "feedback": feedback,
    }
