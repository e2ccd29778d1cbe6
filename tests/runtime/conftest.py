"""Shared pieces for runtime tests: a scripted fake model, a calc task, a workspace, a runner."""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from loopwright.models import (
    JsonValue,
    Message,
    ModelError,
    ModelResponse,
    ToolCall,
    ToolSpec,
    Usage,
)
from loopwright.records import EventWriter, read_events
from loopwright.runtime import NotesBook, Registries, Runner, RunOutcome, ToolContext
from loopwright.sandbox import LocalSandbox, Workspace, create_workspace, remove_workspace
from loopwright.tasks import Task
from loopwright.workflow import AgentNode, Edge, FnNode, GateNode, Workflow
from tests.taskfactory import make_calc_task

Step = ModelResponse | Exception | Callable[[Sequence[Message]], ModelResponse]


def reply(*calls: ToolCall, text: str = "", tokens: tuple[int, int] = (10, 5)) -> ModelResponse:
    """A model reply with these tool calls (and text)."""
    usage = Usage(input_tokens=tokens[0], output_tokens=tokens[1])
    return ModelResponse(text, calls, usage, 0.0, "fake-model", simulated=True)


_ids = itertools.count(1)


def call(name: str, **arguments: JsonValue) -> ToolCall:
    """A well-formed tool call with a fresh id."""
    return ToolCall.make(f"c{next(_ids)}", name, **arguments)


def finish(summary: str = "done") -> ModelResponse:
    return reply(call("finish", summary=summary))


@dataclass
class FakeModel:
    """Pops one step per chat call: a response, an exception to raise, or a function of the
    messages. Raises ModelError when the script runs out. Records every call's messages."""

    steps: list[Step]
    delay_s: float = 0.0
    name: str = "fake-model"
    simulated: bool = True
    calls: list[tuple[list[Message], list[ToolSpec]]] = field(default_factory=list)

    def chat(self, messages: Sequence[Message], tools: Sequence[ToolSpec]) -> ModelResponse:
        self.calls.append((list(messages), list(tools)))
        if self.delay_s:
            time.sleep(self.delay_s)
        if not self.steps:
            raise ModelError(f"script exhausted after {len(self.calls) - 1} calls")
        step = self.steps.pop(0)
        if isinstance(step, Exception):
            raise step
        return step(messages) if callable(step) else step

    def prompts(self) -> list[str]:
        """The user prompt (second message) of every call that opened a conversation."""
        return [m[1].content for m, _ in self.calls if len(m) == 2]


def cost(model: str, usage: Usage) -> float | None:
    return 0.001 * usage.input_tokens if model == "fake-model" else None


def agent(node_id: str, tools: Sequence[str] = (), **kw: Any) -> AgentNode:
    prompt = kw.pop(
        "prompt", "Task {task_id}: read {instruction_file}.\nNOTES:{notes}\nFEEDBACK:{feedback}"
    )
    return AgentNode(id=node_id, role=node_id, tools=tuple(tools), prompt=prompt, **kw)


def chain(*nodes: AgentNode | FnNode | GateNode, name: str = "t") -> Workflow:
    """A workflow running `nodes` one after another."""
    edges = tuple(Edge(source=a.id, target=b.id) for a, b in itertools.pairwise(nodes))
    return Workflow(name=name, nodes=nodes, edges=edges)


def gate(
    check: str = "visible_tests_pass", reloop_to: str = "builder", max_loops: int = 3, **kw: Any
) -> GateNode:
    return GateNode(id="gate", check=check, reloop_to=reloop_to, max_loops=max_loops, **kw)


@pytest.fixture
def task(tmp_path: Path) -> Task:
    return make_calc_task(tmp_path / "bench")


@pytest.fixture
def workspace(tmp_path: Path, task: Task) -> Iterator[Workspace]:
    ws = create_workspace(task.repo_dir, tmp_path / "ws")
    yield ws
    remove_workspace(ws)


@pytest.fixture
def events_path(tmp_path: Path) -> Path:
    return tmp_path / "run" / "events.jsonl"


@dataclass
class Harness:
    task: Task
    workspace: Path
    events_path: Path
    sandbox: LocalSandbox = field(default_factory=LocalSandbox)

    @property
    def instruction(self) -> Path:
        return self.task.root / "instruction.md"

    def run(
        self,
        wf: Workflow,
        model: FakeModel,
        *,
        run_timeout_s: float | None = None,
        registries: Registries | None = None,
    ) -> RunOutcome:
        runner = Runner(
            model, self.sandbox, cost_fn=cost, price_table="test-prices-1", registries=registries
        )
        with EventWriter(self.events_path) as writer:
            return runner.run(
                wf, self.task, self.workspace, self.instruction, writer, run_timeout_s=run_timeout_s
            )

    def events(self, kind: str | None = None) -> list[Any]:
        """The run's events, validated by read_events; only those of `kind` when given."""
        events = read_events(self.events_path)
        return [e for e in events if kind is None or e.type == kind]

    def tool_context(
        self, node_id: str = "n", deadline_s: float = 30
    ) -> tuple[ToolContext, EventWriter]:
        writer = EventWriter(self.events_path)
        ctx = ToolContext(
            workspace=self.workspace.resolve(),
            instruction_file=self.instruction,
            sandbox=self.sandbox,
            task=self.task,
            notes=NotesBook(),
            events=writer,
            deadline=time.monotonic() + deadline_s,
            node_id=node_id,
        )
        return ctx, writer


@pytest.fixture
def h(task: Task, workspace: Workspace, events_path: Path) -> Harness:
    return Harness(task, workspace.path, events_path)
