"""A minimal stand-in for the runtime, for driving models in tests: the tool contract on a real
temporary workspace, a react-style loop, prompt rendering, and the two built-in workflows.

Deliberately small and independent of loopwright.runtime (written concurrently).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from loopwright.models import ChatModel, Message, ToolCall, ToolCallError, ToolSpec
from loopwright.tasks import Task
from loopwright.workflow import AgentNode, builtin_workflow

SYSTEM = "You are a coding agent. Use the tools to do the task, then call finish."
TAIL = 3000


@dataclass
class Tools:
    """The tool contract on `workspace`; notes are shared by every node of one run."""

    workspace: Path
    instruction: Path
    test_dir: str = "tests"
    notes: list[str] = field(default_factory=list)
    finished: str | None = None

    def run(self, call: ToolCall) -> str:
        try:
            args = call.arguments()
        except ToolCallError as exc:
            return f"error: {exc}"
        method = getattr(self, f"t_{call.name}", None)
        if method is None:
            return f"error: unknown tool {call.name}"
        try:
            return str(method(**args))
        except (OSError, TypeError, ValueError) as exc:
            return f"error: {exc}"

    def _path(self, path: str) -> Path:
        if Path(path) == self.instruction:
            return self.instruction
        target = (self.workspace / path).resolve()
        if not target.is_relative_to(self.workspace.resolve()):
            raise ValueError(f"{path} is outside the workspace")
        return target

    def t_read_file(self, path: str) -> str:
        return self._path(path).read_text(encoding="utf-8")

    def t_list_files(self, path: str = ".") -> str:
        root = self._path(path)
        files = sorted(
            p.relative_to(self.workspace).as_posix()
            for p in root.rglob("*")
            if p.is_file() and ".git" not in p.parts and "__pycache__" not in p.parts
        )
        return "\n".join(files)

    def t_write_file(self, path: str, content: str) -> str:
        target = self._path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
        return f"wrote {path}"

    def t_edit_file(self, path: str, old: str, new: str) -> str:
        target = self._path(path)
        text = target.read_text(encoding="utf-8")
        if text.count(old) != 1:
            return f"error: old text found {text.count(old)} times in {path}"
        target.write_text(text.replace(old, new), encoding="utf-8")
        return f"edited {path}"

    def t_run_tests(self, path: str | None = None) -> str:
        argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
        argv.append(path or self.test_dir)
        done = subprocess.run(
            argv, cwd=self.workspace, capture_output=True, text=True, timeout=120, check=False
        )
        return f"exit code {done.returncode}\n{(done.stdout + done.stderr)[-TAIL:]}"

    def t_write_notes(self, text: str) -> str:
        self.notes.append(text)
        return "notes saved"

    def t_read_notes(self) -> str:
        return "\n\n".join(self.notes)

    def t_finish(self, summary: str) -> str:
        self.finished = summary
        return "finished"


def specs(names: Sequence[str]) -> list[ToolSpec]:
    return [ToolSpec(name, f"the {name} tool") for name in names]


@dataclass
class NodeRun:
    messages: list[Message]
    calls: list[ToolCall]


def run_node(
    model: ChatModel, prompt: str, tool_names: Sequence[str], tools: Tools, max_turns: int = 40
) -> NodeRun:
    """A react loop: model -> tool calls -> results, until finish, a text reply or max_turns.
    `finish` is always offered, as the runtime does."""
    tool_names = [*tool_names, *(["finish"] if "finish" not in tool_names else [])]
    messages = [Message("system", SYSTEM), Message("user", prompt)]
    offered, calls = specs(tool_names), []
    tools.finished = None
    for _ in range(max_turns):
        reply = model.chat(messages, offered)
        messages.append(Message("assistant", reply.text, reply.tool_calls))
        if not reply.tool_calls:
            break
        for call in reply.tool_calls:
            calls.append(call)
            result = tools.run(call) if call.name in tool_names else "error: tool not allowed"
            messages.append(Message("tool", result, tool_call_id=call.id, name=call.name))
        if tools.finished is not None:
            break
    return NodeRun(messages, calls)


def render(template: str, task: Task, tools: Tools, feedback: str = "") -> str:
    values = {
        "instruction_file": str(tools.instruction),
        "workspace": str(tools.workspace),
        "task_id": task.id,
        "rules": "- Run the tests with python -m pytest; there is no network.",
        "notes": "\n\n".join(tools.notes),
        "feedback": feedback,
    }
    for key, value in values.items():
        template = template.replace("{" + key + "}", value)
    return template


def agent(workflow: str, node_id: str) -> AgentNode:
    node = next(n for n in builtin_workflow(workflow).nodes if n.id == node_id)
    assert isinstance(node, AgentNode)
    return node


def builder_only(model: ChatModel, task: Task, tools: Tools) -> list[NodeRun]:
    node = agent("builder-only", "builder")
    return [run_node(model, render(node.prompt, task, tools), node.tools, tools)]


def research_build_verify(
    model: ChatModel, task: Task, tools: Tools, max_loops: int = 3
) -> list[NodeRun]:
    """study -> builder -> gate (visible tests) with RELOOP to the builder at most max_loops."""
    study, builder = (agent("research-build-verify", i) for i in ("study", "builder"))
    runs = [run_node(model, render(study.prompt, task, tools), study.tools, tools)]
    feedback = ""
    for _ in range(max_loops + 1):
        prompt = render(builder.prompt, task, tools, feedback)
        runs.append(run_node(model, prompt, builder.tools, tools))
        result = tools.t_run_tests()
        if result.startswith("exit code 0"):
            break
        feedback = result
    return runs
