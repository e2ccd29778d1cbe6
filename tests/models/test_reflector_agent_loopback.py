"""`loopwright evolve --reflector agent` end to end through the real LiteLLM gateway against a
loopback OpenAI-compatible server: the reflector agent lists the generation's runs, reads one
run's transcript and test log with tools, and answers with a report citing that run. Every call
the server received is a row of the run's ledger, per role, and the meta spend in the
checkpoint is those calls' price."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from loopwright.models import LEDGER_FILE, read_ledger, role_kind
from loopwright.reflection import load_reflection, reflection_path
from loopwright.search._checkpoint import load_checkpoint
from tests.models import test_evolve_loopback as base
from tests.models.test_gateway_server import Answer

TRAIN = base.TRAIN


def _tool_results(body: dict[str, Any]) -> list[str]:
    return [str(m.get("content")) for m in body["messages"] if m.get("role") == "tool"]


class AgentCounting(base.Counting):
    """The evolve server of test_evolve_loopback, with a reflector that uses its tools: first
    `list_runs`, then the transcript and test log of the first run listed, then its answer
    citing that run. `read` keeps what the tools answered."""

    read: list[str]

    def answer(self, body: dict[str, Any], role: str) -> Answer:
        if role != "meta:reflector":
            return super().answer(body, role)
        with self.lock:
            self.roles[role] += 1
            self.shapes.add((role, bool(body.get("tools"))))
            self.models[str(body.get("model"))] += 1
        results = _tool_results(body)
        if not results:
            return Answer(calls=(("list_runs", json.dumps({"task": TRAIN})),))
        ref = results[0].split()[0]
        if len(results) == 1:
            return Answer(
                calls=(
                    ("read_transcript", json.dumps({"run": ref, "node": "builder"})),
                    ("read_test_log", json.dumps({"run": ref})),
                )
            )
        self.read = results
        reply = json.loads(json.dumps(base.REFLECTION))
        for item in (*reply["failure_patterns"], *reply["mutation_suggestions"]):
            item["evidence"]["runs"] = [ref]
        return Answer(text=json.dumps(reply))


@pytest.fixture
def agent_server(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setattr(base, "Counting", AgentCounting)
    yield from base.server.__wrapped__(monkeypatch)  # type: ignore[attr-defined]


def test_evolve_reflector_agent_reads_runs_through_the_gateway_and_is_metered(
    agent_server: tuple[str, AgentCounting],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url, counting = agent_server
    monkeypatch.setenv("LOOPWRIGHT_SETTINGS", str(tmp_path / "settings.yaml"))
    run_dir = tmp_path / "run"
    assert base._evolve(url, run_dir, tmp_path, "--reflector", "agent", "--workers", "1") == 0

    report = load_reflection(reflection_path(run_dir, 0))
    assert report.source == "agent", report.note
    assert [u.tool for u in report.tool_calls] == ["list_runs", "read_transcript", "read_test_log"]
    cited = report.failure_patterns[0].evidence.runs
    assert len(cited) == 1 and re.fullmatch(rf"[0-9a-f]+/{TRAIN}/rep0", cited[0])
    transcript, log = counting.read[1:]
    assert '"node_id": "builder"' in transcript and "score " in log  # the run's real exhaust
    # The reflector offered its tools, three calls per generation (list, read, answer).
    assert ("meta:reflector", True) in counting.shapes
    assert counting.roles["meta:reflector"] == 3 * 2
    # Every request the server received is a ledger row, per role; the meta spend is priced.
    ledger = Counter(r.labels.role or "(none)" for r in read_ledger(run_dir / LEDGER_FILE))
    assert ledger == counting.roles
    meta = sum(n for role, n in counting.roles.items() if role_kind(role) == "meta")
    checkpoint = load_checkpoint(run_dir)
    assert checkpoint.spent.meta_usd == pytest.approx(meta * base.CALL_USD)
