"""What tools, functions and checks are given to act with: the ToolContext and the run's notes."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from loopwright.errors import LoopwrightError
from loopwright.models import Usage
from loopwright.records import EventWriter, NodeStatus, NotesWritten
from loopwright.sandbox import Sandbox
from loopwright.tasks import Task

__all__ = [
    "INSTRUCTION_VIEW",
    "CostFn",
    "NodeStatus",
    "NotesBook",
    "StepResult",
    "ToolContext",
    "ToolError",
    "workspace_view",
]

INSTRUCTION_VIEW = "/task/instruction.md"
"""The instruction file's path as agents are told it (prompts' `{instruction_file}`), wherever
the run directory is; `read_file` reads it. Commands cannot open it at this path."""


def workspace_view(sandbox: Sandbox, workspace: Path) -> str:
    """The workspace's path as agents are told it (prompts' `{workspace}`): the fixed path a
    sandbox places it at (bubblewrap in a task environment: `/testbed`), else "." (paths are
    workspace-relative), never the host path, so prompts do not depend on where runs live."""
    shown = sandbox.visible(workspace)
    return shown if shown != str(workspace) else "."


CostFn = Callable[[str, Usage], float | None]
"""`cost_fn(model_name, usage)`: the price of one call in USD, None when the model is unpriced."""


class ToolError(LoopwrightError):
    """A tool call that cannot be carried out (a path leaving the workspace, a disallowed tool,
    bad arguments, a missing file...). Never fatal: the message becomes the tool result the
    model sees, prefixed with "error: "."""


@dataclass(frozen=True, slots=True)
class StepResult:
    """What a registered function or check returns: `passed` and a human-readable `detail`
    (for a failed check, the feedback a RELOOP hands to the re-run nodes)."""

    passed: bool
    detail: str = ""


@dataclass(slots=True)
class NotesBook:
    """The run's notes: texts appended by `write_notes` (and `collect_notes`), in order.

    Shared by every node of one run; one thread at a time. `text()` joins the entries with a
    blank line, exactly as `{notes}` and `read_notes` show them.
    """

    entries: list[tuple[str, str]] = field(default_factory=list)

    def append(self, node_id: str, text: str) -> None:
        """Add `text`, written by node `node_id`."""
        self.entries.append((node_id, text))

    def text(self) -> str:
        """Every entry's text in order, separated by a blank line; "" when there are none."""
        return "\n\n".join(text.strip("\n") for _, text in self.entries)


@dataclass(frozen=True, slots=True)
class ToolContext:
    """Everything a tool (or a registered function or check) may act on, for one node.

    `workspace` is absolute and resolved; every path a tool touches must stay inside it,
    except that `read_file` may read `instruction_file`. `deadline` is a `time.monotonic()`
    value: commands get at most the time left before it. `events` receives what the tools
    emit (NotesWritten); `node_id` and `attempt` say which node visit this is; `base_commit` is
    the workspace's commit when the run started (None if it is not a git repository).
    """

    workspace: Path
    instruction_file: Path
    sandbox: Sandbox
    task: Task
    notes: NotesBook
    events: EventWriter
    deadline: float
    node_id: str
    attempt: int = 1
    base_commit: str | None = None

    @property
    def workspace_view(self) -> str:
        """The workspace as the agent is told it (see `workspace_view`)."""
        return workspace_view(self.sandbox, self.workspace)

    def shown(self, text: str) -> str:
        """`text` as an agent may see it: the host paths of the workspace and the instruction
        file replaced by the paths the agent is told (tool output, command output, feedback)."""
        text = text.replace(str(self.instruction_file), INSTRUCTION_VIEW)
        return text.replace(str(self.workspace), self.workspace_view)

    def remaining(self) -> float:
        """Seconds left before `deadline` (negative once it has passed)."""
        return self.deadline - time.monotonic()

    def time_left(self, cap: float | None = None) -> float:
        """Seconds a command may take: the time left, at most `cap`. ToolError when none is left."""
        left = self.remaining()
        if left <= 0.05:
            raise ToolError(f"no time left in node {self.node_id!r}'s budget; call finish")
        return left if cap is None else min(left, cap)

    def add_notes(self, text: str) -> None:
        """Append `text` to the run's notes and emit NotesWritten."""
        self.notes.append(self.node_id, text)
        self.events.write(NotesWritten(t=self.events.now(), node_id=self.node_id, chars=len(text)))
