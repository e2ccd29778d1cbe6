"""`LiteLLMGateway`: the ChatModel for real providers, and the cost boundary of loopwright.

Every real model call goes through `LiteLLMGateway.chat`: one `litellm.completion` per attempt,
retried with seeded exponential backoff on rate limits, server errors, timeouts and connection
errors; never retried on a context-window overflow, an auth failure or a bad request. Each
attempt, failed or not, is written to the CostLedger when the gateway has one. Error text is
redacted before it leaves this module (ModelError, ledger), so a key never reaches disk.

litellm is imported on the first call, never when loopwright is imported.
"""

from __future__ import annotations

import importlib
import json
import os
import random
import re
import sys
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from loopwright._caller import spoken
from loopwright.errors import MissingDependencyError
from loopwright.models._errors import ModelError
from loopwright.models._ledger import CallLabels, CostLedger, LedgerRecord, current_labels
from loopwright.models._per_process import (
    PerProcess,
    fresh_litellm_clients,
    no_litellm_logging_thread,
)
from loopwright.models._pricing import DEFAULT_PRICES, PriceTable
from loopwright.models._redact import redact
from loopwright.models._types import Message, ModelResponse, ToolCall, ToolSpec, Usage

__all__ = [
    "LITELLM_PIP_HINT",
    "ROLE_HEADER",
    "CompletionFn",
    "GatewayError",
    "GatewaySettings",
    "LiteLLMGateway",
    "ProviderLimits",
    "import_litellm",
    "provider_of",
]

LITELLM_PIP_HINT = "pip install 'litellm>=1.60,!=1.82.7,!=1.82.8'"

CompletionFn = Callable[..., Any]
"""`litellm.completion` or a stand-in with its keyword interface (the test seam)."""

ErrorKind = Literal[
    "rate_limit",
    "server",
    "timeout",
    "connection",
    "context_window",
    "auth",
    "bad_request",
    "client",
    "budget",
]
ROLE_HEADER = "X-Loopwright-Role"
"""The HTTP header each request carries with the call's role label (when it has one), so a
proxy or server can account calls by role as the ledger does."""
_RETRYABLE: frozenset[str] = frozenset({"rate_limit", "server", "timeout", "connection"})

# (litellm exception class name, kind), most specific first: ContextWindowExceededError is a
# BadRequestError, so it must be matched before it.
_KINDS: tuple[tuple[str, ErrorKind], ...] = (
    ("ContextWindowExceededError", "context_window"),
    ("AuthenticationError", "auth"),
    ("PermissionDeniedError", "auth"),
    ("RateLimitError", "rate_limit"),
    ("Timeout", "timeout"),
    ("APIConnectionError", "connection"),
    ("InternalServerError", "server"),
    ("ServiceUnavailableError", "server"),
    ("BadGatewayError", "server"),
)
_FIXES: Mapping[str, str] = {
    "rate_limit": "lower the concurrency (max_concurrency) or wait; raise max_attempts to keep retrying",
    "server": "the provider failed; try again later or raise max_attempts",
    "timeout": "raise timeout_s, or check that the server at api_base answers",
    "connection": "check api_base and that the server is running and reachable",
    "context_window": "the conversation is longer than the model's context window: lower the "
    "node's max_turns, shorten tool output, or use a model with a larger window",
    "auth": "set the provider's API key (e.g. ANTHROPIC_API_KEY, OPENAI_API_KEY); "
    "`loopwright models` shows which keys are set",
    "bad_request": "the provider refused the request; check the model name and its parameters",
    "client": "the server could not parse the request loopwright sent (a malformed body): "
    "this is a bug in loopwright or its HTTP client, not in your settings; please report it "
    "with the run's ledger.jsonl",
    "budget": "raise --max-usd, or resume the run with a larger budget",
}


class GatewayError(ModelError):
    """A gateway call failed for good. `kind` says why (rate_limit, server, timeout,
    connection, context_window, auth, bad_request), `attempts` how many were made."""

    def __init__(self, message: str, *, kind: ErrorKind, attempts: int) -> None:
        super().__init__(message)
        self.kind = kind
        self.attempts = attempts


