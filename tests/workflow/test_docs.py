from __future__ import annotations

import re
from pathlib import Path

from loopwright.workflow import PLACEHOLDERS, validate_workflow, workflow_from_text

DOC = Path(__file__).resolve().parents[2] / "docs" / "workflow.md"


def test_the_documented_example_is_a_valid_workflow() -> None:
    block = re.search(r"```yaml\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    assert block is not None
    wf = workflow_from_text(block.group(1), "yaml", source=str(DOC))
    assert validate_workflow(wf) == []
    assert [n.kind for n in wf.nodes] == ["agent", "agent", "fn", "gate"]


def test_every_placeholder_is_documented() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert [name for name in PLACEHOLDERS if f"`{{{name}}}`" not in text] == []
