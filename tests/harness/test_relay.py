"""The metering relay, driven by a plain HTTP client: it forwards to the gateway URL, pins the
model, swaps its placeholder key for the real one (and refuses any other key), and writes one
ledger record per call (JSON replies and event streams), failures and refusals included."""

from __future__ import annotations

import json
import socket
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from loopwright.errors import ConfigError, UsageError
from loopwright.harness import MeteringRelay
from loopwright.harness._relay import (
    key_variables,
    probe_gateway,
    usage_from_body,
    usage_from_stream,
)
from loopwright.models import CallLabels, CostLedger, Price, PriceTable
from tests.models.test_gateway_server import DUMMY_KEY, Answer, Loopback, loopback

__all__ = ["loopback"]  # the fixture, re-exported for pytest

MODEL = "openai/relay-coder"
PRICES = PriceTable("relay-test-1", {MODEL: Price(2.0, 8.0, 0.5, simulated=True, note="test")})
LABELS = CallLabels(run="cell-1", candidate="external:test", role="small")
ENVIRON = {"OPENAI_API_KEY": DUMMY_KEY}  # the real key: only the relay has it


def post(
    url: str, body: dict[str, object], key: str | None, header: str = "Authorization"
) -> tuple[int, bytes]:
    headers = {"Content-Type": "application/json"}
    if key is not None:
        headers[header] = f"Bearer {key}" if header == "Authorization" else key
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            return reply.status, reply.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def test_relay_forwards_pins_the_model_and_meters_each_call(loopback: Loopback) -> None:
    loopback.script.answers += [
        Answer(text="hi", prompt_tokens=321, completion_tokens=45, cached_tokens=300),
        Answer(calls=(("bash", '{"command": "ls"}'),), prompt_tokens=10, completion_tokens=2),
    ]
    ledger = CostLedger()
    with MeteringRelay(loopback.url, prices=PRICES, environ=ENVIRON) as relay:
        assert relay.url.startswith("http://127.0.0.1:") and relay.url.endswith("/v1")
        with relay.metering(ledger, MODEL, LABELS):
            body = {
                "model": "claude-haiku-whatever",
                "messages": [{"role": "user", "content": "x"}],
            }
            status, reply = post(relay.url + "/chat/completions", body, relay.agent_key)
            assert status == 200 and json.loads(reply)["choices"][0]["message"]["content"] == "hi"
            assert post(relay.url + "/chat/completions", body, relay.agent_key)[0] == 200
        assert (
            post(relay.url + "/chat/completions", body, relay.agent_key)[0] == 503
        )  # not metering: refused
    # The model the agent asked for was replaced by the tier's binding; its placeholder key by
    # the real one, which only the relay holds.
    assert [r["model"] for r in loopback.script.requests] == ["relay-coder", "relay-coder"]
    assert loopback.script.headers[0]["authorization"] == f"Bearer {DUMMY_KEY}"
    first, second = ledger.records()
    assert (first.source, first.model, first.provider, first.ok) == ("relay", MODEL, "openai", True)
    assert (first.input_tokens, first.output_tokens, first.cache_read_tokens) == (321, 45, 300)
    assert first.cost_usd == pytest.approx((21 * 2.0 + 300 * 0.5 + 45 * 8.0) / 1e6)
    assert first.labels == LABELS and second.input_tokens == 10
    assert DUMMY_KEY not in "".join(r.model_dump_json() for r in ledger.records())


def test_relay_reads_chunked_request_bodies(loopback: Loopback) -> None:
    import http.client

    loopback.script.answers.append(Answer(text="ok", prompt_tokens=5, completion_tokens=1))
    ledger = CostLedger()
    with (
        MeteringRelay(loopback.url, prices=PRICES, environ=ENVIRON) as relay,
        relay.metering(ledger, MODEL, LABELS),
    ):
        port = int(relay.url.split(":")[2].split("/")[0])
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        body = json.dumps({"model": "x", "messages": [{"role": "user", "content": "hi"}]})
        conn.request("POST", "/v1/chat/completions", body=iter([body[:10].encode(), body[10:].encode()]),
                     headers={"Content-Type": "application/json", "x-api-key": relay.agent_key},
                     encode_chunked=True)  # fmt: skip
        assert conn.getresponse().status == 200
        conn.close()
    assert loopback.script.requests[0]["messages"][0]["content"] == "hi"
    assert [r.input_tokens for r in ledger.records()] == [5]


def test_relay_records_failed_calls(loopback: Loopback) -> None:
    from tests.models.test_gateway_server import Failure

    loopback.script.answers.append(Failure(429, "slow down"))
    ledger = CostLedger()
    with (
        MeteringRelay(loopback.url, prices=PRICES, environ=ENVIRON) as relay,
        relay.metering(ledger, MODEL, LABELS),
    ):
        status, _ = post(
            relay.url + "/chat/completions", {"model": "m", "messages": []}, relay.agent_key
        )
    assert status == 429
    (record,) = ledger.records()
    assert not record.ok and record.error is not None and "HTTP 429" in record.error
    assert record.input_tokens == 0


