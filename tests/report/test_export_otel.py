"""A run's exhaust as OpenTelemetry traces, read back from the real SDK's in-memory exporter and
from the JSON-lines file: one trace per task run, GenAI spans for agents, model calls (tokens,
cost) and tool calls, times from the log, and the same ids on every export."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loopwright.errors import UsageError
from loopwright.records import ModelCall, ToolCallEvent, read_events
from loopwright.report.export import export_otel, task_run_logs
from tests.report.conftest import CliRun

pytest.importorskip("opentelemetry.sdk")  # a dev dependency: installed in CI (make test)
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)


def test_each_task_run_is_one_trace_of_genai_spans(sim_run: CliRun) -> None:
    memory = InMemorySpanExporter()
    done = export_otel(sim_run.run_dir, exporter=memory)
    spans = memory.get_finished_spans()
    logs = task_run_logs(sim_run.run_dir)
    assert done.traces == len(logs) == len({s.context.trace_id for s in spans})
    assert done.spans == len(spans)

    events = [e for path in logs for e in read_events(path)]
    calls = [e for e in events if isinstance(e, ModelCall)]
    tools = [e for e in events if isinstance(e, ToolCallEvent)]
    chats = [s for s in spans if s.attributes.get("gen_ai.operation.name") == "chat"]
    assert len(chats) == len(calls) and calls
    assert sum(s.attributes["gen_ai.usage.input_tokens"] for s in chats) == sum(
        c.input_tokens for c in calls
    )
    assert sum(s.attributes["gen_ai.usage.output_tokens"] for s in chats) == sum(
        c.output_tokens for c in calls
    )
    assert sum(s.attributes.get("loopwright.cost_usd", 0.0) for s in chats) == pytest.approx(
        sum(c.cost_usd or 0.0 for c in calls)
    )
    executed = [s for s in spans if s.attributes.get("gen_ai.operation.name") == "execute_tool"]
    assert sorted(s.attributes["gen_ai.tool.name"] for s in executed) == sorted(
        t.tool for t in tools
    )

    by_id = {s.context.span_id: s for s in spans}
    roots = [s for s in spans if s.parent is None]
    assert len(roots) == done.traces
    assert {r.name for r in roots} == {"invoke_agent builder-only",
                                       "invoke_agent research-build-verify"}  # fmt: skip
    for chat in chats:  # a model call sits under its agent node, inside the node's time
        node = by_id[chat.parent.span_id]
        assert node.name.startswith("invoke_agent ") and node.parent is not None
        assert node.start_time <= chat.start_time <= chat.end_time <= node.end_time
    for root in roots:
        assert "loopwright.grade.score" in root.attributes


def test_the_json_file_holds_the_same_spans_with_the_same_ids_each_time(
    sim_run: CliRun, tmp_path: Path
) -> None:
    first = export_otel(sim_run.run_dir, out=tmp_path / "a.jsonl")
    export_otel(sim_run.run_dir, out=tmp_path / "b.jsonl")
    lines = (tmp_path / "a.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == first.spans
    spans = [json.loads(line) for line in lines]
    assert {s["context"]["trace_id"] for s in spans} and all(s["name"] for s in spans)
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()


def test_a_directory_without_runs_or_targets_is_refused(sim_run: CliRun, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no task run"):
        export_otel(tmp_path, out=tmp_path / "x.jsonl")
    with pytest.raises(UsageError, match="once"):
        export_otel(sim_run.run_dir)
    with pytest.raises(UsageError, match="once"):
        export_otel(sim_run.run_dir, out=tmp_path / "x", endpoint="http://127.0.0.1:4318")
