"""An external agent's network: nothing but its model endpoint.

Under an isolated sandbox that can cut the network (bubblewrap), an agent command runs with no
network (a namespace with loopback only), wrapped in `_inner_forwarder.py`, which listens
inside on the port of the model endpoint's loopback URL and forwards to a unix socket in the
visit's scratch directory; `EndpointBridge`, outside, connects each connection made there to
the endpoint (the metering relay, or a local model server) and nowhere else. Under the container
sandbox the agent's container has no network at all (`--network none`); the forwarder runs
inside it on the container's own Python, and the socket is bound in the container's relay
directory (`Sandbox.relay_dir`, a read-only mount), the only way out. The agent is given
the same URL as before, and any other address it tries (another port, another host) is
unreachable. A remote HTTPS endpoint (an `--api-base` on another host, or a hosted provider's
own URL) cannot be served on a loopback port (its TLS name would not match), so the forwarder
is then an HTTP proxy inside (`HTTPS_PROXY`) that tunnels only `CONNECT host:443` of that
endpoint; TLS stays end to end between the agent and its provider. Decided per visit by `network_plan`; recorded as `network` in the visit's exhaust
record (docs/external-agents.md, "Network").
"""

from __future__ import annotations

import contextlib
import ipaddress
import shutil
import socket
import sys
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from loopwright.sandbox import Sandbox

__all__ = [
    "OPEN_NETWORK_WARNING",
    "EndpointBridge",
    "NetworkPlan",
    "RelaySocket",
    "bridge",
    "forwarded_argv",
    "interpreter_dirs",
    "loopback_endpoint",
    "network_plan",
    "relay_socket",
    "remote_https_endpoint",
    "warn_open",
]

NetworkMode = Literal["endpoint-only", "none", "open"]
_FORWARDER = Path(__file__).with_name("_inner_forwarder.py")
_SOCKET_NAME = "model.sock"
_CHUNK = 65536
_RESTRICTING_SANDBOXES = frozenset({"bubblewrap", "docker"})
PROXY_PORT = 3128
"""The port of the CONNECT proxy inside the namespace (any port is free there)."""
OPEN_NETWORK_WARNING = (
    "warning: the external agent {agent} runs with the network OPEN ({why}): it can reach the "
    "web, and the answers on it. Use --sandbox bubblewrap or --sandbox docker to limit it to its "
    "model endpoint (docs/external-agents.md, Network)."
)
_warned: set[str] = set()
_warn_lock = threading.Lock()
PROVIDER_ENDPOINTS = {"anthropic": "api.anthropic.com", "openai": "api.openai.com"}
"""The HTTPS host an agent calls for a hosted model of these providers when no base URL is
given (Claude Code, Codex and LiteLLM's defaults)."""


@dataclass(frozen=True, slots=True)
class NetworkPlan:
    """How one visit reaches the network. `mode`: `endpoint-only` (loopback plus the forwarder
    to `endpoint`), `none` (no model endpoint to reach: no network at all) or `open` (the
    sandbox cannot restrict it, or the endpoint is not on loopback; `why` says which)."""

    mode: NetworkMode
    endpoint: tuple[str, int] | None = None
    why: str = ""
    proxy: bool = False

    def describe(self) -> str:
        """What the exhaust record keeps: the mode (with the endpoint a proxy tunnels to), and
        why when it is open."""
        if self.proxy and self.endpoint is not None:
            return f"{self.mode}: CONNECT {self.endpoint[0]}:{self.endpoint[1]} only"
        return f"{self.mode}: {self.why}" if self.why else self.mode

    def environment(self) -> dict[str, str]:
        """Variables the agent's command needs for this plan: the proxy's, under a proxy."""
        if not self.proxy:
            return {}
        url = f"http://127.0.0.1:{PROXY_PORT}"
        names = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY")
        return {**dict.fromkeys(names, url), "NO_PROXY": "", "no_proxy": ""}


def loopback_endpoint(api_base: str | None) -> tuple[str, int] | None:
    """(host, port) of an http(s) URL on a loopback address (127.0.0.0/8, ::1, localhost), or
    None for no URL, another host or a URL without a usable port."""
    if not api_base:
        return None
    parts = urlsplit(api_base)
    host = parts.hostname
    if parts.scheme not in ("http", "https") or host is None:
        return None
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return None
    if host == "localhost":
        return "127.0.0.1", port
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        return None
    return (host, port) if loopback else None


def remote_https_endpoint(api_base: str | None, model: str | None) -> tuple[str, int] | None:
    """(host, port) an agent reaches over HTTPS: `api_base`'s when it is an https URL, else
    (no `api_base`) the hosted provider's own (`PROVIDER_ENDPOINTS`), else None."""
    if api_base:
        parts = urlsplit(api_base)
        if parts.scheme != "https" or parts.hostname is None:
            return None
        try:
            return parts.hostname.lower(), parts.port or 443
        except ValueError:
            return None
    provider = (model or "").split("/", 1)[0] if model and "/" in model else None
    host = PROVIDER_ENDPOINTS.get(provider or "")
    return (host, 443) if host is not None else None


def network_plan(sandbox: Sandbox, api_base: str | None, model: str | None) -> NetworkPlan:
    """The plan for a visit in `sandbox` whose agent talks to `model` at `api_base` (both None
    for the offline models: the agent has no endpoint of ours to reach). Pure."""
    if sandbox.name not in _RESTRICTING_SANDBOXES:
        why = f"the {sandbox.name} sandbox cannot restrict an agent's network to its endpoint"
        return NetworkPlan("open", why=why)
    if not api_base and model is None:
        return NetworkPlan("none")
    endpoint = loopback_endpoint(api_base)
    if endpoint is not None:
        return NetworkPlan("endpoint-only", endpoint=endpoint)
    remote = remote_https_endpoint(api_base, model)
    if remote is not None:
        return NetworkPlan("endpoint-only", endpoint=remote, proxy=True)
    where = f"{api_base} (plain http on another host)" if api_base else "its provider's own"
    why = (
        f"the model endpoint is {where}, which loopwright cannot tunnel to alone; use a "
        "loopback or https endpoint, or the metering relay (loopwright ab), to restrict it"
    )
    return NetworkPlan("open", why=why)


