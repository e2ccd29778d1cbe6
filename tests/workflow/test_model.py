from __future__ import annotations

import math
from typing import Any

import pytest
from pydantic import ValidationError

from loopwright.errors import ConfigError
from loopwright.workflow import (
    EXTERNAL_LOOP_PREFIX,
    OUTER_LOOP_FUNCTIONS,
    PLACEHOLDERS,
    AgentNode,
    Catalog,
    FnNode,
    GateNode,
    Workflow,
    default_catalog,
)


def test_agent_node_fills_documented_defaults() -> None:
    node = AgentNode(id="builder", role="builder", prompt="{instruction_file}")
    assert (node.kind, node.loop, node.model, node.timeout_s, node.max_turns, node.tools) == (
        "agent",
        "react",
        "medium",
        600,
        30,
        (),
    )


def test_gate_node_defaults_to_three_loops() -> None:
    gate = GateNode(id="g", check="visible_tests_pass", reloop_to="builder")
    assert gate.max_loops == 3
    assert gate.judge is None


def test_nodes_are_parsed_by_kind(data: dict[str, Any]) -> None:
    wf = Workflow.model_validate(data)
    assert [type(n) for n in wf.nodes] == [AgentNode, AgentNode, FnNode, GateNode]
    assert wf.node("tests") == FnNode(id="tests", fn="run_visible_tests", args={"verbose": True})


def test_workflow_is_immutable(data: dict[str, Any]) -> None:
    wf = Workflow.model_validate(data)
    with pytest.raises(ValidationError):
        wf.name = "other"  # type: ignore[misc]  # the point: assignment must fail
    assert isinstance(wf.nodes, tuple)


def test_unknown_keys_are_rejected(data: dict[str, Any]) -> None:
    data["nodes"][0]["temperature"] = 0.2
    with pytest.raises(ValidationError, match="temperature"):
        Workflow.model_validate(data)


@pytest.mark.parametrize("bad_id", ["", "has space", "9lives", "a.b", "x" * 65])
def test_node_ids_must_be_identifiers(data: dict[str, Any], bad_id: str) -> None:
    data["nodes"][0]["id"] = bad_id
    with pytest.raises(ValidationError, match="not a valid node id"):
        Workflow.model_validate(data)


@pytest.mark.parametrize("value", [[1], {"a": 1}, None, math.nan, math.inf])
def test_fn_args_must_be_finite_scalars(data: dict[str, Any], value: object) -> None:
    data["nodes"][2]["args"] = {"x": value}
    with pytest.raises(ValidationError, match=r"args\['x'\] must be a string"):
        Workflow.model_validate(data)


def test_fn_args_keep_their_scalar_types(data: dict[str, Any]) -> None:
    data["nodes"][2]["args"] = {"s": "1", "i": 1, "f": 1.5, "b": True}
    node = Workflow.model_validate(data).node("tests")
    assert isinstance(node, FnNode)
    assert [type(v) for v in node.args.values()] == [str, int, float, bool]


@pytest.mark.parametrize(
    ("field", "value"),
    [("timeout_s", 0), ("max_turns", 0), ("model", "two words"), ("role", " ")],
)
def test_agent_field_ranges(data: dict[str, Any], field: str, value: object) -> None:
    data["nodes"][1][field] = value
    with pytest.raises(ValidationError, match=field):
        Workflow.model_validate(data)


def test_gate_max_loops_must_be_positive(data: dict[str, Any]) -> None:
    data["nodes"][3]["max_loops"] = 0
    with pytest.raises(ValidationError, match="greater than or equal to 1"):
        Workflow.model_validate(data)


def test_future_schema_version_is_rejected(data: dict[str, Any]) -> None:
    data["schema_version"] = 2
    with pytest.raises(ValidationError, match="reads workflow schema_version 1"):
        Workflow.model_validate(data)


def test_workflow_name_must_be_a_slug(data: dict[str, Any]) -> None:
    data["name"] = "my workflow"
    with pytest.raises(ValidationError, match="not a valid workflow name"):
        Workflow.model_validate(data)


def test_unknown_node_lookup_lists_the_ids(data: dict[str, Any]) -> None:
    wf = Workflow.model_validate(data)
    with pytest.raises(ConfigError, match="no node 'nope'") as info:
        wf.node("nope")
    assert "study, builder, tests, gate" in str(info.value)


def test_placeholders_are_one_known_set() -> None:
    assert set(PLACEHOLDERS) == {
        "instruction_file",
        "notes",
        "feedback",
        "workspace",
        "rules",
        "task_id",
    }


def test_default_catalog_has_the_builtin_names() -> None:
    cat = default_catalog()
    assert {"read_file", "write_notes", "run_tests"} <= cat.tools
    task_steps = {"run_visible_tests", "check_diff_nonempty", "collect_notes"}
    assert cat.functions == task_steps | set(OUTER_LOOP_FUNCTIONS)  # the outer-loop's steps
    assert cat.checks == {"visible_tests_pass", "diff_nonempty", "outer_converged"}
    assert cat.loops == {"react", "plan_execute", "hybrid"}


def test_catalog_extended_returns_a_new_catalog() -> None:
    base = default_catalog()
    more = base.extended(tools=["browse"], checks=["lint_clean"])
    assert "browse" in more.tools and "lint_clean" in more.checks
    assert "browse" not in base.tools
    assert isinstance(more, Catalog)


@pytest.mark.parametrize(
    ("loop", "known"),
    [
        ("react", True),
        ("hybrid", True),
        (f"{EXTERNAL_LOOP_PREFIX}claude-code", True),
        (EXTERNAL_LOOP_PREFIX, False),
        (f"{EXTERNAL_LOOP_PREFIX}has space", False),
        ("reflexion", False),
    ],
)
def test_catalog_knows_loops(loop: str, known: bool) -> None:
    assert default_catalog().knows_loop(loop) is known
