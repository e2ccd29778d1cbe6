from __future__ import annotations

import re
import typing
from pathlib import Path

import pytest
from pydantic import BaseModel

from loopwright import records

DOC = (Path(__file__).parents[2] / "docs" / "records.md").read_text(encoding="utf-8")
EVENTS = typing.get_args(typing.get_args(records.Event)[0])
MODELS = (
    records.CycleRecord,
    records.AgentStep,
    records.NodeTrace,
    records.GateRecord,
    records.GradeSummary,
    records.TestOutcomeRecord,
    records.ExperimentRecord,
)


@pytest.mark.parametrize("model", [*EVENTS, *MODELS], ids=lambda m: m.__name__)
def test_every_field_is_documented(model: type[BaseModel]) -> None:
    missing = [name for name in model.model_fields if f"`{name}`" not in DOC]
    assert missing == []


@pytest.mark.parametrize("event", EVENTS, ids=lambda m: m.__name__)
def test_every_event_type_has_a_section(event: type[BaseModel]) -> None:
    assert f"**`{event.model_fields['type'].default}`**" in DOC


def test_failure_table_lists_categories_in_priority_order() -> None:
    rows = re.findall(r"^\| \d+ \| `(\w+)` \|", DOC, flags=re.MULTILINE)
    # invalid_grade appears twice: a present invalid grade (2nd), a missing grade (9th).
    assert [c for i, c in enumerate(rows) if c not in rows[:i]] == [
        c.value for c in records.FailureCategory
    ]
    assert len(rows) == len(records.FailureCategory) + 1
