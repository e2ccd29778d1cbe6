"""Calling the meta model: render the phase prompt and ask it through `models.ask_structured`.

A reply must be one JSON object (a code fence around it, or prose before or after it, is
tolerated) that validates against the phase's model and the phase's rules. When it does not,
the model is asked once more with the problem stated (after a ModelError, the same prompt is
sent again); when the second attempt fails too, `ask` returns None and the phase falls back to
its documented rule (docs/research.md, "Malformed replies"). Every attempt is logged as a
MetaCall.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict

from loopwright.models import ChatModel, ask_structured, extract_json, label_scope
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
        reply or a failed call: those are logged and retried. Gateway calls are labelled
        with the role `meta:PHASE` in the cost ledger."""
        with label_scope(role=f"meta:{phase.lower()}"):
            answer = ask_structured(
                self.model, render(phase, context), reply_model, ATTEMPTS - 1, check=check
            )
        for attempt in answer.attempts:
            self.calls.append(
                MetaCall(
                    phase=phase, subject=subject, attempt=attempt.number, ok=attempt.ok,
                    error=attempt.error, reply=attempt.reply[:_EXCERPT], model=self.model.name,
                    simulated=self.model.simulated, input_tokens=attempt.usage.input_tokens,
                    output_tokens=attempt.usage.output_tokens, latency_s=attempt.latency_s,
                )
            )  # fmt: skip
        return answer.value

    def write_log(self, path: Path) -> None:
        """Append every logged attempt to `path` (JSON lines) and clear the log."""
        with path.open("a", encoding="utf-8") as fh:
            for call in self.calls:
                fh.write(call.model_dump_json() + "\n")
        self.calls.clear()
