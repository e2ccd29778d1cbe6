"""The hostile external agent of the network tests (bubblewrap in test_external_network.py, the
container sandbox in test_external_network_container.py), its model endpoint and its decoy.

The agent is a `claude` script that calls its model endpoint (`ANTHROPIC_BASE_URL`, with the
relay's placeholder key when it has one), then tries to connect to every (name, host, port) of
its targets, runs whatever more the caller gives it, and writes what happened to `net.json`
in its workspace: each name maps to the reply, "connected", or "failed: ...".
"""

from __future__ import annotations

import json
import os
import socket
import threading
from collections.abc import Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from loopwright.runtime import EXTERNAL_AGENTS, ExternalSettings, default_registries, external_loop
from loopwright.workflow import EXTERNAL_LOOP_PREFIX
from tests.runtime.conftest import FakeModel, Harness, agent, chain

__all__ = ["Target", "decoy", "hostile_agent", "model_server", "run_hostile", "serve_decoy"]

Target = tuple[str, str, int]  # (name in net.json, host, port)

_CALL_AND_CONNECT = """\
import json, os, socket, urllib.request

out = {}
base = os.environ["ANTHROPIC_BASE_URL"]
body = {"model": "any", "messages": [{"role": "user", "content": "hi"}]}
key = os.environ.get("ANTHROPIC_API_KEY", "sk-x")  # the relay's placeholder, if it gave one
request = urllib.request.Request(
    base + "/v1/chat/completions", data=json.dumps(body).encode(),
    headers={"Content-Type": "application/json", "Authorization": "Bearer " + key},
)
try:
    with urllib.request.urlopen(request, timeout=10) as reply:
        out["endpoint"] = reply.read().decode()
except OSError as exc:
    out["endpoint"] = "failed: " + repr(exc)
for name, host, port in TARGETS:
    try:
        socket.create_connection((host, port), timeout=5).close()
        out[name] = "connected"
    except OSError as exc:
        out[name] = "failed: " + repr(exc)
"""
_WRITE = """\
with open("net.json", "w") as f:
    json.dump(out, f)
"""


def hostile_agent(
    python: str, targets: Sequence[Target], *, prelude: str = "", then: str = ""
) -> str:
    """The agent's script: run by `python`, with `prelude` (constants it needs) before it, and
    `then` (more attempts, adding to `out`) after the endpoint and the targets."""
    return f"#!{python}\nTARGETS = {list(targets)!r}\n{prelude}{_CALL_AND_CONNECT}{then}{_WRITE}"


def run_hostile(
    h: Harness,
    tmp_path: Path,
    script_text: str,
    url: str,
    *,
    agent_key: str | None = None,
    timeout_s: int = 60,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Run `script_text` as the claude-code external agent of one builder node, its model at
    `url`; what it wrote to net.json, and the external agent's record."""
    script = tmp_path / "bin" / "claude"
    script.parent.mkdir()
    script.write_text(script_text)
    script.chmod(0o755)
    settings = ExternalSettings(
        executable=str(script),
        api_base=url,
        environ={"PATH": os.environ["PATH"]},
        agent_key=agent_key,
    )
    loop = external_loop(EXTERNAL_AGENTS.get("claude-code"), settings)
    regs = default_registries().with_loop(EXTERNAL_LOOP_PREFIX + "claude-code", loop)
    node = agent("builder", loop=EXTERNAL_LOOP_PREFIX + "claude-code", timeout_s=timeout_s)
    h.run(chain(node), FakeModel([]), registries=regs)
    (record,) = (h.events_path.parent / "external").glob("*.json")
    return json.loads((h.workspace / "net.json").read_text()), json.loads(record.read_text())


class _Model(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        body = b'{"model": "ok"}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def model_server() -> Iterator[ThreadingHTTPServer]:
    """A model endpoint on loopback that answers every POST with `{"model": "ok"}`."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Model)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def serve_decoy(address: str) -> Iterator[tuple[int, list[str]]]:
    """A listener on `address` (port chosen by the system), outside any namespace: its port and
    the peer address of every connection it accepted."""
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((address, 0))
    listener.listen(8)
    accepted: list[str] = []

    def serve() -> None:
        while True:
            try:
                conn, peer = listener.accept()
            except OSError:
                return
            accepted.append(peer[0])
            conn.close()

    threading.Thread(target=serve, daemon=True).start()
    yield listener.getsockname()[1], accepted
    listener.close()


@pytest.fixture
def decoy() -> Iterator[tuple[int, list[str]]]:
    """A listener on another loopback port, outside any namespace; records the connections."""
    yield from serve_decoy("127.0.0.1")
