"""Folding a run's events into node visits, then into AgentSteps and NodeTraces.

Events of concurrent branches interleave in events.jsonl, so everything is keyed by
(node_id, attempt), which model_call, tool_call and node_end all carry.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from loopwright.errors import ConfigError
from loopwright.records._events import (
    ErrorEvent,
    Event,
    GateDecision,
    GradeEvent,
    ModelCall,
    NodeEnd,
    NodeStart,
    NotesWritten,
    RunEnd,
    RunStart,
    ToolCallEvent,
)
from loopwright.records._record import AgentStep, GateRecord, NodeTrace, StepStatus

__all__ = ["INSTRUCTION_NAME", "RunTrace", "Visit", "agent_steps", "fold_events", "node_traces"]

INSTRUCTION_NAME = "instruction.md"
"""A tool call whose arguments name this file counts as reading the task."""

NodeKind = Literal["agent", "fn", "gate"]


@dataclass(slots=True)
class Visit:
    """One visit of one node: its node_start (or first sighting) and what happened in it."""

    node_id: str
    kind: NodeKind
    role: str
    attempt: int
    started_t: float
    end: NodeEnd | None = None
    calls: list[ModelCall] = field(default_factory=list)
    tools: list[ToolCallEvent] = field(default_factory=list)
    notes_chars: int = 0

    @property
    def status(self) -> StepStatus:
        return self.end.status if self.end else "unfinished"

    @property
    def read_instruction(self) -> bool:
        return any(t.ok and INSTRUCTION_NAME in t.arguments for t in self.tools)


@dataclass(slots=True)
class RunTrace:
    """A run's events, grouped. `visits` is in order of first sighting; `last_t` is the `t` of
    the last event (how long a run without run_end lasted)."""

    start: RunStart
    visits: dict[tuple[str, int], Visit] = field(default_factory=dict)
    decisions: dict[str, list[GateDecision]] = field(default_factory=dict)
    errors: list[ErrorEvent] = field(default_factory=list)
    grade: GradeEvent | None = None
    end: RunEnd | None = None
    last_t: float = 0.0
    _current: dict[str, int] = field(default_factory=dict)

    def visit(self, node_id: str, attempt: int, t: float, kind: NodeKind = "agent") -> Visit:
        """The visit (node_id, attempt), created at `t` when no node_start announced it."""
        key = (node_id, attempt)
        if key not in self.visits:
            self.visits[key] = Visit(node_id, kind, "", attempt, t)
        self._current[node_id] = attempt
        return self.visits[key]

    def add(self, event: Event) -> None:
        """Fold one event in. A second run_start is ignored (the first one names the run)."""
        self.last_t = max(self.last_t, event.t)
        if isinstance(event, NodeStart):
            key = (event.node_id, event.attempt)
            self.visits.setdefault(
                key, Visit(event.node_id, event.kind, event.role, event.attempt, event.t)
            )
            self._current[event.node_id] = event.attempt
        elif isinstance(event, NodeEnd):
            self.visit(event.node_id, event.attempt, event.t, "fn").end = event
        elif isinstance(event, ModelCall):
            self.visit(event.node_id, event.attempt, event.t).calls.append(event)
        elif isinstance(event, ToolCallEvent):
            self.visit(event.node_id, event.attempt, event.t).tools.append(event)
        elif isinstance(event, NotesWritten):
            # notes_written carries no attempt: it belongs to the node's latest visit.
            attempt = self._current.get(event.node_id, 1)
            self.visit(event.node_id, attempt, event.t).notes_chars += event.chars
        elif isinstance(event, GateDecision):
            self.decisions.setdefault(event.node_id, []).append(event)
        elif isinstance(event, ErrorEvent):
            self.errors.append(event)
        elif isinstance(event, GradeEvent):
            self.grade = event
        elif isinstance(event, RunEnd):
            self.end = event


def fold_events(events: Sequence[Event], source: Path) -> RunTrace:
    """Group `events` (in file order) by node visit. Deterministic.

    Raises ConfigError naming `source` when the first event is not run_start (without it the
    run has no identity: task, workflow, model, seed).
    """
    if not events or not isinstance(events[0], RunStart):
        raise ConfigError(
            f"{source} does not begin with a run_start event",
            got=events[0].type if events else "no events",
            fix="events.jsonl must be written by loopwright's runner (EventWriter)",
        )
    trace = RunTrace(start=events[0])
    for event in events[1:]:
        trace.add(event)
    return trace


def _sum_cost(calls: Sequence[ModelCall]) -> float | None:
    costs = [c.cost_usd for c in calls]
    if any(c is None for c in costs):
        return None
    return sum(c for c in costs if c is not None)


def _step(visit: Visit, last_t: float) -> AgentStep:
    end = visit.end
    return AgentStep(
        node_id=visit.node_id,
        role=visit.role,
        attempt=visit.attempt,
        started_t=visit.started_t,
        duration_s=end.duration_s if end else max(0.0, last_t - visit.started_t),
        status=visit.status,
        succeeded=visit.status == "ok",
        error=end.error if end else "unfinished: no node_end (the run stopped during this node)",
        turns=len(visit.calls),
        model_errors=sum(1 for c in visit.calls if c.error is not None),
        tool_calls=len(visit.tools),
        tool_errors=sum(1 for t in visit.tools if not t.ok),
        input_tokens=sum(c.input_tokens for c in visit.calls),
        output_tokens=sum(c.output_tokens for c in visit.calls),
        cached_tokens=sum(c.cached_tokens for c in visit.calls),
        cost_usd=_sum_cost(visit.calls),
        notes_chars=visit.notes_chars,
        read_instruction=visit.read_instruction,
        produced=list(end.produced) if end else [],
        summary=end.summary if end else "",
    )


def agent_steps(trace: RunTrace) -> list[AgentStep]:
    """One AgentStep per visit of an agent node, in order of the visits' first events."""
    return [_step(v, trace.last_t) for v in trace.visits.values() if v.kind == "agent"]


def _gate_record(d: GateDecision) -> GateRecord:
    return GateRecord(
        t=d.t,
        decision=d.decision,
        target=d.target,
        loop_count=d.loop_count,
        max_loops=d.max_loops,
        passed=d.passed,
        reason=d.reason,
    )


def _node_trace(node_id: str, visits: list[Visit], trace: RunTrace) -> NodeTrace:
    decisions = [_gate_record(d) for d in trace.decisions.get(node_id, [])]
    steps = [_step(v, trace.last_t) for v in visits]
    return NodeTrace(
        node_id=node_id,
        kind=visits[0].kind if visits else "gate",
        role=visits[0].role if visits else "",
        fired=len(visits) or len(decisions),
        attempts=[v.attempt for v in visits],
        statuses=[v.status for v in visits],
        produced=sorted({f for s in steps for f in s.produced}),
        duration_s=sum(s.duration_s for s in steps),
        decisions=decisions,
        loop_count=decisions[-1].loop_count if decisions else 0,
    )


def node_traces(trace: RunTrace) -> dict[str, NodeTrace]:
    """One NodeTrace per node seen (visited, or a gate that only logged decisions), in order of
    first sighting, gates without visits last."""
    grouped: dict[str, list[Visit]] = {}
    for visit in trace.visits.values():
        grouped.setdefault(visit.node_id, []).append(visit)
    for gate_id in trace.decisions:
        grouped.setdefault(gate_id, [])
    return {node_id: _node_trace(node_id, visits, trace) for node_id, visits in grouped.items()}
