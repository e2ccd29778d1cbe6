"""The metering relay: a loopback HTTP proxy in front of the gateway URL, for external agents.

External agents (Claude Code, Codex, mini-swe-agent, OpenHands) call a model API themselves,
so the harness cannot wrap their model the way it wraps a native loop's. It points them at
this relay instead; the relay forwards every request to the same path under the gateway URL
and writes one LedgerRecord per model call into the cell's ledger, exactly as the gateway
does for native loops. So one ledger meters every loop.

- The `model` field of a JSON request body is pinned to the cell's tier binding (as LiteLLM
  would send it: the name after the provider prefix), so an agent cannot pick another model.
- Usage is read from the reply: OpenAI chat completions and Responses, Anthropic Messages,
  as one JSON body or as a server-sent-event stream (passed through as it arrives).
- A failed call (an HTTP error or an unreachable gateway) is a record with `ok=False` and its
  redacted error. Requests that arrive while no cell is being metered get 503.
- The credential boundary: the agent is given `agent_key`, a placeholder made afresh for every
  relay, in place of every provider key variable it needs (GatewaySettings.agent_key); the
  relay forwards a request only when each key header it carries (Authorization: Bearer,
  x-api-key, api-key, x-goog-api-key) holds that placeholder, and swaps it for the real key of
  the bound model's provider (`key_variables`, read from the relay's environment) on the way
  out. Any other key, or none, is refused with 401 and recorded as a failed call. So the real
  key never enters the agent's process, and the relay is no open door for a key of its own.
- Other headers are passed through; no header is ever recorded.
"""

from __future__ import annotations

import contextlib
import hmac
import http.client
import json
import os
import secrets
import socket
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import SplitResult, urlsplit

from loopwright.errors import ConfigError, UsageError
from loopwright.harness._relay_usage import RelayTokens, usage_from_body, usage_from_stream
from loopwright.models import (
    CallLabels,
    CostLedger,
    LedgerRecord,
    PriceTable,
    Usage,
    provider_of,
    redact,
)

__all__ = [
    "RELAY_SOURCE",
    "MeteringRelay",
    "RelayTokens",
    "check_gateway_url",
    "key_variables",
    "probe_gateway",
    "usage_from_body",
    "usage_from_stream",
]

_HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailers",
        "transfer-encoding",
        "upgrade",
        "host",
        "content-length",
        "accept-encoding",
    }
)
_ERROR_CHARS = 500
_KEY_HEADERS = frozenset({"authorization", "x-api-key", "api-key", "x-goog-api-key"})
_KEY_VARIABLES = {
    "anthropic": ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"),
    "openai": ("OPENAI_API_KEY", "CODEX_API_KEY"),
    "together_ai": ("TOGETHERAI_API_KEY",),
}
AGENT_KEY_PREFIX = "lw-relay-"
RELAY_SOURCE = "relay"
"""The ledger `source` of a call metered by the relay (an external agent's own HTTP call)."""


def key_variables(provider: str) -> tuple[str, ...]:
    """The environment variables that may hold `provider`'s real key, in the order the relay
    reads them: `<PROVIDER>_API_KEY` (and Anthropic's auth token, Codex's key)."""
    return _KEY_VARIABLES.get(provider, (f"{provider.upper()}_API_KEY",))


def swap_key(headers: Mapping[str, str], placeholder: str, real: str | None) -> dict[str, str]:
    """`headers` with the placeholder in every key header replaced by `real` (the key header
    dropped when there is no real key: a server that needs none). ValueError naming what was
    wrong when there is no key header, or one holds anything but the placeholder."""
    out, found = {}, False
    for name, value in headers.items():
        if name.lower() not in _KEY_HEADERS:
            out[name] = value
            continue
        scheme, _, rest = value.strip().partition(" ")
        presented = rest.strip() if scheme.lower() == "bearer" and rest else value.strip()
        if not hmac.compare_digest(presented.encode(), placeholder.encode()):
            raise ValueError(f"its {name} header holds a key the relay did not issue")
        found = True
        if real:
            out[name] = value.replace(presented, real)
    if not found:
        raise ValueError("it carries no key header (Authorization, x-api-key, api-key)")
    return out