@dataclass(frozen=True, slots=True)
class GatewaySettings:
    """How the gateway calls: `api_base` for an OpenAI-compatible server (vLLM, Ollama,
    llama.cpp), a per-request timeout, retries (attempts in all, backoff base and cap), the
    per-provider concurrency limit, and `max_tokens` per reply (None: the provider's default).
    `agent_key` is what an external agent given this model gets in place of every provider key
    variable (the metering relay's placeholder, which the relay swaps for the real key); the
    gateway itself never sends it."""

    api_base: str | None = None
    timeout_s: float = 120.0
    max_attempts: int = 4
    backoff_base_s: float = 1.0
    backoff_max_s: float = 30.0
    max_concurrency: int = 8
    max_tokens: int | None = None
    agent_key: str | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.max_attempts < 1 or self.max_concurrency < 1 or self.timeout_s <= 0:
            raise ValueError("max_attempts and max_concurrency must be >= 1, timeout_s > 0")


class ProviderLimits:
    """One threading.BoundedSemaphore per provider prefix, shared by every gateway given the
    same ProviderLimits (a factory shares one between all the runs it makes). The semaphores
    are per process: a forked or unpickled copy (a local or Ray worker) bounds its own calls,
    and never inherits a semaphore a parent's thread held at the fork."""

    def __init__(self, max_concurrency: int = 8, per_provider: Mapping[str, int] | None = None):
        self.max_concurrency = max_concurrency
        self.per_provider = dict(per_provider or {})
        self._local: PerProcess[_Semaphores] = PerProcess(_Semaphores)

    def __getstate__(self) -> dict[str, object]:
        """Pickled (shipped to a Ray worker) as its limits only."""
        return {"max_concurrency": self.max_concurrency, "per_provider": self.per_provider}

    def __setstate__(self, state: dict[str, object]) -> None:
        limit, per_provider = state["max_concurrency"], state["per_provider"]
        assert isinstance(limit, int) and isinstance(per_provider, dict)  # written by __getstate__
        self.max_concurrency = limit
        self.per_provider = per_provider
        self._local = PerProcess(_Semaphores)

    def semaphore(self, provider: str) -> threading.BoundedSemaphore:
        """This process's semaphore bounding concurrent calls to `provider` (made on first
        use)."""
        local = self._local.get()
        with local.lock:
            if provider not in local.by_provider:
                limit = self.per_provider.get(provider, self.max_concurrency)
                local.by_provider[provider] = threading.BoundedSemaphore(limit)
            return local.by_provider[provider]


class _Semaphores:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.by_provider: dict[str, threading.BoundedSemaphore] = {}


def provider_of(model: str) -> str:
    """The provider prefix of a LiteLLM model name ("anthropic/claude-..." -> "anthropic");
    "openai" for a bare name (LiteLLM's default for names like "gpt-4o-mini")."""
    return model.split("/", 1)[0] if "/" in model else "openai"


def import_litellm() -> Any:
    """The litellm module, imported on first use with its remote price-map fetch disabled.
    Raises MissingDependencyError (with the pip hint) when litellm is not installed."""
    # LiteLLM fetches its model cost map over the network at import unless told not to; we
    # price calls with our own table, so the bundled copy is enough and no request is made.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    try:
        module: Any = importlib.import_module("litellm")
    except ImportError:
        raise MissingDependencyError(
            "the LiteLLM gateway needs the litellm package",
            got="litellm is not installed",
            fix=f"{LITELLM_PIP_HINT} (it is a dependency of loopwright: reinstall it)",
        ) from None
    module.suppress_debug_info = True  # no "Give Feedback" banners on stderr
    return module