@dataclass(frozen=True, slots=True)
class RelaySocket:
    """Where a visit's bridge binds its unix socket (`host`), where the agent's command sees it
    (`inside`), and the Python that runs the forwarder there (None: this one's base
    interpreter, which the sandbox must then show)."""

    host: Path
    inside: str
    python: str | None = None


def relay_socket(sandbox: Sandbox, workspace: Path, scratch: Path) -> RelaySocket:
    """The socket of a visit in `sandbox`: in the sandbox's relay directory when it has one
    (the container sandbox: its container's own Python runs the forwarder), else in `scratch`,
    which the sandbox shows at its own path (bubblewrap)."""
    relay = sandbox.relay_dir(workspace)
    if relay is None:
        path = scratch / _SOCKET_NAME
        return RelaySocket(path, str(path))
    name = f"{scratch.name}.sock"  # a visit's own: the scratch directory's name is unique
    return RelaySocket(relay[0] / name, f"{relay[1]}/{name}", sandbox.interpreter())


def warn_open(plan: NetworkPlan, agent: str) -> bool:
    """Print OPEN_NETWORK_WARNING on stderr when `plan` is open, once per process and agent;
    True when it printed. The visit's exhaust record keeps the plan either way."""
    if plan.mode != "open":
        return False
    with _warn_lock:
        if agent in _warned:
            return False
        _warned.add(agent)
    print(OPEN_NETWORK_WARNING.format(agent=agent, why=plan.why), file=sys.stderr, flush=True)
    return True


def forwarded_argv(
    argv: Sequence[str], plan: NetworkPlan, scratch: Path, relay: RelaySocket | None = None
) -> list[str]:
    """`argv` wrapped in the inner forwarder of an `endpoint-only` plan (copied into `scratch`,
    run in isolated mode by `relay.python`, else this Python: it needs only the standard
    library), forwarding to `relay.inside` (default: the socket in `scratch`)."""
    if plan.endpoint is None:
        return list(argv)
    script = scratch / _FORWARDER.name
    shutil.copyfile(_FORWARDER, script)
    host, port = plan.endpoint
    sock = relay.inside if relay is not None else str(scratch / _SOCKET_NAME)
    python = relay.python if relay is not None and relay.python else _python()
    if plan.proxy:
        head = ["127.0.0.1", str(PROXY_PORT), sock, "--connect", f"{host}:{port}"]
    else:
        head = [host, str(port), sock]
    return [python, "-I", "-S", str(script), *head, "--", *argv]


def interpreter_dirs() -> list[Path]:
    """The installation of the Python that runs the forwarder (shown read-only to the agent's
    command: a task environment's sandbox shows another one)."""
    prefix = Path(sys.base_prefix).resolve()
    return [prefix] if prefix != Path("/") and prefix.is_dir() else []


def _python() -> str:
    """The base interpreter (not a virtualenv's copy, whose pyvenv.cfg a task environment's
    sandbox would not show), else this one."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    base = Path(sys.base_prefix) / "bin" / version
    return str(base.resolve() if base.is_file() else Path(sys.executable).resolve())


class EndpointBridge:
    """Outside the namespace: accepts on `path` (default `<scratch>/model.sock`) and connects
    each connection to `endpoint` (host, port), copying bytes both ways. Close it (or use
    `bridge(...)`) when the visit ends; connections still open are cut, the socket removed."""

    def __init__(self, scratch: Path, endpoint: tuple[str, int], path: Path | None = None) -> None:
        self.endpoint = endpoint
        self.path = path if path is not None else scratch / _SOCKET_NAME
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._server.bind(str(self.path))
        self._server.listen(64)
        self._open: list[socket.socket] = []
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Stop accepting and cut every open connection."""
        with contextlib.suppress(OSError):
            self._server.shutdown(socket.SHUT_RDWR)
        self._server.close()
        with self._lock:
            for sock in self._open:
                with contextlib.suppress(OSError):
                    sock.close()
            self._open.clear()
        self._thread.join(timeout=5)
        with contextlib.suppress(OSError):
            self.path.unlink()

    def _serve(self) -> None:
        while True:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            threading.Thread(target=self._connect, args=(client,), daemon=True).start()

    def _connect(self, client: socket.socket) -> None:
        try:
            upstream = socket.create_connection(self.endpoint, timeout=30)
            upstream.settimeout(None)
        except OSError:
            client.close()
            return
        with self._lock:
            self._open += [client, upstream]
        back = threading.Thread(target=_pump, args=(upstream, client), daemon=True)
        back.start()
        _pump(client, upstream)
        back.join()
        for sock in (client, upstream):
            sock.close()


@contextlib.contextmanager
def bridge(plan: NetworkPlan, scratch: Path, relay: RelaySocket | None = None) -> Iterator[None]:
    """The bridge of an `endpoint-only` plan for the duration of the block (nothing otherwise),
    on `relay.host` (default: the socket in `scratch`)."""
    if plan.mode != "endpoint-only" or plan.endpoint is None:
        yield
        return
    running = EndpointBridge(scratch, plan.endpoint, relay.host if relay is not None else None)
    try:
        yield
    finally:
        running.close()


def _pump(src: socket.socket, dst: socket.socket) -> None:
    try:
        while data := src.recv(_CHUNK):
            dst.sendall(data)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)
