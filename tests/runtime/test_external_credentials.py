"""The credential boundary (issue 32, seed 004): an external agent metered by the relay never
holds a provider's real key. A hostile stand-in agent dumps its environment and every file it
can read where a key could be left (its HOME, scratch, workspace, the relay directory, the
container's /tmp, and every /proc/*/environ and cmdline it can open), then calls its model with
the key it was given. The real key, a recognisable fake planted in the test's environment, must
appear nowhere in the dump, and the call must still reach the loopback server, carrying the
real key: the relay put it in. Run under the local sandbox, bubblewrap and the container
sandbox (Podman in CI)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from loopwright.harness import MeteringRelay
from loopwright.models import CallLabels, CostLedger, Price, PriceTable
from loopwright.runtime import EXTERNAL_AGENTS, ExternalSettings, default_registries, external_loop
from loopwright.sandbox import BubblewrapSandbox, DockerSandbox, bubblewrap_available
from loopwright.workflow import EXTERNAL_LOOP_PREFIX
from tests.containers import docker_sandbox_or_skip
from tests.models.test_gateway_server import Answer, Loopback, loopback
from tests.runtime.conftest import FakeModel, Harness, agent, chain

__all__ = ["loopback"]  # the fixture, re-exported for pytest

REAL_KEY = "sk-ant-REAL-planted-by-the-test-9f3c2e"
MODEL = "anthropic/relay-coder"

DUMPER = """\
import glob, json, os, urllib.request

dump = {"environ": dict(os.environ), "files": {}}
roots = [os.environ.get("HOME", ""), os.getcwd(), "/.lw"] + (["/tmp"] if CONTAINER else [])
roots += [v for v in os.environ.values() if v.startswith("/") and os.path.isdir(v)]
paths = glob.glob("/proc/*/environ") + glob.glob("/proc/*/cmdline")
for root in filter(None, roots):
    for folder, _, names in os.walk(root):
        paths += [os.path.join(folder, name) for name in names]
for path in paths[:5000]:
    try:
        with open(path, "rb") as f:
            dump["files"][path] = f.read(1_000_000).decode("utf-8", "replace")
    except OSError:
        pass
key = os.environ.get("ANTHROPIC_API_KEY", "")
body = {"model": "any", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]}
request = urllib.request.Request(
    os.environ["ANTHROPIC_BASE_URL"] + "/v1/chat/completions", data=json.dumps(body).encode(),
    headers={"Content-Type": "application/json", "x-api-key": key},
)
try:
    with urllib.request.urlopen(request, timeout=20) as reply:
        dump["reply"] = reply.read().decode()
except OSError as exc:
    dump["reply"] = "failed: " + repr(exc)
with open("dump.json", "w") as f:
    json.dump(dump, f)
"""


@pytest.fixture(params=["local", "bubblewrap", "container"])
def sandboxed(request: pytest.FixtureRequest, h: Harness) -> Any:
    if request.param == "local":
        yield h
        return
    if request.param == "bubblewrap":
        if not bubblewrap_available():
            pytest.skip("bubblewrap does not work here")
        h.sandbox = BubblewrapSandbox()  # type: ignore[assignment]  # the field is typed Local
        yield h
        return
    sandbox: DockerSandbox = docker_sandbox_or_skip()
    h.sandbox = sandbox  # type: ignore[assignment]  # the harness field is typed Local
    yield h
    sandbox.release(h.workspace)


def test_a_relayed_agent_finds_no_real_key_yet_its_calls_carry_it(
    sandboxed: Harness, tmp_path: Path, loopback: Loopback, monkeypatch: pytest.MonkeyPatch
) -> None:
    h = sandboxed
    monkeypatch.setenv("ANTHROPIC_API_KEY", REAL_KEY)  # where a user keeps it
    loopback.script.answers.append(Answer(text="hi", prompt_tokens=7, completion_tokens=2))
    script = tmp_path / "bin" / "claude"
    script.parent.mkdir()
    container = isinstance(h.sandbox, DockerSandbox)  # its /tmp is its own: dump that too
    python = "/usr/bin/python3" if container else sys.executable
    script.write_text(f"#!{python}\nCONTAINER = {container}\n{DUMPER}")
    script.chmod(0o755)
    prices = PriceTable("cred-test-1", {MODEL: Price(1.0, 1.0, 0.5, simulated=True, note="t")})
    ledger = CostLedger()
    with MeteringRelay(loopback.url, prices=prices) as relay:  # reads the key from os.environ
        settings = ExternalSettings(
            executable=str(script), api_base=relay.url, agent_key=relay.agent_key
        )  # environ: os.environ, read at the visit, as in a real run
        loop = external_loop(EXTERNAL_AGENTS.get("claude-code"), settings)
        regs = default_registries().with_loop(EXTERNAL_LOOP_PREFIX + "claude-code", loop)
        node = agent("builder", loop=EXTERNAL_LOOP_PREFIX + "claude-code", timeout_s=90)
        labels = CallLabels(run="r", candidate="external:claude-code", role="small")
        with relay.metering(ledger, MODEL, labels):
            h.run(chain(node), FakeModel([]), registries=regs)
    dump = json.loads((h.workspace / "dump.json").read_text())
    # The agent had a key to use (the placeholder) and read files: the dump is not empty.
    assert dump["environ"]["ANTHROPIC_API_KEY"] == relay.agent_key
    assert len(dump["files"]) > 3
    assert REAL_KEY not in json.dumps(dump)
    # ... and its metered call still reached the server, with the real key in it.
    assert json.loads(dump["reply"])["choices"][0]["message"]["content"] == "hi"
    assert [h["x-api-key"] for h in loopback.script.headers] == [REAL_KEY]
    assert [(r.ok, r.input_tokens) for r in ledger.records()] == [(True, 7)]
    assert all(REAL_KEY not in p.read_text() for p in h.events_path.parent.rglob("*.json*"))


def test_the_agent_gets_a_placeholder_for_each_key_variable_it_needs() -> None:
    from loopwright.runtime.external._types import ExternalRequest

    environ = {"PATH": "/bin", "OPENAI_API_KEY": REAL_KEY, "ANTHROPIC_AUTH_TOKEN": REAL_KEY}
    plain = ExternalRequest("p", Path(), Path(), None, None, 3, environ)
    assert plain.keys("OPENAI_API_KEY") == {"OPENAI_API_KEY": REAL_KEY}  # no relay: as before
    relayed = ExternalRequest("p", Path(), Path(), None, None, 3, environ, agent_key="ph")
    assert relayed.keys("OPENAI_API_KEY", "CODEX_API_KEY") == {"OPENAI_API_KEY": "ph"}
    assert relayed.keys("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN") == {
        "ANTHROPIC_AUTH_TOKEN": "ph"
    }
    assert relayed.keys("MISTRAL_API_KEY") == {"MISTRAL_API_KEY": "ph"}  # none set: the first
    adapter = EXTERNAL_AGENTS.get("codex")
    env = adapter.invocation(relayed, "codex", ()).env
    assert env["OPENAI_API_KEY"] == env["CODEX_API_KEY"] == "ph"
    assert REAL_KEY not in json.dumps(dict(env))