def check_gateway_url(url: str) -> SplitResult:
    """The parts of a gateway URL; ConfigError unless it is http(s) with a host."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(
            f"gateway URL {url!r} is not an http(s) URL",
            fix="pass --gateway-base-url http://HOST:PORT/PATH",
        )
    return parts


def probe_gateway(url: str, timeout_s: float = 5.0) -> None:
    """Raise UsageError when nothing accepts a connection at the gateway URL's host and port
    (a typo would otherwise fail every cell, after retries). Sends nothing: spends nothing."""
    parts = check_gateway_url(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        socket.create_connection((parts.hostname or "", port), timeout=timeout_s).close()
    except OSError as exc:
        raise UsageError(
            f"nothing answers at the gateway URL {url}",
            got=f"{type(exc).__name__}: {exc}",
            fix="start the gateway, or pass the right --gateway-base-url",
        ) from None


@dataclass(frozen=True, slots=True)
class _Meter:
    ledger: CostLedger
    model: str
    labels: CallLabels


class MeteringRelay:
    """A loopback relay in front of `upstream` (the gateway URL). Use as a context manager;
    `url` is the base URL and `agent_key` the placeholder key to give external agents (the
    upstream path on 127.0.0.1:PORT). Meter a cell's calls inside `with relay.metering(ledger,
    model, labels):`. The real provider keys are read from `environ` (default os.environ, at
    each call) and sent upstream only by the relay. Thread-safe."""

    def __init__(
        self,
        upstream: str,
        *,
        prices: PriceTable,
        timeout_s: float = 600.0,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        parts = check_gateway_url(upstream)
        self.upstream = upstream.rstrip("/")
        self.agent_key = AGENT_KEY_PREFIX + secrets.token_urlsafe(24)
        self._environ = environ
        self._parts = parts
        self.prices = prices
        self.timeout_s = timeout_s
        self._meter: _Meter | None = None
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        path = self._parts.path.rstrip("/")
        return f"http://127.0.0.1:{self._server.server_address[1]}{path}"

    def __enter__(self) -> MeteringRelay:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop serving (idempotent)."""
        if self._thread.is_alive():
            self._server.shutdown()
        self._server.server_close()

    @contextlib.contextmanager
    def metering(self, ledger: CostLedger, model: str, labels: CallLabels) -> Iterator[None]:
        """Record every call made through the relay inside the block in `ledger`, under the
        bound `model` (provider/model) and `labels`."""
        with self._lock:
            self._meter = _Meter(ledger, model, labels)
        try:
            yield
        finally:
            with self._lock:
                self._meter = None

    def real_key(self, model: str) -> str | None:
        """The real key of `model`'s provider (see key_variables), or None when none is set."""
        environ = self._environ if self._environ is not None else os.environ
        found = (environ.get(name) for name in key_variables(provider_of(model)))
        return next((key for key in found if key), None)

    def current(self) -> _Meter | None:
        with self._lock:
            return self._meter

    def connection(self) -> http.client.HTTPConnection:
        parts = self._parts
        cls = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        return cls(parts.hostname or "", parts.port, timeout=self.timeout_s)

    def record(self, meter: _Meter, latency: float, tokens: RelayTokens, error: str | None) -> None:
        usage = Usage(tokens.input, tokens.output, tokens.cache_read)
        meter.ledger.record(
            LedgerRecord(
                source=RELAY_SOURCE,
                t=time.time(),
                provider=provider_of(meter.model),
                model=meter.model,
                attempt=1,
                ok=error is None,
                error=None if error is None else redact(error)[:_ERROR_CHARS],
                input_tokens=tokens.input,
                output_tokens=tokens.output,
                cache_read_tokens=tokens.cache_read,
                cache_write_tokens=tokens.cache_write,
                latency_s=max(latency, 0.0),
                cost_usd=self.prices.cost_usd(meter.model, usage),
                price_table=self.prices.version,
                labels=meter.labels,
            )
        )


def pinned_body(body: bytes, model: str) -> bytes:
    """`body` with its JSON `model` field set to the bound model as sent upstream (the name
    after the provider prefix); other bodies unchanged."""
    try:
        data = json.loads(body)
    except ValueError:
        return body
    if not isinstance(data, dict) or "model" not in data:
        return body
    data["model"] = model.split("/", 1)[1] if "/" in model else model
    return json.dumps(data).encode()


def _handler(relay: MeteringRelay) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self._relay("POST")

        def do_GET(self) -> None:
            self._relay("GET")

        def _relay(self, method: str) -> None:
            meter = relay.current()
            if meter is None:
                self._error(503, "the loopwright relay is not metering a run right now")
                return
            body = self._body()
            if method == "POST":
                body = pinned_body(body, meter.model)
            headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP_BY_HOP}
            try:
                headers = swap_key(headers, relay.agent_key, relay.real_key(meter.model))
            except ValueError as exc:
                refused = f"refused: {exc}; only the key the relay gave the agent is accepted"
                self._error(401, f"the loopwright relay {refused}")
                if method == "POST":
                    relay.record(meter, 0.0, RelayTokens(), refused)
                return
            started = time.monotonic()
            conn = relay.connection()
            try:
                conn.request(method, self.path, body=body or None, headers=headers)
                upstream = conn.getresponse()
                tokens, error = self._answer(upstream)
            except OSError as exc:  # the gateway is unreachable or dropped the connection
                tokens, error = RelayTokens(), f"gateway unreachable: {type(exc).__name__}: {exc}"
                with contextlib.suppress(OSError):
                    self._error(502, error)
            finally:
                conn.close()
            if method == "POST":
                relay.record(meter, time.monotonic() - started, tokens, error)

        def _body(self) -> bytes:
            """The request body, sent with a Content-Length or chunked."""
            if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
                chunks = []
                while size := int(self.rfile.readline().split(b";")[0].strip() or b"0", 16):
                    chunks.append(self.rfile.read(size))
                    self.rfile.readline()
                while self.rfile.readline().strip():  # trailers, up to the blank line
                    pass
                return b"".join(chunks)
            length = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(length) if length else b""

        def _answer(self, upstream: http.client.HTTPResponse) -> tuple[RelayTokens, str | None]:
            self.send_response(upstream.status)
            streaming = "text/event-stream" in (upstream.getheader("Content-Type") or "")
            for key, value in upstream.getheaders():
                if key.lower() not in _HOP_BY_HOP:
                    self.send_header(key, value)
            if streaming:
                self.send_header("Connection", "close")
                self.end_headers()
                lines = self._stream(upstream)
                tokens = usage_from_stream(lines)
                text = b"".join(lines)
            else:
                text = upstream.read()
                self.send_header("Content-Length", str(len(text)))
                self.end_headers()
                self.wfile.write(text)
                tokens = usage_from_body(text)
            if 200 <= upstream.status < 300:
                return tokens, None
            excerpt = text.decode("utf-8", errors="replace")[:_ERROR_CHARS]
            return tokens, f"HTTP {upstream.status}: {excerpt}"

        def _stream(self, upstream: http.client.HTTPResponse) -> list[bytes]:
            lines = []
            while line := upstream.readline():
                lines.append(line)
                self.wfile.write(line)
                if not line.strip():
                    self.wfile.flush()
            self.wfile.flush()
            return lines

        def _error(self, status: int, message: str) -> None:
            data = json.dumps({"error": {"message": message, "type": "loopwright_relay"}}).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: object) -> None:
            del format, args  # quiet: the ledger is the record

    return Handler
