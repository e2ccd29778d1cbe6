"""`external:openhands`: the OpenHands CLI (V1, `openhands`) in headless mode.

Command: `openhands --headless --json --override-with-envs -t PROMPT`, with the model in
LLM_MODEL, LLM_BASE_URL and LLM_API_KEY (OpenHands docs, "Headless Mode": `--headless`
always auto-approves; `--json` streams the agent's events). Output: for every event but the
system prompt, a `--JSON Event--` line followed by the event's `model_dump()` pretty-printed
(OpenHands-CLI `json_callback`; plain JSON Lines are read too). Events are the software-agent
SDK's, told apart by `kind`: `ActionEvent` (`tool_name`, `action`, `tool_call`,
`llm_response_id`: the actions of one model response share it), `ObservationEvent`
(`tool_call_id`, `observation`), `AgentErrorEvent` and `UserRejectObservation` (a failed
tool call), `MessageEvent` (`source`, `llm_message`), `ConversationStateUpdateEvent`
(`value` holds the conversation stats: `usage_to_metrics` {usage id: {`accumulated_cost`,
`accumulated_token_usage` {`prompt_tokens`, `completion_tokens`, `cache_read_tokens`,
`cache_write_tokens`}}}) and `ConversationErrorEvent`. OpenHands reports tokens as running
totals only: the last totals seen are the run's.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from loopwright.models import Usage, provider_of
from loopwright.runtime.external._parse import (
    ToolBuilder,
    count,
    dumps,
    json_objects,
    marked_objects,
    text_of,
)
from loopwright.runtime.external._types import (
    AgentTurn,
    ExternalRequest,
    Invocation,
    Transcript,
)
from loopwright.sandbox import CommandResult

__all__ = ["EVENT_MARKER", "OpenHands", "parse_openhands_events"]

EVENT_MARKER = "--JSON Event--"
_WEB_MARKERS = ("browser", "browse", "web_search", "fetch")


@dataclass(frozen=True, slots=True)
class OpenHands:
    """The OpenHands CLI adapter. Browsing is not offered by the CLI's agent (and
    AGENT_ENABLE_BROWSING=false is set for versions that read it); any browser or web tool
    the agent reports is recorded as a leak."""

    name: str = "openhands"
    executable: str = "openhands"
    install_hint: str = "uv tool install openhands (https://docs.openhands.dev)"
    web_tools: str = "no browser tool in CLI mode; AGENT_ENABLE_BROWSING=false"

    def invocation(
        self, request: ExternalRequest, executable: str, extra_args: Sequence[str]
    ) -> Invocation:
        argv = [executable, "--headless", "--json", "--override-with-envs"]
        argv += ["-t", request.prompt, *extra_args]
        env = request.base_env() | {"AGENT_ENABLE_BROWSING": "false"}
        if request.model:
            env["LLM_MODEL"] = request.model
            key = request.keys(f"{provider_of(request.model).upper()}_API_KEY")
            if key:
                env["LLM_API_KEY"] = next(iter(key.values()))
        if request.api_base:
            env["LLM_BASE_URL"] = request.api_base
        return Invocation(tuple(argv), env)

    def parse(self, result: CommandResult, request: ExternalRequest) -> Transcript:
        del request
        return parse_openhands_events(result.stdout)


@dataclass(slots=True)
class _Conversation:
    responses: dict[str, tuple[list[str], list[ToolBuilder]]] = field(default_factory=dict)
    tools: dict[str, ToolBuilder] = field(default_factory=dict)
    summary: str = ""
    errors: list[str] = field(default_factory=list)
    web: list[str] = field(default_factory=list)
    metrics: Mapping[str, Any] | None = None
    finished: bool = False

    def action(self, event: Mapping[str, Any]) -> None:
        key = str(event.get("llm_response_id") or event.get("id") or len(self.responses))
        texts, tools = self.responses.setdefault(key, ([], []))
        thought = text_of(event.get("thought"))
        if thought:
            texts.append(thought)
        name = str(event.get("tool_name") or "unknown")
        action = event.get("action")
        arguments = (
            {k: v for k, v in action.items() if k != "kind"} if isinstance(action, Mapping) else {}
        )
        tool = ToolBuilder(name, dumps(arguments), str(event.get("tool_call_id") or ""))
        tools.append(tool)
        self.tools[tool.call_id] = tool
        if any(marker in name.lower() for marker in _WEB_MARKERS):
            self.web.append(name)
        if name == "finish":
            self.finished = True
            self.summary = str(arguments.get("message") or self.summary)

    def observation(self, event: Mapping[str, Any], kind: str) -> None:
        tool = self.tools.get(str(event.get("tool_call_id")))
        if tool is None:
            return
        if kind == "ObservationEvent":
            observation = event.get("observation") or {}
            output = text_of(observation.get("content")) if isinstance(observation, Mapping) else ""
            failed = isinstance(observation, Mapping) and (
                bool(observation.get("is_error")) or observation.get("exit_code") not in (0, None)
            )
            tool.result(ok=not failed, output=output)
        else:
            reason = event.get("error") or event.get("rejection_reason") or kind
            tool.result(ok=False, error=str(reason))

    def message(self, event: Mapping[str, Any]) -> None:
        if event.get("source") == "agent":
            llm_message = event.get("llm_message") or {}
            text = text_of(llm_message.get("content")) if isinstance(llm_message, Mapping) else ""
            self.summary = text or self.summary
            self.finished = self.finished or bool(text)

    def state(self, value: object) -> None:
        metrics = _find_key(value, "usage_to_metrics")
        if isinstance(metrics, Mapping):
            self.metrics = metrics
        status = _find_key(value, "execution_status")
        if status in ("error", "stuck"):
            self.errors.append(f"the conversation ended {status}")


def _find_key(value: object, key: str) -> object:
    """The value under `key` anywhere in nested mappings and lists (the first found)."""
    stack: list[object] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, Mapping):
            if key in item:
                return item[key]
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return None


def _events(text: str) -> Iterator[Mapping[str, Any]]:
    marked = marked_objects(text, EVENT_MARKER)
    yield from marked if marked else json_objects(text)


def parse_openhands_events(text: str) -> Transcript:
    """A Transcript from `openhands --headless --json` output. Raises ValueError when it holds
    no OpenHands event at all."""
    conversation, seen = _Conversation(), False
    for event in _events(text):
        kind = str(event.get("kind") or "")
        seen = seen or kind.endswith("Event") or kind.endswith("Observation")
        if kind == "ActionEvent":
            conversation.action(event)
        elif kind in ("ObservationEvent", "AgentErrorEvent", "UserRejectObservation"):
            conversation.observation(event, kind)
        elif kind == "MessageEvent":
            conversation.message(event)
        elif kind == "ConversationStateUpdateEvent":
            conversation.state(event.get("value"))
        elif kind == "ConversationErrorEvent":
            conversation.errors.append(str(event.get("detail") or event.get("code") or kind))
    if not seen:
        raise ValueError("no OpenHands event in its output")
    return _transcript(conversation)


def _transcript(conversation: _Conversation) -> Transcript:
    turns = tuple(
        AgentTurn(tuple(t.freeze() for t in tools), "\n".join(texts))
        for texts, tools in conversation.responses.values()
    )
    usage, cache_write, cost, model = _totals(conversation.metrics)
    failed = bool(conversation.errors)
    return Transcript(
        turns=turns,
        summary=conversation.summary,
        outcome="error" if failed else ("done" if conversation.finished else "unknown"),
        error="; ".join(conversation.errors) if failed else None,
        total_usage=usage,
        total_cache_write_tokens=cache_write,
        cost_usd=cost,
        model=model,
        web_uses=tuple(conversation.web),
    )


def _totals(
    metrics: Mapping[str, Any] | None,
) -> tuple[Usage | None, int, float | None, str | None]:
    """Summed usage, cache writes, cost and a model name over every usage id's metrics."""
    if not metrics:
        return None, 0, None, None
    usage, write, cost, model = Usage(), 0, 0.0, None
    for snapshot in (m for m in metrics.values() if isinstance(m, Mapping)):
        tokens = snapshot.get("accumulated_token_usage") or {}
        usage = usage + Usage(
            count(tokens.get("prompt_tokens")),
            count(tokens.get("completion_tokens")),
            count(tokens.get("cache_read_tokens")),
        )
        write += count(tokens.get("cache_write_tokens"))
        spent = snapshot.get("accumulated_cost")
        cost += float(spent) if isinstance(spent, int | float) else 0.0
        model = model or (str(snapshot["model_name"]) if snapshot.get("model_name") else None)
    return usage, write, cost if cost > 0 else None, model