def test_relay_answers_502_and_records_an_unreachable_gateway() -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ledger = CostLedger()
    with (
        MeteringRelay(f"http://127.0.0.1:{port}/v1", prices=PRICES, environ=ENVIRON) as relay,
        relay.metering(ledger, MODEL, LABELS),
    ):
        status, body = post(relay.url + "/chat/completions", {"model": "m"}, relay.agent_key)
    assert status == 502 and b"gateway unreachable" in body
    assert [r.ok for r in ledger.records()] == [False]
    with pytest.raises(UsageError, match="nothing answers at the gateway URL"):
        probe_gateway(f"http://127.0.0.1:{port}/v1")
    with pytest.raises(ConfigError, match="not an http"):
        probe_gateway("localhost:4000")


@pytest.fixture
def streaming() -> Iterator[str]:
    """An upstream answering every POST with an OpenAI-style event stream, usage last."""
    events = [
        {"choices": [{"delta": {"content": "he"}}]},
        {"choices": [{"delta": {"content": "llo"}}]},
        {"choices": [], "usage": {"prompt_tokens": 70, "completion_tokens": 9}},
    ]

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            for event in events:
                self.wfile.write(b"data: " + json.dumps(event).encode() + b"\n\n")
            self.wfile.write(b"data: [DONE]\n\n")

        def log_message(self, format: str, *args: object) -> None:
            del format, args

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def test_relay_passes_streams_through_and_meters_their_usage(streaming: str) -> None:
    ledger = CostLedger()
    with (
        MeteringRelay(streaming, prices=PRICES, environ=ENVIRON) as relay,
        relay.metering(ledger, MODEL, LABELS),
    ):
        status, body = post(
            relay.url + "/chat/completions", {"model": "m", "stream": True}, relay.agent_key
        )
    assert status == 200
    assert body.count(b"data: ") == 4 and body.endswith(b"data: [DONE]\n\n")
    (record,) = ledger.records()
    assert (record.input_tokens, record.output_tokens) == (70, 9)


def test_usage_shapes_of_the_three_apis() -> None:
    anthropic = {"usage": {"input_tokens": 5, "output_tokens": 7, "cache_read_input_tokens": 100,
                           "cache_creation_input_tokens": 20}}  # fmt: skip
    tokens = usage_from_body(json.dumps(anthropic).encode())
    assert (tokens.input, tokens.output, tokens.cache_read, tokens.cache_write) == (125, 7, 100, 20)
    responses = {"type": "response.completed", "response": {"usage": {
        "input_tokens": 50, "output_tokens": 4, "input_tokens_details": {"cached_tokens": 30}}}}  # fmt: skip
    tokens = usage_from_body(json.dumps(responses).encode())
    assert (tokens.input, tokens.output, tokens.cache_read) == (50, 4, 30)
    stream = [
        b'data: {"type": "message_start", "message": {"usage": {"input_tokens": 12, "output_tokens": 1}}}\n',
        b"\n",
        b'data: {"type": "message_delta", "usage": {"output_tokens": 33}}\n',
    ]
    tokens = usage_from_stream(stream)
    assert (tokens.input, tokens.output) == (12, 33)
    assert usage_from_body(b"not json").input == 0


def test_relay_swaps_its_placeholder_for_the_real_key_and_refuses_any_other(
    loopback: Loopback,
) -> None:
    # A hostile agent tries the relay with a key of its own, with none, and with a mix; only
    # the placeholder the relay issued goes through, and upstream sees the real key instead.
    loopback.script.answers += [Answer(text="a"), Answer(text="b")]
    ledger = CostLedger()
    url = "/chat/completions"
    body: dict[str, object] = {"model": "m", "messages": []}
    with MeteringRelay(loopback.url, prices=PRICES, environ=ENVIRON) as relay:
        assert relay.agent_key.startswith("lw-relay-") and DUMMY_KEY not in relay.agent_key
        with relay.metering(ledger, MODEL, LABELS):
            own = post(relay.url + url, body, "sk-agent-own-key")
            none = post(relay.url + url, body, None)
            swapped = post(relay.url + url, body, relay.agent_key)
            as_header = post(relay.url + url, body, relay.agent_key, header="x-api-key")
    assert own[0] == 401 and b"did not issue" in own[1]
    assert none[0] == 401 and b"no key header" in none[1]
    assert swapped[0] == 200 and as_header[0] == 200
    assert len(loopback.script.requests) == 2  # the refused ones never left
    assert loopback.script.headers[0]["authorization"] == f"Bearer {DUMMY_KEY}"
    assert loopback.script.headers[1]["x-api-key"] == DUMMY_KEY
    assert "authorization" not in loopback.script.headers[1]
    assert [r.ok for r in ledger.records()] == [False, False, True, True]
    assert all("refused" in (r.error or "") for r in ledger.records()[:2])


def test_relay_sends_no_key_upstream_when_the_provider_has_none(loopback: Loopback) -> None:
    loopback.script.answers.append(Answer(text="a"))
    ledger = CostLedger()
    with (
        MeteringRelay(loopback.url, prices=PRICES, environ={}) as relay,
        relay.metering(ledger, MODEL, LABELS),
    ):
        status, _ = post(relay.url + "/chat/completions", {"model": "m"}, relay.agent_key)
    assert status == 200 and "authorization" not in loopback.script.headers[0]


def test_key_variables_name_the_providers_key() -> None:
    assert key_variables("anthropic")[0] == "ANTHROPIC_API_KEY"
    assert key_variables("openai") == ("OPENAI_API_KEY", "CODEX_API_KEY")
    assert key_variables("mistral") == ("MISTRAL_API_KEY",)
