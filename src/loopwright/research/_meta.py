"""Calling the meta model: render, send through the ChatModel protocol, parse, validate, retry.

A reply must be one JSON object (a code fence around it, or prose before or after it, is
tolerated) that validates against the phase's model and the phase's rules. When it does not,
or the call raises a ModelError, the model is asked once more with the problem stated; when the
second reply fails too, `ask` returns None and the phase falls back to its documented rule
(docs/research.md, "Malformed replies"). Every attempt is logged as a MetaCall.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from loopwright.models import ChatModel, Message, ModelError
from loopwright.research._prompts import render

__all__ = ["MetaCall", "MetaClient", "extract_json"]

ATTEMPTS = 2
_EXCERPT = 4000

R = TypeVar("R", bound=BaseModel)


class MetaCall(BaseModel):
    """One attempt of one meta-model call, as logged in meta_calls.jsonl."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: Literal[1] = 1
    phase: str
    subject: str
    attempt: int
    ok: bool
    error: str | None
    reply: str
    model: str
    simulated: bool
    input_tokens: int
    output_tokens: int
    latency_s: float


def extract_json(text: str) -> object:
    """The first JSON object in `text`. ValueError when there is none."""
    start = text.find("{")
    if start < 0:
        raise ValueError("the reply holds no JSON object")
    try:
        value, _ = json.JSONDecoder().raw_decode(text[start:])
    except json.JSONDecodeError as exc:
        raise ValueError(f"the reply's JSON does not parse: {exc}") from None
    return value


class MetaClient:
    """Sends phase prompts to one ChatModel and keeps the log of every attempt."""

    def __init__(self, model: ChatModel) -> None:
        self.model = model
        self.calls: list[MetaCall] = []

    def ask(
        self,
        phase: str,
        context: BaseModel,
        reply_model: type[R],
        check: Callable[[R], str | None] | None = None,
        *,
        subject: str = "",
    ) -> R | None:
        """The validated reply, or None after ATTEMPTS failed attempts. Never raises for a bad
        reply or a failed call: those are logged and retried."""
        messages = [Message(role="user", content=render(phase, context))]
        for attempt in range(1, ATTEMPTS + 1):
            started = time.monotonic()
            text, problem, usage = "", None, (0, 0)
            try:
                response = self.model.chat(messages, [])
                text = response.text
                usage = (response.usage.input_tokens, response.usage.output_tokens)
            except ModelError as exc:
                problem = f"the call failed: {exc}"
            parsed: R | None = None
            if problem is None:
                parsed, problem = _parse(text, reply_model, check)
            self.calls.append(
                MetaCall(
                    phase=phase, subject=subject, attempt=attempt, ok=problem is None,
                    error=problem, reply=text[:_EXCERPT], model=self.model.name,
                    simulated=self.model.simulated, input_tokens=usage[0],
                    output_tokens=usage[1], latency_s=time.monotonic() - started,
                )
            )  # fmt: skip
            if parsed is not None:
                return parsed
            messages += [
                Message(role="assistant", content=text),
                Message(
                    role="user",
                    content=f"Your reply could not be used: {problem}\n"
                    "Reply again with the JSON object only, following the format above.",
                ),
            ]
        return None

    def write_log(self, path: Path) -> None:
        """Append every logged attempt to `path` (JSON lines) and clear the log."""
        with path.open("a", encoding="utf-8") as fh:
            for call in self.calls:
                fh.write(call.model_dump_json() + "\n")
        self.calls.clear()


def _parse(
    text: str, reply_model: type[R], check: Callable[[R], str | None] | None
) -> tuple[R | None, str | None]:
    try:
        data = extract_json(text)
        parsed = reply_model.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or '(top)'}: {e['msg']}" for e in exc.errors()[:5]
        )
        return None, f"it does not match the format: {problems}"
    except ValueError as exc:
        return None, str(exc)
    problem = check(parsed) if check is not None else None
    return (None, problem) if problem else (parsed, None)
