from __future__ import annotations

import loopwright.records as records

EXPECTED = {
    "DIFF_FILE",
    "EVENTS_FILE",
    "EVENTS_SCHEMA_VERSION",
    "FORFEIT_PREFIXES",
    "forfeited",
    "GRADE_FILE",
    "INSTRUCTION_NAME",
    "RECORD_FILE",
    "RECORD_SCHEMA_VERSION",
    "AgentStep",
    "CycleAnalyzer",
    "CycleRecord",
    "CycleVerdict",
    "ErrorEvent",
    "Event",
    "EventWriter",
    "ExperimentRecord",
    "FailureCategory",
    "FailureEvidence",
    "GateDecision",
    "GateRecord",
    "GradeEvent",
    "GradeSummary",
    "ModelCall",
    "NodeEnd",
    "NodeStart",
    "NodeStatus",
    "NodeTrace",
    "NotesWritten",
    "RunEnd",
    "RunStart",
    "RunStatus",
    "StepStatus",
    "TestOutcome",
    "TestOutcomeRecord",
    "ToolCallEvent",
    "categorize_failure",
    "diff_files",
    "iter_events",
    "load_record",
    "judge_cycle",
    "parse_record",
    "record_from_json",
    "VERDICT_FILE",
    "DEFAULT_PLATEAU_AFTER",
    "read_events",
    "read_grade",
    "write_record",
}


def test_public_names_are_pinned() -> None:
    assert set(records.__all__) == EXPECTED
    assert len(records.__all__) == len(EXPECTED)
    assert [name for name in records.__all__ if not hasattr(records, name)] == []
