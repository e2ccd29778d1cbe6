"""Retries: driven by LiteLLM's own mock error sentinels (`mock_response="litellm.RateLimitError"`
and friends) and by a loopback server answering 429/500 before 200. Retried errors back off
with a seeded jitter; context-window and auth errors fail at once; every attempt is recorded."""

from __future__ import annotations

import socket
import threading
from pathlib import Path
from typing import Any

import pytest

from loopwright.models import (
    CallLabels,
    CostLedger,
    GatewayError,
    GatewaySettings,
    LiteLLMGateway,
    Message,
    ModelError,
    ProviderLimits,
    import_litellm,
)
from loopwright.records import EventWriter, read_events
from loopwright.runtime import Runner
from loopwright.sandbox import LocalSandbox, create_workspace
from tests.models.test_gateway_server import Answer, Failure, Loopback, loopback
from tests.runtime.conftest import agent, chain
from tests.taskfactory import make_calc_task

__all__ = ["loopback"]  # the fixture, re-exported for pytest

HI = [Message("user", "hi")]
litellm = import_litellm()  # with its network price-map fetch disabled


class Sentinels:
    """`litellm.completion` with one `mock_response` per attempt, in order."""

    def __init__(self, *responses: str | Exception) -> None:
        self.responses = list(responses)
        self.calls = 0

    def __call__(self, **request: Any) -> Any:
        self.calls += 1
        return litellm.completion(**request, mock_response=self.responses.pop(0))


def make(
    completion: Sentinels | None = None, *, seed: int = 0, max_attempts: int = 4, **kw: Any
) -> tuple[LiteLLMGateway, CostLedger, list[float]]:
    ledger, sleeps = CostLedger(), []
    gateway = LiteLLMGateway(
        kw.pop("model", "openai/mock-model"),
        GatewaySettings(max_attempts=max_attempts, **kw),
        api_key="sk-mock-key-not-real-000000",
        ledger=ledger,
        seed=seed,
        sleep=sleeps.append,
        completion=completion,
    )
    return gateway, ledger, sleeps


def test_rate_limit_and_server_error_are_retried_then_succeed() -> None:
    mock = Sentinels("litellm.RateLimitError", "litellm.InternalServerError", "all good")
    gateway, ledger, sleeps = make(mock)
    response = gateway.chat(HI, [])
    assert response.text == "all good" and mock.calls == 3
    records = ledger.records()
    assert [(r.attempt, r.ok) for r in records] == [(1, False), (2, False), (3, True)]
    assert "RateLimitError" in (records[0].error or "")
    assert "InternalServerError" in (records[1].error or "")
    assert records[2].input_tokens > 0 and records[0].input_tokens == 0
    # Exponential backoff with jitter in [0.5, 1) of 1s, then of 2s.
    assert len(sleeps) == 2
    assert 0.5 <= sleeps[0] < 1.0 and 1.0 <= sleeps[1] < 2.0


def test_backoff_jitter_is_seeded() -> None:
    def delays(seed: int) -> list[float]:
        gateway, _, sleeps = make(
            Sentinels("litellm.RateLimitError", "litellm.RateLimitError", "ok"), seed=seed
        )
        gateway.chat(HI, [])
        return sleeps

    assert delays(1) == delays(1)
    assert delays(1) != delays(2)


def test_context_window_exceeded_is_not_retried() -> None:
    mock = Sentinels("litellm.ContextWindowExceededError", "never used")
    gateway, ledger, sleeps = make(mock)
    with pytest.raises(GatewayError) as info:
        gateway.chat(HI, [])
    assert info.value.kind == "context_window" and info.value.attempts == 1
    assert "context window" in str(info.value) and "max_turns" in str(info.value)
    assert mock.calls == 1 and sleeps == []
    assert [(r.attempt, r.ok) for r in ledger.records()] == [(1, False)]


def test_retries_give_up_after_max_attempts_with_a_model_error() -> None:
    mock = Sentinels(*["litellm.RateLimitError"] * 3)
    gateway, ledger, sleeps = make(mock, max_attempts=3)
    with pytest.raises(ModelError, match="after 3 attempts") as info:
        gateway.chat(HI, [])
    assert isinstance(info.value, GatewayError) and info.value.kind == "rate_limit"
    assert [r.attempt for r in ledger.records()] == [1, 2, 3] and len(sleeps) == 2


def test_auth_error_is_not_retried_and_says_which_key_to_set() -> None:
    error = litellm.AuthenticationError(
        message="Incorrect API key provided", llm_provider="openai", model="mock-model"
    )
    mock = Sentinels(error, "never used")
    gateway, ledger, _ = make(mock)
    with pytest.raises(GatewayError) as info:
        gateway.chat(HI, [])
    assert info.value.kind == "auth" and mock.calls == 1
    assert "OPENAI_API_KEY" in str(info.value) and len(ledger.records()) == 1


