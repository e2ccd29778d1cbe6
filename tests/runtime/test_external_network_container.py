"""Hostile external agents under the container sandbox (Podman in CI): the agent's container has
no network (`--network none`) and reaches its model endpoint, or the metering relay, only
through a unix socket in the container's read-only relay directory. The stand-in agent runs
inside the container and tries the endpoint, a decoy listening on every address of the host,
the host's loopback, a name on the internet, and replacing the relay's socket; it must reach
the endpoint and nothing else."""

from __future__ import annotations

import contextlib
import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from loopwright.harness import MeteringRelay
from loopwright.models import CallLabels, CostLedger, Price, PriceTable
from loopwright.runtime.external._network import network_plan
from loopwright.sandbox import DockerSandbox
from tests.containers import docker_sandbox_or_skip
from tests.models.test_gateway_server import Answer, Loopback, loopback
from tests.runtime.conftest import Harness
from tests.runtime.hostile_network import (
    hostile_agent,
    model_server,
    run_hostile,
    serve_decoy,
)

__all__ = ["loopback", "model_server"]  # the fixtures, re-exported for pytest

pytestmark = pytest.mark.docker

# After the endpoint and the decoys, the agent tries to remove the relay's socket.
UNLINK_THE_RELAY = """\
relay = os.path.dirname(RELAY_GLOB) if RELAY_GLOB else ""
out["relay_entries"] = sorted(os.listdir(relay)) if relay and os.path.isdir(relay) else []
for entry in out["relay_entries"]:
    try:
        os.unlink(os.path.join(relay, entry))
        out["relay_unlink"] = "removed " + entry
    except OSError as exc:
        out["relay_unlink"] = "failed: " + repr(exc)
"""


def host_addresses() -> list[str]:
    """The host's non-loopback IPv4 addresses (where the decoy, bound to every address, also
    listens): the one a default route uses, and the host name's."""
    found = set()
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("192.0.2.1", 9))  # no packet is sent: it only picks the route
        found.add(probe.getsockname()[0])
    except OSError:
        pass
    finally:
        probe.close()
    with contextlib.suppress(OSError):
        found.add(socket.gethostbyname(socket.gethostname()))
    return sorted(a for a in found if not a.startswith("127."))


@pytest.fixture
def wide_decoy() -> Iterator[tuple[int, list[str]]]:
    """A listener on every address of the host (not only loopback); records the connections."""
    yield from serve_decoy("0.0.0.0")


@pytest.fixture
def container(h: Harness) -> Any:
    sandbox = docker_sandbox_or_skip()
    h.sandbox = sandbox  # type: ignore[assignment]  # the harness field is typed Local
    yield sandbox
    sandbox.release(h.workspace)


def hostile(decoy_port: int) -> str:
    """The hostile agent in the container: the endpoint; the decoy on loopback, on each of the
    host's addresses and by the gateway's name; a name on the internet; the relay's socket."""
    targets = [
        ("decoy_loopback", "127.0.0.1", decoy_port),
        ("internet", "example.com", 80),
        ("gateway_name", "host.containers.internal", decoy_port),
    ]
    targets += [("decoy_host_" + host, host, decoy_port) for host in host_addresses()]
    prelude = "import glob\nRELAY_GLOB = next(iter(glob.glob('/.lw/relay/*.sock')), '')\n"
    return hostile_agent("/usr/bin/python3", targets, prelude=prelude, then=UNLINK_THE_RELAY)


def assert_nothing_else(seen: dict[str, Any], accepted: list[str]) -> None:
    others = [k for k in seen if k.startswith(("decoy", "internet", "gateway"))]
    assert any(k.startswith("decoy_host_") for k in others) or not host_addresses()
    assert all(seen[k].startswith("failed") for k in others), seen
    assert accepted == []
    assert seen["relay_entries"] and seen["relay_unlink"].startswith("failed"), seen


def test_under_the_container_sandbox_the_agent_reaches_its_endpoint_and_nothing_else(
    h: Harness,
    tmp_path: Path,
    container: DockerSandbox,
    model_server: Any,
    wide_decoy: tuple[int, list[str]],
) -> None:
    port, accepted = wide_decoy
    url = f"http://127.0.0.1:{model_server.server_address[1]}"
    seen, record = run_hostile(h, tmp_path, hostile(port), url, timeout_s=90)
    assert seen["endpoint"] == '{"model": "ok"}', seen
    assert_nothing_else(seen, accepted)
    assert record["network"] == "endpoint-only"
    relay_dir, _ = container.relay_dir(h.workspace)
    assert list(relay_dir.iterdir()) == []  # the visit's socket is gone with the visit


def test_under_the_container_sandbox_the_relay_meters_the_call_and_nothing_else_leaves(
    h: Harness,
    tmp_path: Path,
    container: DockerSandbox,
    loopback: Loopback,
    wide_decoy: tuple[int, list[str]],
) -> None:
    loopback.script.answers.append(Answer(text="hi", prompt_tokens=7, completion_tokens=2))
    model = "openai/relay-coder"
    prices = PriceTable("net-test-1", {model: Price(1.0, 1.0, 0.5, simulated=True, note="t")})
    ledger = CostLedger()
    port, accepted = wide_decoy
    with MeteringRelay(loopback.url, prices=prices) as relay:
        labels = CallLabels(run="r", candidate="external:claude-code", role="small")
        with relay.metering(ledger, model, labels):
            seen, record = run_hostile(
                h, tmp_path, hostile(port), relay.url, agent_key=relay.agent_key, timeout_s=90
            )
    assert json.loads(seen["endpoint"])["choices"][0]["message"]["content"] == "hi"
    assert [r.input_tokens for r in ledger.records()] == [7]  # one call, metered
    assert_nothing_else(seen, accepted)
    assert record["network"] == "endpoint-only"


def test_the_container_sandbox_restricts_the_network_plan() -> None:
    sandbox = docker_sandbox_or_skip()
    plan = network_plan(sandbox, "http://127.0.0.1:9", "openai/coder")
    assert plan.mode == "endpoint-only" and plan.endpoint == ("127.0.0.1", 9)
    assert network_plan(sandbox, None, None).mode == "none"
