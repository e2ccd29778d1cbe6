"""The issue's first "must be shown": `research-build-verify` resolves a mini task through the
real LiteLLM gateway talking to a loopback OpenAI-compatible server. The ledger's tokens equal
what the server sent, cost is derived from a named price table, and the key never reaches disk."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loopwright.evaluation import TaskRunSpec, run_task
from loopwright.models import (
    LEDGER_FILE,
    CostLedger,
    GatewaySettings,
    LiteLLMGateway,
    Message,
    Price,
    PriceTable,
    label_scope,
    read_ledger,
)
from loopwright.records import read_events
from loopwright.sandbox import default_sandbox
from loopwright.tasks import Task, load_benchmark
from loopwright.workflow import builtin_workflow
from tests.models.test_gateway_server import DUMMY_KEY, Answer, Loopback, loopback

__all__ = ["loopback"]  # the fixture, re-exported for pytest

MODEL = "openai/loopback-coder"
# A test-only price (not a real provider's), so that the derived cost can be checked exactly.
PRICES = PriceTable(
    version="loopback-test-prices-1",
    prices={MODEL: Price(2.0, 8.0, 0.5, simulated=True, note="test price of the loopback model")},
)


def roman_task() -> Task:
    return load_benchmark("mini").task("l1-roman-numerals")


def gold_files(task: Task) -> dict[str, str]:
    solution = task.solution_dir
    assert solution is not None
    return {
        str(p.relative_to(solution)): p.read_text(encoding="utf-8")
        for p in sorted(solution.rglob("*"))
        if p.is_file()
    }


def research_build_verify_answers(instruction: Path, task: Task) -> list[Answer]:
    """study: read the instruction, write notes, finish; builder: read it, write the gold
    solution, run the tests, finish. Each answer with its own usage (and some cache reads)."""

    def call(name: str, **arguments: str) -> tuple[str, str]:
        return (name, json.dumps(arguments))

    writes = [call("write_file", path=p, content=c) for p, c in gold_files(task).items()]
    steps: list[tuple[tuple[str, str], ...]] = [
        (call("read_file", path=str(instruction)),),
        (call("write_notes", text="Add from_roman to numfmt/roman.py; strict canonical form."),),
        (call("finish", summary="notes written"),),
        (call("read_file", path=str(instruction)),),
        tuple(writes),
        (call("run_tests"),),
        (call("finish", summary="implemented from_roman"),),
    ]
    return [
        Answer(
            calls=s, prompt_tokens=500 + 37 * i, completion_tokens=40 + 3 * i, cached_tokens=100 * i
        )
        for i, s in enumerate(steps)
    ]


def files_under(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()]


def test_research_build_verify_resolves_a_mini_task_through_the_gateway(
    loopback: Loopback, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", DUMMY_KEY)
    task, run_dir = roman_task(), tmp_path / "run"
    loopback.script.answers.extend(
        research_build_verify_answers((run_dir / "instruction.md").resolve(), task)
    )
    ledger = CostLedger(run_dir / LEDGER_FILE)
    model = LiteLLMGateway(
        MODEL, GatewaySettings(api_base=loopback.url), ledger=ledger, prices=PRICES
    )
    spec = TaskRunSpec(
        workflow=builtin_workflow("research-build-verify"),
        task=task,
        model=model,
        sandbox=default_sandbox(),
        prices=PRICES,
        run_dir=run_dir,
        run_id="loopback",
        seed=0,
    )
    with label_scope(run="loopback", candidate="c0"):
        record = run_task(spec)

    # The run resolves the task.
    assert record.errors == []
    assert record.grade is not None and record.grade.resolved
    assert record.score_end == 1.0
    assert [(s.node_id, s.status) for s in record.steps] == [("study", "ok"), ("builder", "ok")]
    assert not record.simulated and record.model == MODEL

    # The ledger's tokens are exactly what the server sent, one record per call.
    sent = loopback.script.sent()
    assert len(sent) == 7 and len(ledger.records()) == 7
    total = ledger.totals()[None]
    assert total.input_tokens == sum(a.prompt_tokens for a in sent)
    assert total.output_tokens == sum(a.completion_tokens for a in sent)
    assert total.cache_read_tokens == sum(a.cached_tokens for a in sent)
    assert read_ledger(run_dir / LEDGER_FILE) == ledger.records()
    assert {(r.labels.run, r.labels.candidate) for r in ledger.records()} == {("loopback", "c0")}
    # The Runner labels each call with its node and the node's role (the agent).
    roles = {n.id: getattr(n, "role", "") for n in spec.workflow.nodes}
    assert [r.labels.node for r in ledger.records()] == ["study"] * 3 + ["builder"] * 4
    assert all(r.labels.role == roles[r.labels.node or ""] for r in ledger.records())
    assert set(ledger.totals(by="node")) == {"study", "builder"}
    # ...and the run's own events agree with the ledger.
    assert record.input_tokens == total.input_tokens
    assert record.output_tokens == total.output_tokens

    # Cost is derived from the raw counts with the named table, never guessed.
    fresh = total.input_tokens - total.cache_read_tokens
    expected = (fresh * 2.0 + total.cache_read_tokens * 0.5 + total.output_tokens * 8.0) / 1e6
    assert total.cost_usd == pytest.approx(expected)
    assert {r.price_table for r in ledger.records()} == {"loopback-test-prices-1"}
    assert record.total_cost_usd == pytest.approx(expected)
    calls = [e for e in read_events(run_dir / "events.jsonl") if e.type == "model_call"]
    assert [c.input_tokens for c in calls] == [a.prompt_tokens for a in sent]

    # The key was used (the server saw it) but reached no file of the run.
    assert {h["authorization"] for h in loopback.script.headers} == {f"Bearer {DUMMY_KEY}"}
    assert files_under(run_dir)
    for path in files_under(run_dir):
        assert DUMMY_KEY.encode() not in path.read_bytes(), path


def test_unpriced_model_records_tokens_with_unknown_cost(
    loopback: Loopback, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", DUMMY_KEY)
    loopback.script.answers.append(Answer(text="nothing to do", prompt_tokens=77))
    ledger = CostLedger(tmp_path / LEDGER_FILE)
    model = LiteLLMGateway(
        "openai/not-in-any-table", GatewaySettings(api_base=loopback.url), ledger=ledger
    )
    model.chat([Message("user", "hi")], [])
    (entry,) = ledger.records()
    assert entry.input_tokens == 77 and entry.cost_usd is None
    assert ledger.totals()[None].cost_usd is None and ledger.totals()[None].unpriced_calls == 1
