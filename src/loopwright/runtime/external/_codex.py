"""`external:codex`: OpenAI's Codex CLI, non-interactive (`codex exec --json`).

Command: `codex exec --json --skip-git-repo-check --sandbox workspace-write -c
web_search="disabled" -c features.web_search_request=false [-m M] -`, the prompt on stdin.
Output (Codex docs/exec.md, "JSON output mode"): JSON Lines of `thread.started`,
`turn.started`, `item.started` / `item.updated` / `item.completed` (item types `agent_message`,
`reasoning`, `command_execution` with `command`, `aggregated_output`, `exit_code`, `status`;
`file_change` with `changes`; `mcp_tool_call`; `web_search`; `todo_list`; `error`),
`turn.completed` with `usage` {`input_tokens`, `cached_input_tokens`, `output_tokens`},
`turn.failed` with `error.message`, and `error`. Codex reports tokens per turn of its own (one
per prompt), not per model call: a Codex turn is one of our turns.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from loopwright.models import Usage
from loopwright.runtime.external._parse import ToolBuilder, bare_model, count, dumps, json_objects
from loopwright.runtime.external._types import (
    AgentTurn,
    ExternalRequest,
    Invocation,
    Transcript,
)
from loopwright.sandbox import CommandResult

__all__ = ["Codex", "parse_codex_jsonl"]

# The hosted web search is off by default in Codex, and these keep it off whatever a user's
# config says: `web_search` is the current key; `features.web_search_request` the older one.
_WEB_OFF = ("-c", 'web_search="disabled"', "-c", "features.web_search_request=false")


@dataclass(frozen=True, slots=True)
class Codex:
    """The Codex adapter. The base URL goes to OPENAI_BASE_URL (Codex's built-in OpenAI
    provider, Responses API); the key from CODEX_API_KEY, else OPENAI_API_KEY. Codex's own
    sandbox confines its commands to the workspace (`--sandbox workspace-write`)."""

    name: str = "codex"
    executable: str = "codex"
    install_hint: str = "npm install -g @openai/codex (https://github.com/openai/codex)"
    web_tools: str = '-c web_search="disabled" (hosted web search off)'

    def invocation(
        self, request: ExternalRequest, executable: str, extra_args: Sequence[str]
    ) -> Invocation:
        argv = [executable, "exec", "--json", "--skip-git-repo-check"]
        argv += ["--sandbox", "workspace-write", *_WEB_OFF]
        if request.model:
            argv += ["-m", bare_model(request.model, "openai")]
        argv += [*extra_args, "-"]  # "-": the prompt is read from stdin
        env = request.base_env() | request.keys("OPENAI_API_KEY", "CODEX_API_KEY")
        if "CODEX_API_KEY" not in env and "OPENAI_API_KEY" in env:
            env["CODEX_API_KEY"] = env["OPENAI_API_KEY"]
        if request.api_base:
            env["OPENAI_BASE_URL"] = request.api_base
        return Invocation(tuple(argv), env, stdin=request.prompt)

    def parse(self, result: CommandResult, request: ExternalRequest) -> Transcript:
        del request
        return parse_codex_jsonl(result.stdout)


@dataclass(slots=True)
class _Turn:
    tools: list[ToolBuilder] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    usage: Usage | None = None

    def freeze(self) -> AgentTurn:
        return AgentTurn(tuple(t.freeze() for t in self.tools), "\n".join(self.texts), self.usage)


@dataclass(slots=True)
class _Thread:
    turns: list[_Turn] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    web: list[str] = field(default_factory=list)
    summary: str = ""
    seen: bool = False

    def current(self) -> _Turn:
        if not self.turns:
            self.turns.append(_Turn())
        return self.turns[-1]

    def item(self, item: Mapping[str, Any]) -> None:
        kind = item.get("type", item.get("item_type"))
        turn, status = self.current(), item.get("status", "completed")
        if kind == "agent_message":
            self.summary = str(item.get("text") or "")
            turn.texts.append(self.summary)
        elif kind == "command_execution":
            tool = ToolBuilder("command_execution", dumps({"command": item.get("command")}))
            code = item.get("exit_code")
            ok = status == "completed" and code in (0, None)
            output = str(item.get("aggregated_output") or "")
            tool.result(ok=ok, output=output, error=None if ok else f"exit code {code}: {output}")
            turn.tools.append(tool)
        elif kind in ("file_change", "mcp_tool_call", "web_search"):
            turn.tools.append(_other_tool(kind, item, status))
            if kind == "web_search":
                self.web.append("web_search")
        elif kind == "error":
            self.errors.append(str(item.get("message") or "error item"))


def _other_tool(kind: str, item: Mapping[str, Any], status: object) -> ToolBuilder:
    if kind == "file_change":
        tool = ToolBuilder("file_change", dumps({"changes": item.get("changes", [])}))
    elif kind == "mcp_tool_call":
        name = f"mcp:{item.get('server')}/{item.get('tool')}"
        tool = ToolBuilder(name, dumps(item.get("arguments", {})))
    else:
        tool = ToolBuilder("web_search", dumps({"query": item.get("query")}))
    ok = status != "failed"
    tool.result(ok=ok, error=None if ok else f"{kind} {status}")
    return tool


def parse_codex_jsonl(text: str) -> Transcript:
    """A Transcript from `codex exec --json` output. Raises ValueError when it holds no Codex
    event at all."""
    thread = _Thread()
    for obj in json_objects(text):
        kind = obj.get("type")
        thread.seen = thread.seen or str(kind).split(".")[0] in ("thread", "turn", "item", "error")
        if kind == "turn.started":
            thread.turns.append(_Turn())
        elif kind == "item.completed" and isinstance(obj.get("item"), Mapping):
            thread.item(obj["item"])
        elif kind == "turn.completed":
            usage = obj.get("usage") or {}
            thread.current().usage = Usage(
                count(usage.get("input_tokens")),
                count(usage.get("output_tokens")),
                count(usage.get("cached_input_tokens")),
            )
        elif kind in ("turn.failed", "error"):
            error = obj.get("error") if kind == "turn.failed" else obj
            message = error.get("message") if isinstance(error, Mapping) else None
            thread.errors.append(str(message or kind))
    if not thread.seen:
        raise ValueError("no Codex JSON event in its output")
    failed = bool(thread.errors)
    return Transcript(
        turns=tuple(t.freeze() for t in thread.turns),
        summary=thread.summary,
        outcome="error" if failed else ("done" if thread.turns else "unknown"),
        error="; ".join(thread.errors) if failed else None,
        web_uses=tuple(thread.web),
    )
