"""`external:claude-code`: Anthropic's Claude Code CLI in headless mode.

Command: `claude -p --output-format stream-json --verbose --dangerously-skip-permissions
--max-turns N [--model M] --disallowedTools WebSearch,WebFetch`, the prompt on stdin.
Output: one JSON object a line (Claude Code headless docs, "stream-json"): a `system` `init`
object (model, tools), `assistant` objects (`message.content` text and `tool_use` blocks,
`message.usage` in Anthropic's shape; one message can arrive as several objects sharing its
`message.id`), `user` objects carrying `tool_result` blocks (`tool_use_id`, `is_error`), and a
final `result` object (`subtype` success | error_max_turns | error_during_execution,
`is_error`, `result`, `num_turns`, `total_cost_usd`, `usage` with `server_tool_use`). The
single-object `--output-format json` result is read the same way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from loopwright.runtime.external._parse import (
    ToolBuilder,
    anthropic_usage,
    bare_model,
    count,
    dumps,
    json_objects,
    text_of,
)
from loopwright.runtime.external._types import (
    AgentOutcome,
    AgentTurn,
    ExternalRequest,
    Invocation,
    Transcript,
)
from loopwright.sandbox import CommandResult

__all__ = ["WEB_TOOLS", "ClaudeCode", "parse_claude_stream"]

WEB_TOOLS = ("WebSearch", "WebFetch")
"""Claude Code's built-in web tools: always passed to `--disallowedTools`."""


@dataclass(frozen=True, slots=True)
class ClaudeCode:
    """The Claude Code adapter. The model's base URL goes to ANTHROPIC_BASE_URL (a trailing
    `/v1` dropped: Claude Code appends `/v1/messages` itself); ANTHROPIC_API_KEY and
    ANTHROPIC_AUTH_TOKEN are passed on when set."""

    name: str = "claude-code"
    executable: str = "claude"
    install_hint: str = "npm install -g @anthropic-ai/claude-code (https://code.claude.com/docs)"
    web_tools: str = "--disallowedTools WebSearch,WebFetch"

    def invocation(
        self, request: ExternalRequest, executable: str, extra_args: Sequence[str]
    ) -> Invocation:
        argv = [executable, "-p", "--output-format", "stream-json", "--verbose"]
        argv += ["--dangerously-skip-permissions", "--max-turns", str(request.max_turns)]
        if request.model:
            argv += ["--model", bare_model(request.model, "anthropic")]
        # Last: --disallowedTools takes a list, so nothing may follow it.
        argv += [*extra_args, "--disallowedTools", ",".join(WEB_TOOLS)]
        env = request.base_env() | request.keys("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
        env |= {"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1"}
        if request.api_base:
            env["ANTHROPIC_BASE_URL"] = request.api_base.rstrip("/").removesuffix("/v1")
        return Invocation(tuple(argv), env, stdin=request.prompt)

    def parse(self, result: CommandResult, request: ExternalRequest) -> Transcript:
        del request
        return parse_claude_stream(result.stdout)


@dataclass(slots=True)
class _Message:
    model: str | None = None
    texts: list[str] = field(default_factory=list)
    tools: list[ToolBuilder] = field(default_factory=list)
    usage: Mapping[str, Any] | None = None

    def turn(self) -> AgentTurn:
        usage = anthropic_usage(self.usage)
        return AgentTurn(
            tools=tuple(t.freeze() for t in self.tools),
            text="\n".join(self.texts),
            usage=usage[0] if usage else None,
            cache_write_tokens=usage[1] if usage else 0,
            model=self.model,
        )


@dataclass(slots=True)
class _Stream:
    messages: dict[str, _Message] = field(default_factory=dict)
    tools: dict[str, ToolBuilder] = field(default_factory=dict)
    model: str | None = None
    result: Mapping[str, Any] | None = None

    def assistant(self, message: Mapping[str, Any]) -> None:
        key = str(message.get("id") or f"#{len(self.messages)}")
        entry = self.messages.setdefault(key, _Message())
        entry.model = message.get("model") or entry.model
        entry.usage = message.get("usage") or entry.usage
        for block in message.get("content") or ():
            if not isinstance(block, Mapping):
                continue
            if block.get("type") == "text" and block.get("text"):
                entry.texts.append(str(block["text"]))
            elif block.get("type") == "tool_use":
                tool = ToolBuilder(
                    str(block.get("name")), dumps(block.get("input", {})), str(block.get("id"))
                )
                entry.tools.append(tool)
                self.tools[tool.call_id] = tool

    def user(self, message: Mapping[str, Any]) -> None:
        content = message.get("content")
        for block in content if isinstance(content, list) else ():
            if isinstance(block, Mapping) and block.get("type") == "tool_result":
                tool = self.tools.get(str(block.get("tool_use_id")))
                if tool is not None:
                    output = text_of(block.get("content"))
                    tool.result(ok=not block.get("is_error", False), output=output)


def parse_claude_stream(text: str) -> Transcript:
    """A Transcript from Claude Code's stream-json (or json) output. Raises ValueError when
    the output holds no Claude Code message at all."""
    stream = _Stream()
    for obj in json_objects(text):
        kind, message = obj.get("type"), obj.get("message")
        if kind == "system" and obj.get("subtype") == "init":
            stream.model = obj.get("model") or stream.model
        elif kind == "assistant" and isinstance(message, Mapping):
            stream.assistant(message)
        elif kind == "user" and isinstance(message, Mapping):
            stream.user(message)
        elif kind == "result":
            stream.result = obj
    if not stream.messages and stream.result is None:
        raise ValueError("no Claude Code stream-json message in its output")
    return _transcript(stream)


def _transcript(stream: _Stream) -> Transcript:
    turns = tuple(m.turn() for m in stream.messages.values())
    result = stream.result or {}
    total = anthropic_usage(result.get("usage"))
    outcome, error = _outcome(result)
    cost = result.get("total_cost_usd", result.get("cost_usd"))
    summary = str(result.get("result") or (turns[-1].text if turns else ""))
    return Transcript(
        turns=turns,
        summary=summary if outcome != "error" else "",
        outcome=outcome,
        error=error,
        total_usage=total[0] if total else None,
        total_cache_write_tokens=total[1] if total else 0,
        cost_usd=float(cost) if isinstance(cost, int | float) else None,
        model=stream.model,
        web_uses=_web_uses(turns, result),
    )


def _outcome(result: Mapping[str, Any]) -> tuple[AgentOutcome, str | None]:
    subtype = str(result.get("subtype") or "")
    if not result:
        return "unknown", None
    if subtype == "error_max_turns":
        return "max_turns", None
    if result.get("is_error") or (subtype and subtype != "success"):
        return "error", str(result.get("result") or subtype or "Claude Code reported an error")
    return "done", None


def _web_uses(turns: Sequence[AgentTurn], result: Mapping[str, Any]) -> tuple[str, ...]:
    uses = [t.name for turn in turns for t in turn.tools if t.name in WEB_TOOLS]
    server = (result.get("usage") or {}).get("server_tool_use") or {}
    if isinstance(server, Mapping):
        uses += ["web_search (server)"] * count(server.get("web_search_requests"))
        uses += ["web_fetch (server)"] * count(server.get("web_fetch_requests"))
    return tuple(uses)
