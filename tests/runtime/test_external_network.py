"""Hostile external agents and the network: inside an external agent's command only the model
endpoint is reachable (bubblewrap: a namespace with loopback only, and a forwarder to the
endpoint). The stand-in agent below tries the endpoint and a decoy listener the test opens on
another loopback port outside; it must reach the first and never the second."""

from __future__ import annotations

import json
import sys
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest

from loopwright.harness import MeteringRelay
from loopwright.models import CallLabels, CostLedger, Price, PriceTable
from loopwright.runtime.external import _network
from loopwright.runtime.external._network import (
    PROXY_PORT,
    NetworkPlan,
    bridge,
    forwarded_argv,
    loopback_endpoint,
    network_plan,
)
from loopwright.sandbox import BubblewrapSandbox, LocalSandbox, bubblewrap_available
from tests.models.test_gateway_server import Answer, Loopback, loopback
from tests.runtime.conftest import Harness
from tests.runtime.hostile_network import decoy, hostile_agent, model_server, run_hostile

__all__ = ["decoy", "loopback", "model_server"]  # the fixtures, re-exported for pytest


def hostile(decoy_port: int) -> str:
    """The hostile agent on this host: the endpoint, then the decoy by address and by name."""
    targets = [("decoy", "127.0.0.1", decoy_port), ("decoy_localhost", "localhost", decoy_port)]
    return hostile_agent(sys.executable, targets)


@pytest.mark.skipif(not bubblewrap_available(), reason="bubblewrap does not work here")
def test_an_external_agent_reaches_its_model_endpoint_and_nothing_else(
    h: Harness,
    tmp_path: Path,
    model_server: ThreadingHTTPServer,
    decoy: tuple[int, list[str]],
) -> None:
    h.sandbox = BubblewrapSandbox()  # type: ignore[assignment]  # the harness field is typed Local
    port, accepted = decoy
    url = f"http://127.0.0.1:{model_server.server_address[1]}"
    seen, record = run_hostile(h, tmp_path, hostile(port), url)
    assert seen["endpoint"] == '{"model": "ok"}'
    assert seen["decoy"].startswith("failed") and seen["decoy_localhost"].startswith("failed")
    assert accepted == []
    assert record["network"] == "endpoint-only" and record["schema_version"] == 2


@pytest.mark.skipif(not bubblewrap_available(), reason="bubblewrap does not work here")
def test_through_the_metering_relay_the_call_is_metered_and_nothing_else_leaves(
    h: Harness, tmp_path: Path, loopback: Loopback, decoy: tuple[int, list[str]]
) -> None:
    h.sandbox = BubblewrapSandbox()  # type: ignore[assignment]  # the harness field is typed Local
    loopback.script.answers.append(Answer(text="hi", prompt_tokens=7, completion_tokens=2))
    model = "openai/relay-coder"
    prices = PriceTable("net-test-1", {model: Price(1.0, 1.0, 0.5, simulated=True, note="t")})
    ledger = CostLedger()
    port, accepted = decoy
    with MeteringRelay(loopback.url, prices=prices) as relay:
        labels = CallLabels(run="r", candidate="external:claude-code", role="small")
        with relay.metering(ledger, model, labels):
            seen, record = run_hostile(
                h, tmp_path, hostile(port), relay.url, agent_key=relay.agent_key
            )
    assert json.loads(seen["endpoint"])["choices"][0]["message"]["content"] == "hi"
    assert [r.input_tokens for r in ledger.records()] == [7]  # one call, metered
    assert len(loopback.script.requests) == 1
    assert seen["decoy"].startswith("failed") and accepted == []
    assert record["network"] == "endpoint-only"