class LiteLLMGateway:
    """A ChatModel over `litellm.completion`, for any provider LiteLLM supports and any
    OpenAI-compatible base URL. `simulated` is False: what it records was really spent.

    `name` is the LiteLLM model name (e.g. "anthropic/claude-sonnet-4-5", "openai/NAME"); it
    is the name priced by `prices` and recorded in events. `api_key` overrides the provider's
    environment variable and is never stored anywhere but in this object (not in repr).
    `labels` are merged under the labels of the enclosing `label_scope`. Safe to share
    between threads (the ledger and limits are thread-safe; the jitter RNG is locked).
    """

    simulated = False

    def __init__(
        self,
        model: str,
        settings: GatewaySettings | None = None,
        *,
        api_key: str | None = None,
        ledger: CostLedger | None = None,
        prices: PriceTable = DEFAULT_PRICES,
        limits: ProviderLimits | None = None,
        labels: CallLabels | None = None,
        seed: int = 0,
        sleep: Callable[[float], None] = time.sleep,
        completion: CompletionFn | None = None,
    ) -> None:
        self.name = model
        self.settings = settings or GatewaySettings()
        self.provider = provider_of(model)
        self.ledger = ledger
        self.prices = prices
        self.limits = limits or ProviderLimits(self.settings.max_concurrency)
        self.labels = labels or CallLabels()
        self._api_key = api_key
        self._rng = random.Random(seed)
        self._rng_lock = PerProcess(threading.Lock)
        self._sleep = sleep
        self._completion = completion

    def __repr__(self) -> str:
        return f"LiteLLMGateway({self.name!r}, api_base={self.settings.api_base!r})"

    def chat(self, messages: Sequence[Message], tools: Sequence[ToolSpec]) -> ModelResponse:
        """One chat call with retries. Returns the reply with usage and the latency of the
        successful attempt. Raises GatewayError (a ModelError) when the call fails for good,
        MissingDependencyError when litellm is not installed. Once the ledger's dollar budget
        is spent (`CostLedger.exhausted`) no call is made: GatewayError of kind "budget"."""
        request = self._request(messages, tools)
        completion = self._completion or import_litellm().completion
        size = _request_bytes(request)
        attempt = 1
        while True:
            if self.ledger is not None and self.ledger.exhausted():
                spent = f"the run's dollar budget (${self.ledger.max_usd:g}) is spent"
                raise self._give_up("budget", attempt, spent)
            if "litellm" in sys.modules:  # this process's own connections, never a parent's
                fresh_litellm_clients(sys.modules["litellm"])
            with self.limits.semaphore(self.provider):
                sent = self._line(attempt, "sent", size=size)  # before a byte can leave
                started = time.monotonic()
                try:
                    with no_litellm_logging_thread():
                        raw = completion(**request)
                    latency = time.monotonic() - started
                except Exception as exc:  # noqa: BLE001  the provider boundary: classified, recorded
                    kind = _classify(exc)
                    message = self._redact(f"{type(exc).__name__}: {exc}")
                    if _never_sent(exc):  # a row is a request the server received
                        self._line(attempt, "withdrawn", request_id=sent)
                        message = f"could not connect to {self._endpoint()}: {message}"
                        kind = "connection"  # LiteLLM calls a refused connection a 500
                    else:
                        failed = _Failure(message, kind, size)
                        self._record(attempt, time.monotonic() - started, _Tokens(), failed, sent)
                    if kind not in _RETRYABLE or attempt >= self.settings.max_attempts:
                        raise self._give_up(kind, attempt, message) from None
                    wait = max(self._backoff(attempt), _retry_after(exc, self.settings))
                else:
                    tokens = _tokens(getattr(raw, "usage", None))
                    self._record(attempt, latency, tokens, None, sent)  # first: the reply is in
                    return self._parse(raw, latency, attempt, tokens)
            self._sleep(wait)
            attempt += 1

    def _request(self, messages: Sequence[Message], tools: Sequence[ToolSpec]) -> dict[str, Any]:
        request: dict[str, Any] = {
            "model": self.name,
            "messages": [_message_dict(m) for m in messages],
            "timeout": self.settings.timeout_s,
            "num_retries": 0,  # retries are ours: counted, recorded and backed off with a seed
            "max_retries": 0,
        }
        # Only our own function tools are offered: never a provider-side tool (web search).
        if tools:
            request["tools"] = [_tool_dict(t) for t in tools]
        if self.settings.api_base:
            request["api_base"] = self.settings.api_base
        if self._api_key:
            request["api_key"] = self._api_key
        if self.settings.max_tokens is not None:
            request["max_tokens"] = self.settings.max_tokens
        role = self.labels.merged(current_labels()).role
        if role:
            request["extra_headers"] = {ROLE_HEADER: role}
        return request

    def _parse(self, raw: Any, latency: float, attempt: int, tokens: _Tokens) -> ModelResponse:
        try:
            message = raw.choices[0].message
            calls = tuple(_tool_call(c) for c in (getattr(message, "tool_calls", None) or ()))
            text = getattr(message, "content", None) or ""
        except (AttributeError, IndexError, TypeError) as exc:
            raise GatewayError(
                self._redact(f"{self.name}: the provider's reply has no message: {exc}"),
                kind="bad_request",
                attempts=attempt,
            ) from None
        usage = Usage(tokens.input, tokens.output, tokens.cache_read)
        return ModelResponse(text, calls, usage, latency, self.name, simulated=False)

    def _backoff(self, attempt: int) -> float:
        """Exponential backoff with seeded jitter: base * 2^(attempt-1), capped, times a
        factor drawn uniformly from [0.5, 1.0)."""
        s = self.settings
        with self._rng_lock.get():
            factor = 0.5 + self._rng.random() / 2
        return min(s.backoff_max_s, s.backoff_base_s * 2.0 ** (attempt - 1)) * factor

    def _give_up(self, kind: ErrorKind, attempts: int, message: str) -> GatewayError:
        tried = f" after {attempts} attempts" if attempts > 1 else ""
        what = f"{self.name} ({kind.replace('_', ' ')}){tried}: {message}"
        fix = _FIXES[kind]
        if kind == "budget":  # in the caller's words
            fix = f"raise {spoken('max_usd', '--max-usd')}, or resume the run with a larger budget"
        return GatewayError(f"{what}. Fix: {fix}", kind=kind, attempts=attempts)

    def _endpoint(self) -> str:
        """Where the call was sent, for an error saying it could not get there."""
        if self.settings.api_base:
            return self._redact(self.settings.api_base)
        return f"the {self.provider} provider's default endpoint (no api_base set)"

    def _redact(self, text: str) -> str:
        return redact(text, extra=[self._api_key] if self._api_key else ())

    def _line(
        self,
        attempt: int,
        state: Literal["sent", "withdrawn"],
        *,
        size: int | None = None,
        request_id: str | None = None,
    ) -> str | None:
        """Write the in-flight line of an attempt about to be sent (a new request id, returned)
        or its withdrawal (it never left). None without a ledger. See LedgerRecord."""
        if self.ledger is None:
            return None
        request_id = request_id or uuid.uuid4().hex
        self.ledger.record(
            LedgerRecord(
                t=time.time(), provider=self.provider, model=self.name, attempt=attempt,
                ok=False, request_bytes=size, input_tokens=0, output_tokens=0,
                cache_read_tokens=0, cache_write_tokens=0, latency_s=0.0, cost_usd=0.0,
                price_table=self.prices.version, labels=self.labels.merged(current_labels()),
                request_id=request_id, state=state,
            )
        )  # fmt: skip
        return request_id

    def _record(
        self,
        attempt: int,
        latency: float,
        tokens: _Tokens,
        failure: _Failure | None,
        request_id: str | None,
    ) -> None:
        if self.ledger is None:
            return
        usage = Usage(tokens.input, tokens.output, tokens.cache_read)
        self.ledger.record(
            LedgerRecord(
                t=time.time(),
                provider=self.provider,
                model=self.name,
                attempt=attempt,
                ok=failure is None,
                error=failure.message if failure else None,
                error_kind=failure.kind if failure else None,
                request_bytes=failure.size if failure else None,
                input_tokens=tokens.input,
                output_tokens=tokens.output,
                cache_read_tokens=tokens.cache_read,
                cache_write_tokens=tokens.cache_write,
                latency_s=max(latency, 0.0),
                cost_usd=self.prices.cost_usd(self.name, usage),
                price_table=self.prices.version,
                labels=self.labels.merged(current_labels()),
                request_id=request_id,
            )
        )


