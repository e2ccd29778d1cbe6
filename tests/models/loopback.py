"""A loopback OpenAI-compatible server that behaves like a real provider under load: HTTP/1.1
keep-alive connections, tool calls and usage in every reply, injected faults at a fixed seed
(429 with Retry-After, 500, slow replies), and a log of every request it received: the client's
port, the pids holding the client's end of that connection (and which of them kept it, see
`Received`), the role header, whether the body parsed as JSON, the status answered and the
tokens it reported.

`answer` decides the reply from the parsed body and the role header (`RoleAnswers`: what the
outer loop's roles accept). Used by the load tests (tests/models/test_load.py) and by
bench/provider_load.py; the small scripted server of the gateway's unit tests is
tests/models/test_gateway_server.py, whose `Answer` and `completion_body` this one reuses.
"""

from __future__ import annotations

import json
import os
import random
import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from loopwright.models import ROLE_HEADER
from loopwright.sandbox import process_descendants
from tests.models.test_gateway_server import Answer, completion_body

AnswerFn = Callable[[dict[str, Any], str], Answer]


@dataclass(frozen=True)
class Faults:
    """Which requests fail, decided by (seed, request number) alone: `rate_limit` of them get a
    429 with Retry-After, `server_error` a 500, `slow` a reply after `slow_s`."""

    seed: int = 0
    rate_limit: float = 0.0
    server_error: float = 0.0
    slow: float = 0.0
    slow_s: float = 0.3
    retry_after_ms: int = 20

    def of(self, number: int) -> str:
        draw = random.Random(f"{self.seed}:{number}").random()
        for name, rate in (("429", self.rate_limit), ("500", self.server_error)):
            if draw < rate:
                return name
            draw -= rate
        return "slow" if draw < self.slow else "ok"


@dataclass(frozen=True)
class Received:
    """One request the server read (or failed to read). `pids`: the processes holding the
    client's end of the connection when it arrived; `kept`: those of them still holding it
    once the processes that only held it for an instant let go (see `kept_holders`). More than
    one pid in `kept`: a connection shared across a fork. `parsed` is False for a body that
    was not JSON or a request line that was not HTTP; `status` is what was answered (0:
    nothing could be answered)."""

    number: int
    port: int
    pids: tuple[int, ...]
    role: str
    model: str
    parsed: bool
    size: int
    fault: str
    status: int
    input_tokens: int = 0
    output_tokens: int = 0
    added_s: float = 0.0  # the time the server spent on it (the injected delay included)
    kept: tuple[int, ...] = ()


@dataclass
class Log:
    """Every request received, in arrival order (thread-safe appends)."""

    entries: list[Received] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, entry: Received) -> None:
        with self.lock:
            self.entries.append(entry)

    def snapshot(self) -> list[Received]:
        with self.lock:
            return list(self.entries)

    def unparsed(self) -> list[Received]:
        return [e for e in self.snapshot() if not e.parsed]

    def shared(self) -> list[Received]:
        """Requests that arrived on a connection more than one process kept."""
        return [e for e in self.snapshot() if len(e.kept) > 1]

    def glimpsed(self) -> list[Received]:
        """Requests whose connection another process held for an instant only (see
        `kept_holders`): not shared, but seen, which shows the check can see a second pid."""
        return [e for e in self.snapshot() if len(e.pids) > len(e.kept)]

    def roles(self) -> Counter[str]:
        return Counter(e.role for e in self.snapshot() if e.parsed)

    def tokens(self) -> tuple[int, int]:
        entries = self.snapshot()
        return sum(e.input_tokens for e in entries), sum(e.output_tokens for e in entries)


def socket_holders(port: int, root: int) -> tuple[int, ...]:
    """The pids among `root` and its descendants holding the loopback TCP socket whose local
    port is `port` (the client's end of a connection to this server). Linux /proc only."""
    return _holding(_inodes(port), (root, *process_descendants(root)))


SETTLE_S = 2.0
"""How long a second holder of a connection gets to let it go before it counts as sharing it."""


