"""Exhaust schemas: events.jsonl, and (with CycleAnalyzer) the CycleRecord built from a run."""

from __future__ import annotations

from loopwright.records._events import (
    EVENTS_FILE,
    EVENTS_SCHEMA_VERSION,
    ErrorEvent,
    Event,
    EventWriter,
    GateDecision,
    GradeEvent,
    ModelCall,
    NodeEnd,
    NodeStart,
    NotesWritten,
    RunEnd,
    RunStart,
    ToolCallEvent,
    iter_events,
    read_events,
)

__all__ = [
    "EVENTS_FILE",
    "EVENTS_SCHEMA_VERSION",
    "ErrorEvent",
    "Event",
    "EventWriter",
    "GateDecision",
    "GradeEvent",
    "ModelCall",
    "NodeEnd",
    "NodeStart",
    "NotesWritten",
    "RunEnd",
    "RunStart",
    "ToolCallEvent",
    "iter_events",
    "read_events",
]
