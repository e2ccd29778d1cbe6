from __future__ import annotations

from pathlib import Path

import pytest

from loopwright.cli import main
from loopwright.workflow import builtin_workflow, builtin_workflow_names, to_skill_md


@pytest.mark.parametrize("name", builtin_workflow_names())
def test_every_node_becomes_a_numbered_step_in_execution_order(name: str) -> None:
    wf = builtin_workflow(name)
    text = to_skill_md(wf)
    assert text.startswith(f"---\nname: {wf.name}\n")
    positions = [text.index(f"`{node.id}`") for node in wf.nodes]
    assert positions == sorted(positions)
    assert text.count("## Step ") == len(wf.nodes)
    assert "```mermaid" in text


def test_gate_step_states_its_condition_target_and_bound() -> None:
    text = to_skill_md(builtin_workflow("research-build-verify"))
    assert "Run the check `visible_tests_pass`: python -m pytest -q tests" in text
    assert "FAIL: go back to step 2 (`builder`)" in text
    assert "at most 3 time(s), then proceed" in text
    assert "> The task instruction is in {instruction_file}." in text


def test_cli_writes_the_skill_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "SKILL.md"
    assert main(["workflow", "export-skill", "thorough", "-o", str(out)]) == 0
    assert out.read_text() == to_skill_md(builtin_workflow("thorough"))
    assert "wrote" in capsys.readouterr().out