def kept_holders(port: int, pids: tuple[int, ...], settle_s: float = SETTLE_S) -> tuple[int, ...]:
    """Those of `pids` (the holders of the connection from local `port` when a request arrived)
    that keep holding it: polled until at most one still does, or for `settle_s`. A process
    forked while the connection was open holds a copy of its descriptor from the fork until it
    closes it: a `subprocess` child (another thread of the client's process starting a
    command) until its exec, microseconds of C code that never touch the socket (and longer
    when the machine is loaded); a forked Python worker until loopwright's at-fork hook closes
    LiteLLM's sockets in it. Neither writes on it. A process that uses the connection, or kept
    it open, still holds it when `settle_s` is over. The same process: a pid whose start time
    changed (reused) is not counted."""
    if len(pids) <= 1:
        return pids
    started = {pid: _start_time(pid) for pid in pids}
    deadline = time.monotonic() + settle_s
    while True:
        held = _holding(_inodes(port), pids)
        kept = tuple(p for p in held if _start_time(p) == started[p])
        if len(kept) <= 1 or time.monotonic() >= deadline:
            return kept
        time.sleep(0.01)


def _start_time(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return ""


def _inodes(port: int) -> set[str]:
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            parts = line.split()
            if len(parts) > 9 and int(parts[1].rsplit(":", 1)[1], 16) == port:
                inodes.add(f"socket:[{parts[9]}]")
    return inodes


def _holding(inodes: set[str], pids: tuple[int, ...]) -> tuple[int, ...]:
    holders = []
    for pid in pids:
        try:
            fds = list(Path(f"/proc/{pid}/fd").iterdir())
        except OSError:
            continue
        for fd in fds:
            try:
                if str(fd.readlink()) in inodes:
                    holders.append(pid)
                    break
            except OSError:
                continue
    return tuple(holders)


class LoopbackServer:
    """The server (start with `serving()`): `url` is the base URL for `--api-base`, `log` what
    it received. `track_pids` looks up the socket's holders for every request (a /proc walk
    of this process's tree; off for throughput benchmarks); `settle_s` is how long a second
    holder gets to let the connection go (`kept_holders`). `looked_up` counts the requests
    whose connection's holders have been looked up (before the second holders are given time
    to let go, and before the request is answered)."""

    def __init__(
        self,
        answer: AnswerFn,
        faults: Faults | None = None,
        *,
        track_pids: bool = True,
        settle_s: float = SETTLE_S,
    ) -> None:
        self.answer = answer
        self.faults = faults or Faults()
        self.track_pids = track_pids
        self.settle_s = settle_s
        self.log = Log()
        self.looked_up = 0
        self._numbers = iter(range(1, 1 << 62))
        self._lock = threading.Lock()
        self._root = os.getpid()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def number(self) -> int:
        with self._lock:
            return next(self._numbers)

    def holders(self, port: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """The pids holding the client's end of the connection from `port` now, and those of
        them that keep it (`kept_holders`)."""
        if not self.track_pids:
            return (), ()
        pids = socket_holders(port, self._root)
        with self._lock:
            self.looked_up += 1
        return pids, kept_holders(port, pids, self.settle_s)

    @contextmanager
    def serving(self) -> Iterator[LoopbackServer]:
        thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self._httpd.shutdown()
            self._httpd.server_close()


def _handler(server: LoopbackServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as real providers do
        timeout = 30  # a connection that stalls mid-request is dropped, not held forever

        def do_POST(self) -> None:
            started = time.monotonic()
            number, port = server.number(), self.client_address[1]
            pids, kept = server.holders(port)
            raw = self.rfile.read(int(self.headers.get("Content-Length", "0") or 0))
            role = self.headers.get(ROLE_HEADER, "(none)")
            try:
                body = json.loads(raw)
                assert isinstance(body, dict)
            except (ValueError, AssertionError):
                self._send(400, {"error": {"message": "invalid JSON in the request body"}})
                entry = Received(number, port, pids, role, "", False, len(raw), "", 400, kept=kept)
                server.log.add(entry)
                return
            fault = server.faults.of(number)
            model = str(body.get("model"))
            entry = Received(number, port, pids, role, model, True, len(raw), fault, 200, kept=kept)
            if fault in ("429", "500"):
                status = int(fault)
                ms = server.faults.retry_after_ms
                extra = {"Retry-After": str(-(-ms // 1000)), "retry-after-ms": str(ms)}
                self._send(status, {"error": {"message": f"injected {fault}"}}, extra)
                server.log.add(_done(entry, status, 0, 0, started))
                return
            if fault == "slow":
                time.sleep(server.faults.slow_s)
            answer = server.answer(body, role)
            self._send(200, completion_body(answer, model, number))
            tokens = (answer.prompt_tokens, answer.completion_tokens)
            server.log.add(_done(entry, 200, *tokens, started))

        def send_error(
            self, code: int, message: str | None = None, explain: str | None = None
        ) -> None:
            """A request line or header block that is not HTTP: logged as unparsed."""
            port = self.client_address[1]
            pids, kept = server.holders(port)
            entry = Received(server.number(), port, pids, "", "", False, 0, "", code, kept=kept)
            server.log.add(entry)
            super().send_error(code, message, explain)

        def _send(
            self, status: int, payload: dict[str, Any], extra: dict[str, str] | None = None
        ) -> None:
            data = json.dumps(payload).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for key, value in (extra or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client went away

        def log_message(self, format: str, *args: object) -> None:
            del format, args

    return Handler


def _done(
    entry: Received, status: int, tokens_in: int, tokens_out: int, started: float
) -> Received:
    return Received(
        entry.number, entry.port, entry.pids, entry.role, entry.model, True, entry.size,
        entry.fault, status, tokens_in, tokens_out, time.monotonic() - started, entry.kept,
    )  # fmt: skip


# What the outer loop's roles accept (reflection: a valid report; prompt rewrite: a valid
# prompt; an agent turn: finish at once), so that a run on this server does real work.
REFLECTION = {
    "failure_patterns": [
        {
            "description": "the builder finished without changing the code",
            "kind": "no_change",
            "evidence": {"candidates": [], "tasks": ["l1-roman-numerals"], "count": 1},
        }
    ],
    "success_patterns": [],
    "mutation_suggestions": [
        {
            "operator": "prompt_mutate",
            "target": "builder",
            "kind": "prompt_finish_the_work",
            "rationale": "the builder stops before it writes anything",
            "confidence": 0.9,
            "role": None,
            "max_loops": None,
            "evidence": {"candidates": [], "tasks": ["l1-roman-numerals"], "count": 1},
        }
    ],
    "prompt_improvements": [],
    "structural_recommendations": [],
}


def role_answers(body: dict[str, Any], role: str) -> Answer:
    """An agent turn (tools offered): finish; a reflection digest: REFLECTION; a prompt to
    rewrite: that prompt plus a sentence; anything else: "{}" (which its caller refuses)."""
    del role
    if body.get("tools"):
        return Answer(calls=(("finish", json.dumps({"summary": "done"})),))
    text = str(body["messages"][-1]["content"])
    if "<<<DIGEST" in text:
        return Answer(text=json.dumps(REFLECTION))
    if "<<<PROMPT\n" in text:
        prompt = text.split("<<<PROMPT\n", 1)[1].split("\nPROMPT>>>", 1)[0]
        return Answer(text=prompt + "\nFinish the change before you stop.")
    return Answer(text="{}")


_INSTRUCTION = re.compile(r"/[^\s'\"`]*instruction\.md")


def reading_answers(body: dict[str, Any], role: str) -> Answer:
    """As `role_answers`, but an agent first reads the task's instruction file (the path its
    prompt names) and finishes on the turn after: a run that counts as having read its task
    (a research smoke run passes), with no change made."""
    messages = body.get("messages") or []
    if body.get("tools") and not any(m.get("role") == "tool" for m in messages):
        found = _INSTRUCTION.search(" ".join(str(m.get("content")) for m in messages))
        path = found.group(0) if found else "instruction.md"
        return Answer(calls=(("read_file", json.dumps({"path": path})),))
    return role_answers(body, role)
