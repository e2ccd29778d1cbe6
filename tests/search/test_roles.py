from __future__ import annotations

import pytest

from loopwright.errors import ConfigError
from loopwright.runtime import runtime_catalog
from loopwright.search.mutations._roles import (
    READ_ONLY_TOOLS,
    ROLES,
    WRITE_TOOLS,
    is_read_only,
    make_role,
)
from loopwright.workflow import Workflow, check_workflow, prompt_placeholders


def test_library_has_the_six_roles() -> None:
    assert set(ROLES) == {"researcher", "planner", "reviewer", "test_writer", "debugger", "fixer"}


@pytest.mark.parametrize("role", sorted(ROLES))
def test_role_prompt_names_the_task_and_the_rules(role: str) -> None:
    node = make_role(role, f"my_{role}")
    used = prompt_placeholders(node.prompt)
    assert {"instruction_file", "workspace", "rules", "notes"} <= used
    text = node.prompt.lower()
    assert "no internet" in text
    assert "never modify" in text and "existing tests" in text
    assert "write_notes" in node.prompt
    assert node.model == "medium"
    assert node.role == role and node.id == f"my_{role}"


@pytest.mark.parametrize("role", sorted(ROLES))
def test_role_node_validates_against_runtime_catalog(role: str) -> None:
    wf = Workflow(name="solo", nodes=(make_role(role, "solo"),))
    check_workflow(wf, runtime_catalog())


@pytest.mark.parametrize("role", ["researcher", "planner", "reviewer"])
def test_read_only_roles_cannot_write_files(role: str) -> None:
    node = make_role(role, "x")
    assert is_read_only(node)
    assert "write_notes" in node.tools
    assert not set(node.tools) & WRITE_TOOLS


@pytest.mark.parametrize("role", ["test_writer", "debugger", "fixer"])
def test_writing_roles_get_write_tools(role: str) -> None:
    node = make_role(role, "x")
    assert not is_read_only(node)
    assert set(node.tools) & WRITE_TOOLS
    assert "run_tests" in node.tools
    assert not set(node.tools) <= READ_ONLY_TOOLS


def test_unknown_role_is_a_config_error_listing_roles() -> None:
    with pytest.raises(ConfigError, match="researcher"):
        make_role("wizard", "x")


def test_the_fixer_is_a_reviewer_that_may_edit() -> None:
    """The reviewer that fixes what it finds (thorough's), which the read-only reviewer is not:
    it edits source files, never writes new ones, and reviews against the instruction."""
    node = make_role("fixer", "x")
    assert "edit_file" in node.tools and "write_file" not in node.tools
    assert "review" in node.prompt.lower() and "fix" in node.prompt.lower()
