"""The model gateway interface: messages, tool calls, usage, and the `ChatModel` protocol.

Every model call in loopwright goes through a `ChatModel`: the offline `ScriptedModel` and `sim`
here, and the LiteLLM gateway for real providers (a later issue) behind the same protocol.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

__all__ = [
    "ChatModel",
    "JsonValue",
    "Message",
    "ModelResponse",
    "ToolCall",
    "ToolCallError",
    "ToolSpec",
    "Usage",
]

JsonValue = str | int | float | bool | None | list["JsonValue"] | dict[str, "JsonValue"]
Role = Literal["system", "user", "assistant", "tool"]


class ToolCallError(ValueError):
    """A tool call whose arguments are not a JSON object. The runtime shows it to the model."""


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call requested by the model. `arguments_json` is kept raw: a model can emit
    malformed JSON, and that must become a tool error the model sees, not a crash."""

    id: str
    name: str
    arguments_json: str

    def arguments(self) -> dict[str, JsonValue]:
        """The parsed arguments. Raises ToolCallError when they are not a JSON object."""
        try:
            value = json.loads(self.arguments_json or "{}")
        except json.JSONDecodeError as exc:
            raise ToolCallError(f"arguments of {self.name} are not valid JSON: {exc}") from None
        if not isinstance(value, dict):
            raise ToolCallError(f"arguments of {self.name} must be a JSON object, got {value!r}")
        return value

    @staticmethod
    def make(call_id: str, name: str, **arguments: JsonValue) -> ToolCall:
        """A well-formed call (for scripts and the simulated model)."""
        return ToolCall(call_id, name, json.dumps(arguments))


@dataclass(frozen=True, slots=True)
class Message:
    """One chat message. `tool_calls` only on assistant messages; `tool_call_id` on tool results."""

    role: Role
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None  # the tool's name, on tool results


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool as offered to the model: name, description and a JSON-schema for its arguments."""

    name: str
    description: str
    parameters: Mapping[str, JsonValue] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Usage:
    """Raw token counts of one call. Cost is derived from these with a named price table."""

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cached_tokens + other.cached_tokens,
        )


@dataclass(frozen=True, slots=True)
class ModelResponse:
    """What one chat call returned: text and/or tool calls, usage, latency, which model."""

    text: str
    tool_calls: tuple[ToolCall, ...]
    usage: Usage
    latency_s: float
    model: str
    simulated: bool = False


@runtime_checkable
class ChatModel(Protocol):
    """One verb: chat. Implementations must be safe to call from one thread at a time per
    instance; a runner makes one instance per run (see `ModelFactory`) when state matters.

    `name` is the model name recorded in events and priced by the price table; `simulated`
    is True for offline stand-ins, and everything produced with them must say so.
    """

    name: str
    simulated: bool

    def chat(self, messages: Sequence[Message], tools: Sequence[ToolSpec]) -> ModelResponse:
        """Send the conversation and the offered tools; return the model's reply.

        Raises ModelError (see models.errors) for a call that cannot be answered."""
        ...