def test_loopback_429_and_500_are_retried_by_us_not_by_the_sdk(loopback: Loopback) -> None:
    loopback.script.answers.extend(
        [Failure(429, "slow down"), Failure(500, "oops"), Answer(text="done", prompt_tokens=9)]
    )
    gateway, ledger, sleeps = make(api_base=loopback.url)
    response = gateway.chat(HI, [])
    assert response.text == "done" and response.usage.input_tokens == 9
    assert len(loopback.script.requests) == 3  # one HTTP request per attempt: no hidden retries
    assert [(r.attempt, r.ok) for r in ledger.records()] == [(1, False), (2, False), (3, True)]
    assert len(sleeps) == 2


def test_request_timeout_is_retried(loopback: Loopback) -> None:
    loopback.script.answers.extend([Answer(text="late", delay_s=3.0), Answer(text="on time")])
    gateway, ledger, _ = make(api_base=loopback.url, timeout_s=0.5)
    assert gateway.chat(HI, []).text == "on time"
    first, second = ledger.records()
    assert not first.ok and "Timeout" in (first.error or "") and second.ok


def test_a_provider_that_is_down_is_named_by_its_url(tmp_path: Path) -> None:
    """A refused connection (nothing listens on the port) gives up after max_attempts with an
    error naming the URL it could not reach and the fix, not a bare "500" (issue 31)."""
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}/v1"
    gateway, ledger, sleeps = make(api_base=url, max_attempts=2, timeout_s=5)
    with pytest.raises(GatewayError) as info:
        gateway.chat(HI, [])
    text = str(info.value)
    assert info.value.kind == "connection" and info.value.attempts == 2 and len(sleeps) == 1
    assert f"could not connect to {url}" in text and "check api_base" in text
    assert ledger.records() == []  # the server saw nothing


def test_per_provider_concurrency_limit_holds(loopback: Loopback) -> None:
    loopback.script.answers.extend([Answer(text=str(i), delay_s=0.3) for i in range(4)])
    limits = ProviderLimits(max_concurrency=1)
    gateways = [
        LiteLLMGateway(
            "openai/mock-model",
            GatewaySettings(api_base=loopback.url),
            api_key="sk-mock-key-not-real-000000",
            limits=limits,
        )
        for _ in range(4)
    ]
    threads = [threading.Thread(target=g.chat, args=(HI, [])) for g in gateways]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert len(loopback.script.requests) == 4
    assert loopback.script.max_active == 1


def test_in_a_run_each_attempt_is_recorded_under_its_node(tmp_path: Path) -> None:
    """Through the Runner: a rate limit retried into a reply (one model_call event, two ledger
    attempts), then a context-window overflow that fails its node at once and is recorded in the
    events and the ledger; the run goes on. Every attempt carries its node and role."""
    task = make_calc_task(tmp_path / "bench")
    workspace = create_workspace(task.repo_dir, tmp_path / "ws")
    mock = Sentinels("litellm.RateLimitError", "studied", "litellm.ContextWindowExceededError")
    gateway, ledger, sleeps = make(mock)
    runner = Runner(gateway, LocalSandbox(), cost_fn=lambda m, u: None, price_table="t")
    events_path = tmp_path / "run" / "events.jsonl"
    workflow = chain(agent("study"), agent("builder"))
    with EventWriter(events_path) as writer:
        outcome = runner.run(
            workflow, task, workspace.path, task.root / "instruction.md", writer,
            labels=CallLabels(run="r1", candidate="c1"),
        )  # fmt: skip
    assert outcome.status == "completed"
    assert outcome.node_status == {"study": "ok", "builder": "error"}
    attempts = [(r.labels.node, r.labels.role, r.attempt, r.ok) for r in ledger.records()]
    assert attempts == [
        ("study", "study", 1, False), ("study", "study", 2, True), ("builder", "builder", 1, False),
    ]  # fmt: skip
    assert {(r.labels.run, r.labels.candidate) for r in ledger.records()} == {("r1", "c1")}
    assert len(sleeps) == 1  # one backoff, before the retry
    calls = [e for e in read_events(events_path) if e.type == "model_call"]
    assert [(c.node_id, c.error is None) for c in calls] == [("study", True), ("builder", False)]
    assert "context window" in (calls[1].error or "")
    (error,) = [e for e in read_events(events_path) if e.type == "error"]
    assert error.node_id == "builder" and error.where == "model_call"


def test_a_400_saying_the_body_was_not_json_is_a_client_error_row_not_a_retry(
    loopback: Loopback,
) -> None:
    loopback.script.answers += [
        Failure(400, "We could not parse the JSON body of your request."),
        Answer(text="never reached"),
    ]
    gateway, ledger, sleeps = make(api_base=loopback.url)
    with pytest.raises(GatewayError) as caught:
        gateway.chat(HI, [])
    assert caught.value.kind == "client" and caught.value.attempts == 1
    assert "bug in loopwright" in str(caught.value)
    (row,) = ledger.records()
    assert (row.ok, row.error_kind, row.attempt) == (False, "client", 1)
    assert row.request_bytes is not None and row.request_bytes > len("hi")
    assert sleeps == [] and len(loopback.script.requests) == 1
