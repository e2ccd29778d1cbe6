"""A loopback server speaking OpenAI `/v1/chat/completions` (JSON, non-streaming) with scripted
answers, for driving the real LiteLLM gateway without a key or the internet; and the tests of
the gateway's request/response conversion against it."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from loopwright.models import (
    CostLedger,
    GatewaySettings,
    LiteLLMGateway,
    Message,
    ToolCall,
    ToolSpec,
)

DUMMY_KEY = "sk-loopback-dummy-0123456789abcdef"


@dataclass(frozen=True)
class Answer:
    """One scripted answer: tool calls as (name, raw JSON arguments), text, and usage."""

    calls: tuple[tuple[str, str], ...] = ()
    text: str = ""
    prompt_tokens: int = 100
    completion_tokens: int = 20
    cached_tokens: int = 0
    delay_s: float = 0.0  # wait this long before answering (timeouts, concurrency)


@dataclass(frozen=True)
class Failure:
    """A scripted HTTP error answer (429, 500...)."""

    status: int
    message: str = "scripted failure"


@dataclass
class Script:
    """The answers in order, and every request (JSON body and headers) the server received."""

    answers: list[Answer | Failure]
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    handed: list[Answer | Failure] = field(default_factory=list)
    active: int = 0
    max_active: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def next(self, body: dict[str, Any], headers: dict[str, str]) -> Answer | Failure:
        with self.lock:
            self.requests.append(body)
            self.headers.append(headers)
            if not self.answers:
                return Failure(500, "script exhausted")
            return self.answers.pop(0)

    def sent(self) -> list[Answer]:
        """Every Answer handed out so far (not the failures)."""
        return [a for a in self.handed if isinstance(a, Answer)]


def completion_body(answer: Answer, model: str, number: int) -> dict[str, Any]:
    tool_calls = [
        {"id": f"call_{number}_{i}", "type": "function", "function": {"name": n, "arguments": a}}
        for i, (n, a) in enumerate(answer.calls)
    ]
    message: dict[str, Any] = {"role": "assistant", "content": answer.text or None}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return {
        "id": f"chatcmpl-{number}",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if tool_calls else "stop",
            }
        ],
        "usage": {
            "prompt_tokens": answer.prompt_tokens,
            "completion_tokens": answer.completion_tokens,
            "total_tokens": answer.prompt_tokens + answer.completion_tokens,
            "prompt_tokens_details": {"cached_tokens": answer.cached_tokens},
        },
    }


def _handler(script: Script) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length) or b"{}")
            if not self.path.endswith("/chat/completions"):
                self._send(404, {"error": {"message": f"no route {self.path}"}})
                return
            answer = script.next(body, {k.lower(): v for k, v in self.headers.items()})
            with script.lock:
                script.handed.append(answer)
                number = len(script.handed)
                script.active += 1
                script.max_active = max(script.max_active, script.active)
            try:
                self._answer(answer, body, number)
            finally:
                with script.lock:
                    script.active -= 1

        def _answer(self, answer: Answer | Failure, body: dict[str, Any], number: int) -> None:
            if isinstance(answer, Answer) and answer.delay_s:
                time.sleep(answer.delay_s)
            if isinstance(answer, Failure):
                error = {"message": answer.message, "type": "server_error", "code": None}
                self._send(answer.status, {"error": error})
            else:
                self._send(200, completion_body(answer, str(body.get("model")), number))

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            try:
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout test)

        def log_message(self, format: str, *args: object) -> None:  # quiet
            del format, args

    return Handler


@dataclass
class Loopback:
    script: Script
    url: str


@pytest.fixture
def loopback() -> Iterator[Loopback]:
    """A server on 127.0.0.1 with an empty script: tests append answers to `script.answers`."""
    script = Script([])
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(script))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield Loopback(script, f"http://127.0.0.1:{server.server_address[1]}/v1")
    finally:
        server.shutdown()
        server.server_close()


def gateway(url: str, ledger: CostLedger | None = None, **settings: Any) -> LiteLLMGateway:
    return LiteLLMGateway(
        "openai/loopback-coder",
        GatewaySettings(api_base=url, **settings),
        api_key=DUMMY_KEY,
        ledger=ledger,
        sleep=lambda s: None,
    )


def test_gateway_round_trips_tool_calls_and_usage_through_an_openai_server(
    loopback: Loopback,
) -> None:
    malformed = '{"path": "a.py", '  # kept raw: the runtime turns it into a tool error
    loopback.script.answers.append(
        Answer(
            calls=(("read_file", '{"path": "x.md"}'), ("write_file", malformed)),
            text="reading",
            prompt_tokens=321,
            completion_tokens=45,
            cached_tokens=300,
        )
    )
    ledger = CostLedger()
    history = [
        Message("system", "be brief"),
        Message("user", "do it"),
        Message("assistant", "", (ToolCall("c0", "list_files", '{"path": "."}'),)),
        Message("tool", "a.py", tool_call_id="c0", name="list_files"),
    ]
    tools = [
        ToolSpec("read_file", "read a file", {"type": "object", "properties": {"path": {}}}),
        ToolSpec("finish", "stop"),
    ]
    response = gateway(loopback.url, ledger).chat(history, tools)

    assert [(c.name, c.arguments_json) for c in response.tool_calls] == [
        ("read_file", '{"path": "x.md"}'),
        ("write_file", malformed),
    ]
    assert response.text == "reading" and response.model == "openai/loopback-coder"
    assert (response.usage.input_tokens, response.usage.output_tokens) == (321, 45)
    assert response.usage.cached_tokens == 300
    assert not response.simulated and response.latency_s > 0

    body = loopback.script.requests[0]
    assert body["model"] == "loopback-coder"
    assert [m["role"] for m in body["messages"]] == ["system", "user", "assistant", "tool"]
    assert body["messages"][2]["tool_calls"][0]["function"] == {
        "name": "list_files",
        "arguments": '{"path": "."}',
    }
    assert body["messages"][3]["tool_call_id"] == "c0"
    # Only our function tools are offered; no provider-side (web search) tool or option.
    assert [t["type"] for t in body["tools"]] == ["function", "function"]
    assert [t["function"]["name"] for t in body["tools"]] == ["read_file", "finish"]
    assert "web_search_options" not in body
    assert loopback.script.headers[0]["authorization"] == f"Bearer {DUMMY_KEY}"

    (entry,) = ledger.records()
    assert (entry.provider, entry.model, entry.ok, entry.attempt) == (
        "openai",
        "openai/loopback-coder",
        True,
        1,
    )
    assert (entry.input_tokens, entry.output_tokens, entry.cache_read_tokens) == (321, 45, 300)
    assert entry.cost_usd is None  # not in the price table: unknown, not guessed


def test_gateway_sends_no_tools_key_when_none_are_offered(loopback: Loopback) -> None:
    loopback.script.answers.append(Answer(text="hello"))
    response = gateway(loopback.url).chat([Message("user", "hi")], [])
    assert response.text == "hello" and response.tool_calls == ()
    assert "tools" not in loopback.script.requests[0]