@dataclass(frozen=True, slots=True)
class _Failure:
    message: str
    kind: ErrorKind
    size: int  # bytes of the JSON body as loopwright built it


@dataclass(frozen=True, slots=True)
class _Tokens:
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0


# A 400 saying the body was not JSON: the request was malformed on its way (a client bug).
_MALFORMED = re.compile(
    r"(invalid|malformed|could not (be )?parse|unable to parse|parse error|decode error)"
    r"[^.]{0,40}json|json[^.]{0,40}(invalid|malformed|could not be parsed|decode error)",
    re.IGNORECASE,
)
# Exceptions (anywhere in the cause chain) meaning no byte of the request left this process.
_NOT_SENT = frozenset({"ConnectError", "ConnectTimeout", "ConnectionRefusedError"})


def _never_sent(exc: BaseException) -> bool:
    """True when the call failed before the request was sent (the connection was never
    made): such an attempt is retried but is not a ledger row (the server saw nothing)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if type(current).__name__ in _NOT_SENT:
            return True
        current = current.__cause__ or current.__context__
    return False


def _retry_after(exc: BaseException, settings: GatewaySettings) -> float:
    """The wait a 429/503 asked for (`retry-after-ms`, else `Retry-After` in seconds), capped
    by the backoff cap; 0 when the reply named none."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return 0.0
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        try:
            value = float(headers.get(name) or "")
        except (TypeError, ValueError):
            continue
        return min(max(value * scale, 0.0), settings.backoff_max_s)
    return 0.0


