"""Reading helpers shared by the external agent adapters: JSON lines and marked JSON blocks,
usage blocks in the OpenAI and Anthropic shapes, text out of content blocks, and a mutable
builder for tool uses whose results arrive later in the stream."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from loopwright.models import Usage
from loopwright.runtime.external._types import ToolUse

__all__ = [
    "ToolBuilder",
    "anthropic_usage",
    "bare_model",
    "count",
    "dumps",
    "json_objects",
    "marked_objects",
    "openai_usage",
    "text_of",
]

_ERROR_CHARS = 500


def json_objects(text: str) -> Iterator[dict[str, Any]]:
    """Every JSON object in `text`, one per line (JSON Lines); an array line yields its objects.
    Lines that are not JSON (banners, progress) are skipped."""
    for line in text.splitlines():
        line = line.strip()
        if not line or line[0] not in "{[":
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError:
            continue
        items = value if isinstance(value, list) else [value]
        yield from (item for item in items if isinstance(item, dict))


def marked_objects(text: str, marker: str) -> list[dict[str, Any]]:
    """The JSON object that follows each `marker` line (pretty-printed, over several lines).
    A block that does not parse is skipped."""
    decoder, found, cursor = json.JSONDecoder(), [], 0
    while (at := text.find(marker, cursor)) >= 0:
        start = text.find("{", at + len(marker))
        cursor = at + len(marker)
        if start < 0:
            break
        try:
            value, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            continue
        cursor = end
        if isinstance(value, dict):
            found.append(value)
    return found


def count(value: object) -> int:
    """A token count: a non-negative int (floats truncated), anything else 0."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    return max(int(value), 0)


def openai_usage(block: object) -> tuple[Usage, int] | None:
    """(Usage, cache-write tokens) of an OpenAI/LiteLLM usage block (`prompt_tokens`,
    `completion_tokens`, `prompt_tokens_details.cached_tokens`); None when there is none."""
    if not isinstance(block, Mapping) or "prompt_tokens" not in block:
        return None
    details = block.get("prompt_tokens_details")
    cached = count(details.get("cached_tokens")) if isinstance(details, Mapping) else 0
    cached = cached or count(block.get("cache_read_input_tokens"))
    usage = Usage(count(block.get("prompt_tokens")), count(block.get("completion_tokens")), cached)
    return usage, count(block.get("cache_creation_input_tokens"))


def anthropic_usage(block: object) -> tuple[Usage, int] | None:
    """(Usage, cache-write tokens) of an Anthropic usage block. Anthropic's `input_tokens`
    excludes cache reads and writes; ours includes them (the OpenAI convention), so input =
    input_tokens + cache_read_input_tokens + cache_creation_input_tokens."""
    if not isinstance(block, Mapping) or "input_tokens" not in block:
        return None
    read = count(block.get("cache_read_input_tokens"))
    write = count(block.get("cache_creation_input_tokens"))
    fresh = count(block.get("input_tokens"))
    return Usage(fresh + read + write, count(block.get("output_tokens")), read), write


def bare_model(model: str, *providers: str) -> str:
    """`anthropic/claude-sonnet-4-5` -> `claude-sonnet-4-5` when the prefix is one of
    `providers` (the agent takes its own provider's names without it); else `model` as is."""
    prefix, sep, rest = model.partition("/")
    return rest if sep and prefix in providers else model


def text_of(content: object) -> str:
    """The text of a message content: a string, or the `text` of each block of a list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [text_of(b.get("text", "")) for b in content if isinstance(b, Mapping)]
        return "\n".join(p for p in parts if p)
    return ""


@dataclass(slots=True)
class ToolBuilder:
    """A tool use whose result (ok, output) may arrive later in the agent's stream."""

    name: str
    arguments: str
    call_id: str = ""
    ok: bool = True
    error: str | None = None
    output_chars: int = 0

    def result(self, *, ok: bool, output: str = "", error: str | None = None) -> None:
        """Attach the result; a failed one keeps the start of its output as the error."""
        self.ok, self.output_chars = ok, len(output)
        if not ok:
            self.error = (error or output or "failed")[:_ERROR_CHARS]

    def freeze(self) -> ToolUse:
        return ToolUse(
            self.name, self.arguments, self.call_id, self.ok, self.error, self.output_chars
        )


def dumps(value: object) -> str:
    """Compact JSON of a tool's arguments (non-JSON values as strings)."""
    return json.dumps(value, default=str, ensure_ascii=False)
