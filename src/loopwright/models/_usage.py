"""The offline token estimate shared by the offline models (ScriptedModel, sim)."""

from __future__ import annotations

from collections.abc import Sequence

from loopwright.models._types import Message, ToolCall, Usage

__all__ = ["count_tokens", "response_usage"]


def count_tokens(text: str) -> int:
    """One token per four characters (rounded down): the offline models' estimate."""
    return len(text) // 4


def _message_chars(message: Message) -> str:
    return message.content + "".join(c.name + c.arguments_json for c in message.tool_calls)


def response_usage(messages: Sequence[Message], text: str, calls: Sequence[ToolCall]) -> Usage:
    """Usage of one offline reply: the whole conversation is read (every message's content and
    tool calls), the reply's text and tool calls (names and arguments) are written."""
    read = sum(count_tokens(_message_chars(m)) for m in messages)
    written = count_tokens(text + "".join(c.name + c.arguments_json for c in calls))
    return Usage(input_tokens=read, output_tokens=written)
