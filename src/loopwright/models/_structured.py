"""`ask_structured`: the one way loopwright asks a model for a structured reply.

Every meta-model question (reflection, crossover, prompt rewriting, the research loop's
phases) goes through it, so a reply is read the same way everywhere:

1. The reply's text is stripped; a code fence around the whole of it is removed.
2. For `schema=str` the (unfenced) text is the value. Otherwise the first JSON object in it is
   decoded (prose before or after the object is tolerated) and validated by pydantic against
   `schema` (a BaseModel, or any type a `pydantic.TypeAdapter` takes).
3. `check`, when given, may still refuse the value: it returns the problem, or None.

A reply that fails any step, or a call that raises a ModelError, is one failed attempt. After
a bad reply the model is asked again with the reply and the problem appended to the
conversation (`retry_prompt`); after a failed call the same conversation is sent again. Every
attempt is one `model.chat` call, so a metered model (the gateway's ledger, the A/B harness's
meter) records each one like any other call, and each attempt's usage is returned too.

**When the retries run out, the fallback is a returned value, not an error**: `Answer.value`
is None and `Answer.attempts` says what each attempt got wrong. Every caller has a documented
offline fallback of its own (the reflection digest rules, the offline graft and rewrite, a
research phase's rule), and a bad reply is data, never fatal to a run, so raising would only
make every caller write the same `except`.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar, cast

from pydantic import TypeAdapter, ValidationError

from loopwright.models._errors import ModelError
from loopwright.models._types import ChatModel, Message, Usage

__all__ = [
    "Answer",
    "AskAttempt",
    "ReplyError",
    "ask_structured",
    "default_retry_prompt",
    "extract_json",
    "parse_structured",
    "strip_fence",
]

S = TypeVar("S")

_FENCE = re.compile(r"^```[A-Za-z0-9_-]*[ \t]*\n(.*)\n```$", re.DOTALL)
_MAX_PROBLEMS = 6


class ReplyError(ValueError):
    """A model's reply cannot be used; the message says what to fix (it is sent back on retry)."""


@dataclass(frozen=True, slots=True)
class AskAttempt:
    """One call of one structured ask: its number (from 1), whether its reply was used, the
    problem when it was not, the reply's text, and the call's usage and latency (zero usage
    and an empty reply when the call itself failed)."""

    number: int
    ok: bool
    error: str | None
    reply: str
    usage: Usage
    latency_s: float


@dataclass(frozen=True, slots=True)
class Answer(Generic[S]):
    """What a structured ask got: the value (None when every attempt failed) and every attempt."""

    value: S | None
    attempts: tuple[AskAttempt, ...]

    @property
    def problem(self) -> str | None:
        """The last attempt's problem (None when the ask succeeded)."""
        return self.attempts[-1].error if self.attempts and self.value is None else None

    @property
    def usage(self) -> Usage:
        """The usage of every attempt, summed."""
        total = Usage()
        for attempt in self.attempts:
            total = total + attempt.usage
        return total


def strip_fence(text: str) -> str:
    """`text` stripped, without a code fence (```lang ... ```) around the whole of it."""
    body = text.strip()
    fenced = _FENCE.match(body)
    return fenced.group(1) if fenced else body


def extract_json(text: str) -> object:
    """The first JSON object in `text` (a fence, or prose before or after it, is tolerated).

    Raises ReplyError when there is no object or it does not decode."""
    body = strip_fence(text)
    start = body.find("{")
    if start < 0:
        raise ReplyError("the reply holds no JSON object; reply with one JSON object only")
    try:
        value, _ = json.JSONDecoder().raw_decode(body[start:])
    except json.JSONDecodeError as exc:
        raise ReplyError(f"the reply is not valid JSON: {exc}") from None
    return value


def default_retry_prompt(problem: str) -> str:
    """The message sent after an unusable reply: the problem, and to reply again."""
    return (
        f"Your reply could not be used: {problem}\n"
        "Reply again with the JSON object only, following the format above."
    )


def ask_structured(
    model: ChatModel,
    prompt: str | Sequence[Message],
    schema: type[S],
    retries: int = 1,
    *,
    check: Callable[[S], str | None] | None = None,
    retry_prompt: Callable[[str], str] = default_retry_prompt,
) -> Answer[S]:
    """Ask `model` for a reply of type `schema`, with up to `retries` retries (1 + `retries`
    calls at most; see the module docstring for how a reply is read and retried).

    `prompt` is the user message, or the whole conversation. Never raises for a bad reply or a
    failed call (the Answer's value is then None); raises ValueError when `retries` < 0.
    Deterministic when the model is."""
    if retries < 0:
        raise ValueError(f"retries must be 0 or more, got {retries}")
    messages = [Message(role="user", content=prompt)] if isinstance(prompt, str) else [*prompt]
    attempts: list[AskAttempt] = []
    for number in range(1, retries + 2):
        started = time.monotonic()
        try:
            response = model.chat(messages, [])
        except ModelError as exc:
            took = time.monotonic() - started
            attempts.append(AskAttempt(number, False, f"the call failed: {exc}", "", Usage(), took))
            continue
        took = time.monotonic() - started
        read = _read(response.text, schema, check)
        if not isinstance(read, _Refused):
            attempts.append(AskAttempt(number, True, None, response.text, response.usage, took))
            return Answer(read, tuple(attempts))
        attempts.append(AskAttempt(number, False, read.why, response.text, response.usage, took))
        messages += [
            Message(role="assistant", content=response.text),
            Message(role="user", content=retry_prompt(read.why)),
        ]
    return Answer(None, tuple(attempts))


@dataclass(frozen=True, slots=True)
class _Refused:
    """Why a reply cannot be used (a class of its own: a `str` schema makes values strings)."""

    why: str


def _read(text: str, schema: type[S], check: Callable[[S], str | None] | None) -> S | _Refused:
    try:
        value = parse_structured(text, schema)
    except ReplyError as exc:
        return _Refused(str(exc))
    problem = check(value) if check is not None else None
    return _Refused(problem) if problem else value


def parse_structured(text: str, schema: type[S]) -> S:
    """`text` read as `ask_structured` reads a reply (steps 1 and 2 of the module docstring).
    Raises ReplyError saying what is wrong. Deterministic."""
    if schema is str:
        return cast(S, strip_fence(text))
    data = extract_json(text)
    try:
        return TypeAdapter(schema).validate_python(data)
    except ValidationError as exc:
        problems = [
            f"{'.'.join(str(p) for p in e['loc']) or '(top level)'}: {e['msg']}"
            for e in exc.errors()[:_MAX_PROBLEMS]
        ]
        raise ReplyError("the JSON does not match the schema: " + "; ".join(problems)) from None
