"""The harness's public surface, and docs/ab.md kept in step with the code it documents."""

from __future__ import annotations

from pathlib import Path

import loopwright.harness as harness
from loopwright.harness import CORRECTNESS_GATE_FLOOR, SCOREBOARD_SCHEMA_VERSION, WEIGHTS

DOC = Path(__file__).resolve().parents[2] / "docs" / "ab.md"


def test_all_is_pinned() -> None:
    assert sorted(harness.__all__) == sorted(
        [
            "AB_RUN", "BRIEF_GRADER", "BUNDLED_BRIEFS", "BUNDLED_MANIFEST", "COMPLEXITIES",
            "CORRECTNESS_GATE_FLOOR", "RUBRIC", "SCOREBOARD_SCHEMA_VERSION", "WEIGHTS", "Brief",
            "BriefGrader", "BriefGrading", "BriefSpec", "BriefSuite", "BriefValidation",
            "Bucket", "Cell", "CellKey", "CellResult", "CellRow", "CellStatus",
            "CheckOutcome", "CheckReport", "GatewaySource", "Manifest", "MeteredModel",
            "MeteringRelay", "ModelSource", "Money", "NothingToApply", "OfflineSource",
            "Pairwise", "Plan", "Promotion", "Provenance", "RankRow", "RecordHeader",
            "RecordOptions", "Rubric", "Scoreboard", "Standing", "apply_promotion",
            "build_scoreboard", "cell_workflow", "current_provenance", "live_loops",
            "load_brief_suite", "load_manifest", "load_results", "make_plan", "promote",
            "read_header", "read_scoreboard", "record", "run_checks", "scoreboard_markdown",
            "staleness", "validate_brief",
        ]
    )  # fmt: skip
    for name in harness.__all__:
        assert getattr(harness, name) is not None


def test_docs_state_the_rubric_and_schema_the_code_uses() -> None:
    text = DOC.read_text(encoding="utf-8")
    for name, weight in WEIGHTS.items():
        assert f"| {name} | {weight:g} |" in text
    assert f"`CORRECTNESS_GATE_FLOOR` = {CORRECTNESS_GATE_FLOOR:g}" in text
    assert f'"schema_version": {SCOREBOARD_SCHEMA_VERSION}' in text