def _request_bytes(request: Mapping[str, Any]) -> int:
    body = {k: request[k] for k in ("model", "messages", "tools", "max_tokens") if k in request}
    return len(json.dumps(body).encode("utf-8"))


def _classify(exc: BaseException) -> ErrorKind:
    names = {cls.__name__ for cls in type(exc).__mro__}
    if getattr(exc, "status_code", None) == 400 and _MALFORMED.search(str(exc)):
        return "client"
    for name, kind in _KINDS:
        if name in names:
            return kind
    status = getattr(exc, "status_code", None)
    if status == 429:
        return "rate_limit"
    if isinstance(status, int) and status >= 500:
        return "server"
    if status in (401, 403):
        return "auth"
    return "bad_request"


def _message_dict(message: Message) -> dict[str, Any]:
    out: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_calls:
        out["content"] = message.content or None
        out["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": c.arguments_json},
            }
            for c in message.tool_calls
        ]
    if message.role == "tool":
        out["tool_call_id"] = message.tool_call_id
    return out


def _tool_dict(tool: ToolSpec) -> dict[str, Any]:
    parameters = json.loads(json.dumps(dict(tool.parameters))) if tool.parameters else {}
    parameters.setdefault("type", "object")
    parameters.setdefault("properties", {})
    return {
        "type": "function",
        "function": {"name": tool.name, "description": tool.description, "parameters": parameters},
    }


def _tool_call(raw: Any) -> ToolCall:
    function = raw.function
    arguments = function.arguments
    # Kept raw: malformed JSON from the model reaches the runtime as-is and becomes a tool error.
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments)
    return ToolCall(str(raw.id), str(function.name), arguments)


def _int(value: Any) -> int:
    return value if isinstance(value, int) and value > 0 else 0


def _tokens(usage: Any) -> _Tokens:
    """Raw counts from an OpenAI-format usage block as LiteLLM returns it. Cache reads are
    part of the input count (OpenAI convention); Anthropic's cache writes are kept apart."""
    if usage is None:
        return _Tokens()
    details = getattr(usage, "prompt_tokens_details", None)
    cache_read = _int(getattr(details, "cached_tokens", None)) or _int(
        getattr(usage, "cache_read_input_tokens", None)
    )
    return _Tokens(
        input=_int(getattr(usage, "prompt_tokens", None)),
        output=_int(getattr(usage, "completion_tokens", None)),
        cache_read=cache_read,
        cache_write=_int(getattr(usage, "cache_creation_input_tokens", None)),
    )