def test_the_local_sandbox_cannot_restrict_and_says_so(
    h: Harness,
    tmp_path: Path,
    model_server: ThreadingHTTPServer,
    decoy: tuple[int, list[str]],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The same hostile agent unsandboxed reaches the decoy: the test above can fail.
    monkeypatch.setattr(_network, "_warned", set())  # once per process: this test's process
    port, accepted = decoy
    url = f"http://127.0.0.1:{model_server.server_address[1]}"
    seen, record = run_hostile(h, tmp_path, hostile(port), url)
    assert seen["decoy"] == "connected" and accepted
    assert record["network"].startswith("open: the local sandbox cannot restrict")
    # ... and says so on the console, once per process and agent.
    err = capsys.readouterr().err
    assert err.count("warning: the external agent claude-code runs with the network OPEN") == 1
    assert "the local sandbox cannot restrict" in err and "--sandbox docker" in err
    run_hostile_again = _network.warn_open(_network.NetworkPlan("open", why="x"), "claude-code")
    assert run_hostile_again is False


def test_the_network_plan_follows_the_sandbox_and_the_endpoint() -> None:
    bwrap = BubblewrapSandbox() if bubblewrap_available() else None
    assert network_plan(LocalSandbox(), "http://127.0.0.1:9", None).mode == "open"
    assert loopback_endpoint("http://localhost:8080/v1") == ("127.0.0.1", 8080)
    assert loopback_endpoint("http://[::1]:9") == ("::1", 9)
    assert loopback_endpoint("https://api.anthropic.com/v1") is None
    assert loopback_endpoint("http://127.0.0.1:notaport") is None
    if bwrap is not None:
        assert network_plan(bwrap, None, None).mode == "none"  # an offline model: no endpoint
        local = network_plan(bwrap, "http://127.0.0.1:9", "openai/coder")
        assert local.endpoint == ("127.0.0.1", 9) and local.mode == "endpoint-only"
        remote = network_plan(bwrap, "https://llm.example.com:8443/v1", "openai/gpt")
        assert (remote.mode, remote.endpoint, remote.proxy) == (
            "endpoint-only", ("llm.example.com", 8443), True
        )  # fmt: skip
        assert remote.describe() == "endpoint-only: CONNECT llm.example.com:8443 only"
        assert remote.environment()["HTTPS_PROXY"] == f"http://127.0.0.1:{PROXY_PORT}"
        hosted = network_plan(bwrap, None, "anthropic/claude-sonnet-4-5")  # its own default URL
        assert hosted.endpoint == ("api.anthropic.com", 443) and hosted.proxy
        plain = network_plan(bwrap, "http://10.0.0.5:8000/v1", "openai/coder")
        assert plain.mode == "open" and "plain http" in plain.why
        unknown = network_plan(bwrap, None, "mistral/large")
        assert unknown.mode == "open" and "provider's own" in unknown.why


CONNECTS = """\
import http.client, json, socket, sys

out = {}
for name, port in (("endpoint", MODEL_PORT), ("decoy", DECOY_PORT)):
    conn = http.client.HTTPConnection("127.0.0.1", PROXY_PORT, timeout=10)
    conn.set_tunnel("127.0.0.1", port)
    try:
        conn.request("POST", "/v1/chat/completions", body=b"{}",
                     headers={"Content-Type": "application/json"})
        out[name] = conn.getresponse().read().decode()
    except OSError as exc:
        out[name] = "failed: " + repr(exc)
try:
    socket.create_connection(("127.0.0.1", DECOY_PORT), timeout=5).close()
    out["direct"] = "connected"
except OSError as exc:
    out["direct"] = "failed: " + repr(exc)
print(json.dumps(out))
"""


@pytest.mark.skipif(not bubblewrap_available(), reason="bubblewrap does not work here")
def test_the_proxy_for_a_remote_endpoint_tunnels_only_to_it(
    tmp_path: Path, model_server: ThreadingHTTPServer, decoy: tuple[int, list[str]]
) -> None:
    # A remote HTTPS endpoint stands in as the loopback model server: the proxy plan is the same.
    port, accepted = decoy
    model_port = model_server.server_address[1]
    plan = NetworkPlan("endpoint-only", endpoint=("127.0.0.1", model_port), proxy=True)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    script = scratch / "client.py"
    script.write_text(
        f"MODEL_PORT = {model_port}\nDECOY_PORT = {port}\nPROXY_PORT = {PROXY_PORT}\n{CONNECTS}"
    )
    argv = forwarded_argv([sys.executable, str(script)], plan, scratch)
    with bridge(plan, scratch):
        result = BubblewrapSandbox().run(
            argv, cwd=scratch, timeout_s=60, writable=[scratch], env=plan.environment()
        )
    assert result.exit_code == 0, result.stderr
    seen = json.loads(result.stdout)
    assert seen["endpoint"] == '{"model": "ok"}'
    assert "403" in seen["decoy"] and seen["direct"].startswith("failed")
    assert accepted == []
