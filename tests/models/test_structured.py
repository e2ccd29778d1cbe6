"""ask_structured: fenced and bare JSON, a retry that sends the error back, the returned
fallback when retries run out, text replies, and every attempt metered like any other call."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from loopwright.models import (
    CostLedger,
    GatewaySettings,
    LiteLLMGateway,
    Message,
    ModelError,
    ReplyError,
    ScriptedModel,
    ToolSpec,
    ask_structured,
    extract_json,
    import_litellm,
    strip_fence,
)


class Verdict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    verdict: str
    score: int


GOOD = json.dumps({"verdict": "ok", "score": 3})


class Recorder:
    """A scripted model replying from a list and keeping every conversation it was sent."""

    def __init__(self, *replies: str | ModelError) -> None:
        self.replies = list(replies)
        self.sent: list[list[Message]] = []
        self.model = ScriptedModel(self._reply, name="meta-test")

    def _reply(self, messages: Sequence[Message], tools: Sequence[ToolSpec]) -> str:
        self.sent.append(list(messages))
        reply = self.replies.pop(0)
        if isinstance(reply, ModelError):
            raise reply
        return reply


def test_a_fenced_json_reply_is_read() -> None:
    meta = Recorder(f"```json\n{GOOD}\n```")
    answer = ask_structured(meta.model, "judge it", Verdict)
    assert answer.value == Verdict(verdict="ok", score=3)
    assert [(a.number, a.ok, a.error) for a in answer.attempts] == [(1, True, None)]
    assert answer.problem is None
    assert meta.sent == [[Message(role="user", content="judge it")]]


def test_bare_json_and_json_with_prose_around_it_are_read() -> None:
    meta = Recorder(GOOD, f"Here it is: {GOOD} -- hope that helps")
    assert ask_structured(meta.model, "a", Verdict).value == Verdict(verdict="ok", score=3)
    assert ask_structured(meta.model, "b", Verdict).value == Verdict(verdict="ok", score=3)
    assert extract_json('```\n{"a": [1, {"b": 2}]}\n```') == {"a": [1, {"b": 2}]}
    with pytest.raises(ReplyError, match="no JSON object"):
        extract_json("no braces here")


def test_an_invalid_reply_is_retried_with_the_validation_error() -> None:
    meta = Recorder(json.dumps({"verdict": "ok", "score": "many"}), GOOD)
    answer = ask_structured(meta.model, "judge it", Verdict, retries=1)
    assert answer.value == Verdict(verdict="ok", score=3)
    assert [a.ok for a in answer.attempts] == [False, True]
    assert "score" in (answer.attempts[0].error or "")
    retry = meta.sent[1]
    assert [m.role for m in retry] == ["user", "assistant", "user"]
    assert retry[1].content == json.dumps({"verdict": "ok", "score": "many"})
    assert "does not match the schema" in retry[2].content and "score" in retry[2].content


def test_a_refusing_check_is_retried_with_its_reason_through_the_retry_prompt() -> None:
    low = json.dumps({"verdict": "ok", "score": 0})
    meta = Recorder(low, GOOD)
    answer = ask_structured(
        meta.model,
        "judge it",
        Verdict,
        check=lambda v: "score must be positive" if v.score <= 0 else None,
        retry_prompt=lambda error: f"FIX: {error}",
    )
    assert answer.value is not None and answer.value.score == 3
    assert meta.sent[1][2].content == "FIX: score must be positive"


def test_always_invalid_returns_no_value_with_every_attempt_as_the_fallback() -> None:
    meta = Recorder("no", "{not json}", json.dumps({"verdict": "ok"}))
    answer = ask_structured(meta.model, "judge it", Verdict, retries=2)
    assert answer.value is None
    assert [a.ok for a in answer.attempts] == [False, False, False]
    assert "no JSON object" in (answer.attempts[0].error or "")
    assert "not valid JSON" in (answer.attempts[1].error or "")
    assert answer.problem is not None and "score" in answer.problem
    assert len(meta.sent) == 3  # 1 + retries calls, no more
    once = Recorder("no")
    assert ask_structured(once.model, "judge it", Verdict, retries=0).value is None
    assert len(once.sent) == 1


def test_a_failed_call_is_an_attempt_and_the_same_conversation_is_sent_again() -> None:
    meta = Recorder(ModelError("rate limited"), GOOD)
    answer = ask_structured(meta.model, "judge it", Verdict)
    assert answer.value is not None
    first = answer.attempts[0]
    assert (first.ok, first.reply, first.usage.input_tokens) == (False, "", 0)
    assert "the call failed: rate limited" in (first.error or "")
    assert meta.sent[0] == meta.sent[1]


def test_a_text_reply_is_taken_without_its_fence() -> None:
    meta = Recorder("```markdown\nDo the work.\n{notes}\n```")
    assert ask_structured(meta.model, "rewrite", str).value == "Do the work.\n{notes}"
    assert strip_fence("  plain text \n") == "plain text"


def test_negative_retries_are_refused() -> None:
    with pytest.raises(ValueError, match="retries"):
        ask_structured(ScriptedModel([GOOD]), "x", Verdict, retries=-1)


def test_every_attempt_is_metered_like_any_other_call() -> None:
    litellm = import_litellm()  # with its network price-map fetch disabled
    replies = ["not json at all", GOOD]
    sent: list[int] = []

    def completion(**request: Any) -> Any:
        sent.append(len(request["messages"]))
        return litellm.completion(**request, mock_response=replies.pop(0))

    ledger = CostLedger()
    gateway = LiteLLMGateway(
        "openai/mock-model",
        GatewaySettings(max_attempts=1),
        api_key="sk-mock-key-not-real-000000",
        ledger=ledger,
        completion=completion,
    )
    answer = ask_structured(gateway, "judge it", Verdict)
    assert answer.value == Verdict(verdict="ok", score=3)
    records = ledger.records()
    assert len(records) == len(answer.attempts) == 2
    assert [r.input_tokens for r in records] == [a.usage.input_tokens for a in answer.attempts]
    assert [r.output_tokens for r in records] == [a.usage.output_tokens for a in answer.attempts]
    assert [r.ok for r in records] == [True, True]  # both calls answered; one reply was bad
    assert sent == [1, 3]  # the retry went through the gateway with the reply and the error
    assert records[0].input_tokens > 0
    assert answer.usage.input_tokens == sum(r.input_tokens for r in records)
