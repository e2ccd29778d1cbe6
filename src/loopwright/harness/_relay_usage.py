"""Token usage read from a model API's reply, for the metering relay (`_relay.py`).

OpenAI chat completions and Responses, and Anthropic Messages, as one JSON body or as a
server-sent-event stream, in the ledger's convention: `input` includes cache reads (and
Anthropic cache writes, also kept apart in `cache_write`). A reply without usage, or not JSON,
counts zeros: the call is still recorded.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["RelayTokens", "usage_from_body", "usage_from_stream"]


@dataclass(frozen=True, slots=True)
class RelayTokens:
    """Token counts read from a reply, in the ledger's convention: `input` includes cache
    reads (and Anthropic cache writes, which are also kept apart in `cache_write`)."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0

    def merged(self, other: RelayTokens) -> RelayTokens:
        """Field-wise maximum: stream events repeat or grow cumulative counts."""
        return RelayTokens(
            max(self.input, other.input),
            max(self.output, other.output),
            max(self.cache_read, other.cache_read),
            max(self.cache_write, other.cache_write),
        )


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _tokens(usage: Mapping[str, Any]) -> RelayTokens:
    if "prompt_tokens" in usage:  # OpenAI chat completions
        details = usage.get("prompt_tokens_details") or {}
        cached = _int(details.get("cached_tokens")) if isinstance(details, dict) else 0
        return RelayTokens(
            _int(usage["prompt_tokens"]), _int(usage.get("completion_tokens")), cached
        )
    read = _int(usage.get("cache_read_input_tokens"))
    write = _int(usage.get("cache_creation_input_tokens"))
    details = usage.get("input_tokens_details") or {}
    if isinstance(details, dict) and not read:  # OpenAI Responses
        read = _int(details.get("cached_tokens"))
        return RelayTokens(_int(usage.get("input_tokens")), _int(usage.get("output_tokens")), read)
    # Anthropic Messages: input_tokens excludes cache reads and writes.
    fresh = _int(usage.get("input_tokens"))
    return RelayTokens(fresh + read + write, _int(usage.get("output_tokens")), read, write)


def _find_usage(obj: object) -> RelayTokens | None:
    """The usage block of a reply or stream event: top level, or under `response`/`message`."""
    if not isinstance(obj, dict):
        return None
    usage = obj.get("usage")
    if isinstance(usage, dict):
        return _tokens(usage)
    for key in ("response", "message"):
        found = _find_usage(obj.get(key))
        if found is not None:
            return found
    return None


def usage_from_body(body: bytes) -> RelayTokens:
    """Tokens of a JSON reply body (zeros when it holds no usage or is not JSON)."""
    try:
        return _find_usage(json.loads(body)) or RelayTokens()
    except ValueError:
        return RelayTokens()


def usage_from_stream(lines: list[bytes]) -> RelayTokens:
    """Tokens of a server-sent-event stream: the field-wise maximum over every `data:` event."""
    total = RelayTokens()
    for line in lines:
        if not line.startswith(b"data:"):
            continue
        payload = line[5:].strip()
        if payload and payload != b"[DONE]":
            found = usage_from_body(payload)
            total = total.merged(found)
    return total
