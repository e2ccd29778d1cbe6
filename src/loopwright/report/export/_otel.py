"""A run directory's exhaust as OpenTelemetry traces, in the GenAI semantic conventions
(docs/report.md, "Export to OpenTelemetry").

One trace per task run (each `events.jsonl`): a root `invoke_agent {workflow}` span, a span per
node visit (`invoke_agent {node}` for agent nodes), a `chat {model}` span per model call with
its tokens and cost, an `execute_tool {tool}` span per tool call, and a `grade` span; gate
decisions and errors are span events. Times come from the log (`started_at` plus each event's
`t`), and span and trace ids are derived from the run's path, so the same directory always
exports the same spans. Needs `opentelemetry-sdk` (`pip install 'loopwright[otel]'`; an OTLP
endpoint also `opentelemetry-exporter-otlp-proto-http`), imported on first use.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import random
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from loopwright.errors import MissingDependencyError, UsageError
from loopwright.records import (
    EVENTS_FILE,
    ErrorEvent,
    Event,
    GateDecision,
    GradeEvent,
    ModelCall,
    NodeEnd,
    NodeStart,
    RunEnd,
    RunStart,
    ToolCallEvent,
    read_events,
)

__all__ = ["OTEL_HINT", "OtelExport", "export_otel", "task_run_logs"]

OTEL_HINT = "pip install 'loopwright[otel]' (opentelemetry-sdk)"
_OTLP_HINT = "pip install opentelemetry-exporter-otlp-proto-http"


@dataclass(frozen=True, slots=True)
class OtelExport:
    """What was exported: task runs (traces) and spans, and where they went."""

    traces: int
    spans: int
    target: str


def task_run_logs(run_dir: Path) -> list[Path]:
    """Every task run's `events.jsonl` under `run_dir`, in path order (a crashed attempt's
    kept directory, `*.attemptN`, included: its spans show what was lost)."""
    return sorted(run_dir.rglob(EVENTS_FILE))


def export_otel(
    run_dir: str | os.PathLike[str],
    *,
    out: str | os.PathLike[str] | None = None,
    endpoint: str | None = None,
    exporter: Any = None,
) -> OtelExport:
    """Export every task run under `run_dir` as one trace each, to exactly one of: `out`, a
    file of one JSON object per span (the SDK's own span JSON); `endpoint`, an OTLP/HTTP
    traces URL (e.g. http://127.0.0.1:4318/v1/traces); `exporter`, any SDK `SpanExporter`
    (the tests pass the SDK's in-memory one). UsageError for none or several targets or a
    directory with no task run; MissingDependencyError when the SDK is not installed."""
    root = Path(run_dir)
    targets = [t for t in (out, endpoint, exporter) if t is not None]
    if len(targets) != 1:
        raise UsageError(
            "say where the spans go, once",
            got=f"{len(targets)} targets",
            fix="pass one of --out FILE (JSON lines) or --endpoint URL (OTLP/HTTP)",
        )
    logs = task_run_logs(root)
    if not logs:
        raise UsageError(f"no task run under {root}", got=f"no {EVENTS_FILE} in it",
                         fix="pass a directory written by run, evolve or research")  # fmt: skip
    sdk = _sdk()
    sink, target = _exporter(sdk, out, endpoint, exporter)
    ids = _PathIds()
    provider = sdk.trace.TracerProvider(id_generator=ids)
    provider.add_span_processor(sdk.export.SimpleSpanProcessor(sink))
    tracer = provider.get_tracer("loopwright")
    spans = 0
    try:
        for path in logs:
            ids.reseed(path.relative_to(root).as_posix())
            spans += _trace(tracer, read_events(path))
        provider.force_flush()
    finally:
        if exporter is None:  # ours to close; a caller's exporter stays open
            sink.shutdown()
    return OtelExport(traces=len(logs), spans=spans, target=target)


# -- one task run -----------------------------------------------------------------------------


def _trace(tracer: Any, events: Sequence[Event]) -> int:
    """The spans of one task run; returns how many were made."""
    api = importlib.import_module("opentelemetry.trace")
    start = next((e for e in events if isinstance(e, RunStart)), None)
    if start is None:
        return 0
    base = int(datetime.fromisoformat(start.started_at).timestamp() * 1e9)

    def ns(t: float) -> int:
        return base + int(t * 1e9)

    end = next((e for e in events if isinstance(e, RunEnd)), None)
    last = max(e.t for e in events)
    root = tracer.start_span(
        f"invoke_agent {start.workflow_name}", start_time=ns(start.t), attributes=_run_attrs(start)
    )
    made = 1
    ctx = api.set_span_in_context(root)
    nodes: dict[tuple[str, int], Any] = {}
    for event in events:
        made += _one(tracer, api, event, ctx, nodes, root, ns)
    for span in nodes.values():  # a node the run never finished (a kill, a timeout)
        span.set_attribute("loopwright.node.unfinished", True)
        span.end(end_time=ns(last))
    if end is not None:
        root.set_attribute("loopwright.run.status", end.status)
        if end.status != "completed":
            root.set_status(api.Status(api.StatusCode.ERROR, end.error or end.status))
    else:
        root.set_attribute("loopwright.run.status", "unfinished")
    root.end(end_time=ns(end.t if end is not None else last))
    return made


def _one(tracer: Any, api: Any, event: Event, ctx: Any, nodes: dict[tuple[str, int], Any],
         root: Any, ns: Any) -> int:  # fmt: skip
    """Turn one event into a span (returns 1) or an attribute or span event (returns 0)."""
    if isinstance(event, NodeStart):
        name = (
            f"invoke_agent {event.node_id}"
            if event.kind == "agent"
            else f"{event.kind} {event.node_id}"
        )
        attrs: dict[str, Any] = {"loopwright.node.id": event.node_id,
                                 "loopwright.node.kind": event.kind,
                                 "loopwright.node.attempt": event.attempt}  # fmt: skip
        if event.kind == "agent":
            attrs |= {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": event.node_id,
                      "gen_ai.agent.description": event.role}  # fmt: skip
        nodes[(event.node_id, event.attempt)] = tracer.start_span(
            name, context=ctx, start_time=ns(event.t), attributes=attrs
        )
        return 1
    if isinstance(event, NodeEnd):
        span = nodes.pop((event.node_id, event.attempt), None)
        if span is not None:
            span.set_attribute("loopwright.node.status", event.status)
            if event.error:
                span.set_status(api.Status(api.StatusCode.ERROR, event.error[:500]))
            span.end(end_time=ns(event.t))
        return 0
    if isinstance(event, ModelCall | ToolCallEvent):
        parent = nodes.get((event.node_id, event.attempt), root)
        _leaf(tracer, api, event, api.set_span_in_context(parent), ns)
        return 1
    if isinstance(event, GradeEvent):
        attrs = {"loopwright.grade.score": event.score, "loopwright.grade.resolved": event.resolved,
                 "loopwright.grade.invalid": event.invalid}  # fmt: skip
        if event.invalid_reason:
            attrs["loopwright.grade.invalid_reason"] = event.invalid_reason
        span = tracer.start_span("grade", context=ctx, start_time=ns(max(event.t - event.duration_s, 0)),
                                 attributes=attrs)  # fmt: skip
        span.end(end_time=ns(event.t))
        root.set_attributes(attrs)
        return 1
    if isinstance(event, GateDecision):
        target = nodes.get((event.node_id, 1), root)
        target.add_event("gate_decision", {"decision": event.decision, "loop_count": event.loop_count,
                                           "passed": event.passed, "reason": event.reason[:500]},
                         timestamp=ns(event.t))  # fmt: skip
    elif isinstance(event, ErrorEvent):
        root.add_event("error", {"where": event.where, "message": event.message[:1000],
                                 "node_id": event.node_id or ""}, timestamp=ns(event.t))  # fmt: skip
    return 0


def _leaf(tracer: Any, api: Any, event: ModelCall | ToolCallEvent, ctx: Any, ns: Any) -> None:
    if isinstance(event, ModelCall):
        provider = event.model.partition("/")[0] if "/" in event.model else "loopwright"
        attrs: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": provider,
            "gen_ai.request.model": event.model,
            "gen_ai.response.model": event.model,
            "gen_ai.usage.input_tokens": event.input_tokens,
            "gen_ai.usage.output_tokens": event.output_tokens,
            "gen_ai.usage.cache_read.input_tokens": event.cached_tokens,
            "loopwright.turn": event.turn,
            "loopwright.simulated": event.simulated,
            "loopwright.tool_calls": event.tool_calls,
            "loopwright.price_table": event.price_table,
        }
        if event.cost_usd is not None:  # unpriced: the attribute is absent, never 0
            attrs["loopwright.cost_usd"] = event.cost_usd
        name, took, error = f"chat {event.model}", event.latency_s, event.error
    else:
        attrs = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": event.tool,
                 "gen_ai.tool.type": "function", "loopwright.turn": event.turn,
                 "loopwright.tool.output_chars": event.output_chars}  # fmt: skip
        name, took, error = f"execute_tool {event.tool}", event.duration_s, event.error
        if not event.ok and error is None:
            error = "the tool call failed"
    span = tracer.start_span(name, context=ctx, start_time=ns(max(event.t - took, 0.0)),
                             attributes=attrs)  # fmt: skip
    if error:
        span.set_attribute("error.type", error.split(":")[0][:100])
        span.set_status(api.Status(api.StatusCode.ERROR, error[:500]))
    span.end(end_time=ns(event.t))


def _run_attrs(start: RunStart) -> dict[str, Any]:
    return {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": start.workflow_name,
        "gen_ai.request.model": start.model,
        "loopwright.run_id": start.run_id,
        "loopwright.task_id": start.task_id,
        "loopwright.repetition": start.repetition,
        "loopwright.workflow_hash": start.workflow_hash,
        "loopwright.simulated": start.simulated,
        "loopwright.seed": start.seed,
    }


# -- the SDK ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Sdk:
    trace: Any
    export: Any


def _sdk() -> _Sdk:
    try:
        return _Sdk(
            trace=importlib.import_module("opentelemetry.sdk.trace"),
            export=importlib.import_module("opentelemetry.sdk.trace.export"),
        )
    except ImportError:
        raise MissingDependencyError(
            "exporting traces needs the OpenTelemetry SDK",
            got="opentelemetry-sdk is not installed",
            fix=OTEL_HINT,
        ) from None


def _exporter(sdk: _Sdk, out: Any, endpoint: str | None, given: Any) -> tuple[Any, str]:
    if given is not None:
        return given, type(given).__name__
    if out is not None:
        return _JsonLines(Path(out), sdk.export), str(out)
    try:
        module = importlib.import_module("opentelemetry.exporter.otlp.proto.http.trace_exporter")
    except ImportError:
        raise MissingDependencyError(
            "an OTLP endpoint needs the OTLP/HTTP exporter",
            got="opentelemetry-exporter-otlp-proto-http is not installed",
            fix=f"{_OTLP_HINT}, or write a file with --out",
        ) from None
    return module.OTLPSpanExporter(endpoint=endpoint), str(endpoint)


class _JsonLines:
    """A SpanExporter writing each span as one line of JSON (the SDK's `span.to_json()`)."""

    def __init__(self, path: Path, export: Any) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file = path.open("w", encoding="utf-8")
        self._ok = export.SpanExportResult.SUCCESS

    def export(self, spans: Sequence[Any]) -> Any:
        for span in spans:
            self._file.write(json.dumps(json.loads(span.to_json()), sort_keys=True) + "\n")
        return self._ok

    def shutdown(self) -> None:
        self._file.close()

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        self._file.flush()
        return True


class _PathIds:
    """An IdGenerator whose ids are drawn from a seed set per task run (its path), so an export
    is reproducible: the same directory gives the same trace and span ids."""

    def __init__(self) -> None:
        self._rng = random.Random(0)

    def reseed(self, key: str) -> None:
        self._rng = random.Random(int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big"))

    def is_trace_id_random(self) -> bool:
        return False  # derived from the path: W3C's "random" flag would be untrue

    def generate_span_id(self) -> int:
        return self._nonzero(64)

    def generate_trace_id(self) -> int:
        return self._nonzero(128)

    def _nonzero(self, bits: int) -> int:
        value = 0
        while value == 0:
            value = self._rng.getrandbits(bits)
        return value
