from __future__ import annotations

from typing import Any

import pytest

from loopwright.errors import ConfigError
from loopwright.workflow import (
    GateNode,
    Workflow,
    builtin_workflow,
    entry_node,
    entry_nodes,
    gates,
    predecessors,
    reloop_targets,
    successors,
    to_networkx,
    topological_order,
)
from tests.workflow.samples import PROMPT

Data = dict[str, Any]


def agent(node_id: str) -> dict[str, Any]:
    return {"id": node_id, "kind": "agent", "role": "r", "prompt": PROMPT}


def diamond() -> Workflow:
    """top -> (right, left) -> join; declared with `right` before `left`."""
    return Workflow.model_validate(
        {
            "name": "diamond",
            "nodes": [agent("top"), agent("right"), agent("left"), agent("join")],
            "edges": [
                {"source": "top", "target": "left"},
                {"source": "top", "target": "right"},
                {"source": "left", "target": "join"},
                {"source": "right", "target": "join"},
            ],
        }
    )


def test_topological_order_follows_edges_then_declaration() -> None:
    assert topological_order(diamond()) == ["top", "right", "left", "join"]
    thorough = builtin_workflow("thorough")
    assert topological_order(thorough) == [
        "study",
        "test_writer",
        "builder",
        "reviewer",
        "gate_verify",
    ]


def test_topological_order_of_a_cycle_is_a_config_error(data: Data) -> None:
    data["edges"].append({"source": "tests", "target": "study"})
    with pytest.raises(ConfigError, match="cycle study -> builder -> tests -> study"):
        topological_order(Workflow.model_validate(data))


def test_entry_node(data: Data) -> None:
    assert entry_node(Workflow.model_validate(data)) == "study"
    assert entry_node(diamond()) == "top"


def test_two_entries_are_named(data: Data) -> None:
    data["nodes"].append(agent("orphan"))
    wf = Workflow.model_validate(data)
    assert entry_nodes(wf) == ["study", "orphan"]
    with pytest.raises(ConfigError, match="exactly one entry node") as info:
        entry_node(wf)
    assert "got: study, orphan" in str(info.value)


def test_neighbours_in_declaration_order() -> None:
    wf = diamond()
    assert successors(wf, "top") == ["right", "left"]
    assert predecessors(wf, "join") == ["right", "left"]
    assert predecessors(wf, "top") == []


def test_neighbours_of_an_unknown_node_list_the_ids() -> None:
    with pytest.raises(ConfigError, match="no node 'nope'"):
        successors(diamond(), "nope")


def test_gates_are_the_gate_nodes(data: Data) -> None:
    found = gates(Workflow.model_validate(data))
    assert [g.id for g in found] == ["gate"]
    assert all(isinstance(g, GateNode) for g in found)


def test_reloop_targets_are_everything_upstream_in_flow_order() -> None:
    wf = builtin_workflow("thorough")
    assert reloop_targets(wf, "gate_verify") == ["study", "test_writer", "builder", "reviewer"]


def test_reloop_targets_exclude_other_branches(data: Data) -> None:
    data["nodes"].append(agent("side"))
    data["edges"].append({"source": "study", "target": "side"})
    assert reloop_targets(Workflow.model_validate(data), "gate") == ["study", "builder", "tests"]


def test_reloop_targets_of_a_non_gate_is_a_config_error(data: Data) -> None:
    with pytest.raises(ConfigError, match="'builder' is not a gate \\(its kind is 'agent'\\)"):
        reloop_targets(Workflow.model_validate(data), "builder")


def test_networkx_graph_has_forward_and_optional_reloop_edges(data: Data) -> None:
    wf = Workflow.model_validate(data)
    forward = to_networkx(wf)
    assert sorted(forward.edges) == [("builder", "tests"), ("study", "builder"), ("tests", "gate")]
    assert forward.nodes["tests"]["node"] == wf.node("tests")
    full = to_networkx(wf, include_reloop=True)
    assert full.edges["gate", "builder"] == {"kind": "reloop", "max_loops": 3}
    assert full.edges["study", "builder"] == {"kind": "forward"}
