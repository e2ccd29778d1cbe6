from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from loopwright.errors import ConfigError
from loopwright.workflow import Workflow, check_workflow, default_catalog, validate_workflow
from tests.workflow.samples import PROMPT, sample_data

Data = dict[str, Any]


def node(data: Data, node_id: str) -> dict[str, Any]:
    return next(n for n in data["nodes"] if n["id"] == node_id)


def agent(node_id: str, prompt: str = PROMPT) -> dict[str, Any]:
    return {"id": node_id, "kind": "agent", "role": "helper", "prompt": prompt}


def edge(source: str, target: str) -> dict[str, str]:
    return {"source": source, "target": target}


def branch(data: Data) -> None:
    """study -> side as a second branch that does not lead to the gate."""
    data["nodes"].append(agent("side"))
    data["edges"].append(edge("study", "side"))


def set_in(node_id: str, **fields: object) -> Callable[[Data], None]:
    def apply(data: Data) -> None:
        node(data, node_id).update(fields)

    return apply


# Each case: how to break the sample, the issue code, and text the message must contain
# (the node or edge at fault, and what would be valid).
CASES: dict[str, tuple[Callable[[Data], None], str, list[str]]] = {
    "duplicate id": (
        lambda d: d["nodes"].append(agent("builder")),
        "duplicate_node",
        ["node 'builder'", "nodes[1], nodes[4]"],
    ),
    "dangling target": (
        lambda d: d["edges"].append(edge("gate", "deploy")),
        "dangling_edge",
        ["edge gate -> deploy", "target 'deploy' is not a node", "study, builder, tests, gate"],
    ),
    "dangling source": (
        lambda d: d["edges"].append(edge("ghost", "gate")),
        "dangling_edge",
        ["edge ghost -> gate", "source 'ghost'"],
    ),
    "duplicate edge": (
        lambda d: d["edges"].append(edge("study", "builder")),
        "duplicate_edge",
        ["edge study -> builder", "appears 2 times"],
    ),
    "cycle": (
        lambda d: d["edges"].append(edge("tests", "builder")),
        "cycle",
        ["builder -> tests -> builder", "only allowed as a gate's reloop_to"],
    ),
    "self loop": (
        lambda d: d["edges"].append(edge("tests", "tests")),
        "cycle",
        ["tests -> tests"],
    ),
    "reloop to a later node": (
        lambda d: (
            d["nodes"].append(agent("after")),
            d["edges"].append(edge("gate", "after")),
            set_in("gate", reloop_to="after")(d),
        ),
        "reloop_not_upstream",
        ["node 'gate'", "'after' comes after the gate", "Valid targets: study, builder, tests"],
    ),
    "reloop to a node on another branch": (
        lambda d: (branch(d), set_in("gate", reloop_to="side")(d)),
        "reloop_not_upstream",
        ["node 'gate'", "'side' is not upstream", "Valid targets: study, builder, tests"],
    ),
    "reloop to itself": (
        set_in("gate", reloop_to="gate"),
        "reloop_not_upstream",
        ["node 'gate'", "cannot RELOOP to itself"],
    ),
    "reloop to unknown node": (
        set_in("gate", reloop_to="planner"),
        "reloop_unknown",
        ["node 'gate'", "'planner' is not a node", "Valid targets: study, builder, tests"],
    ),
    "unknown tool": (
        set_in("builder", tools=["read_file", "web_search"]),
        "unknown_tool",
        ["node 'builder'", "'web_search'", "known tools: edit_file, list_files, read_file"],
    ),
    "duplicate tool": (
        set_in("builder", tools=["read_file", "read_file"]),
        "duplicate_tool",
        ["node 'builder'", "'read_file' is listed 2 times"],
    ),
    "unknown function": (
        set_in("tests", fn="run_all_tests"),
        "unknown_function",
        [
            "node 'tests'",
            "'run_all_tests'",
            "check_diff_nonempty, collect_notes, outer_evaluate",
        ],
    ),
    "unknown check": (
        set_in("gate", check="tests_green"),
        "unknown_check",
        ["node 'gate'", "'tests_green'", "diff_nonempty, outer_converged, visible_tests_pass"],
    ),
    "unknown loop": (
        set_in("builder", loop="reflexion"),
        "unknown_loop",
        ["node 'builder'", "'reflexion'", "hybrid, plan_execute, react", "external:NAME"],
    ),
    "external loop without a name": (
        set_in("builder", loop="external:"),
        "unknown_loop",
        ["node 'builder'", "'external:'"],
    ),
    "empty prompt": (
        set_in("builder", prompt=""),
        "empty_prompt",
        ["node 'builder'", "prompt is empty", "{instruction_file}"],
    ),
    "whitespace prompt": (
        set_in("study", prompt="  \n\t\n"),
        "empty_prompt",
        ["node 'study'", "prompt is empty"],
    ),
    "unknown placeholder": (
        set_in("builder", prompt="{instruction_file} {task_description}"),
        "unknown_placeholder",
        ["node 'builder'", "{task_description}", "known placeholders: {instruction_file}"],
    ),
    "decorated placeholder": (
        set_in("builder", prompt="{instruction_file} {notes!r}"),
        "unknown_placeholder",
        ["node 'builder'", "{notes}", "without !conversion"],
    ),
    "unbalanced braces": (
        set_in("builder", prompt="{instruction_file} use {x: 1} and }"),
        "bad_template",
        ["node 'builder'", "write literal braces as {{ }}"],
    ),
    "prompt without the instruction file": (
        set_in("builder", prompt="Implement the feature in {workspace}."),
        "missing_instruction_file",
        ["node 'builder'", "never mentions {instruction_file}"],
    ),
    "gate with check and judge": (
        set_in("gate", judge="Is the work done? {instruction_file}"),
        "gate_check_judge",
        ["node 'gate'", "both check and judge", "visible_tests_pass"],
    ),
    "gate with neither check nor judge": (
        set_in("gate", check=None),
        "gate_check_judge",
        ["node 'gate'", "neither check nor judge"],
    ),
    "judge without the instruction file": (
        set_in("gate", check=None, judge="Did the builder finish?"),
        "missing_instruction_file",
        ["node 'gate'", "judge prompt never mentions {instruction_file}"],
    ),
    "unknown frozen id": (
        lambda d: d["frozen"].append("planner"),
        "unknown_frozen",
        ["frozen: 'planner' is not a node", "study, builder, tests, gate"],
    ),
    "duplicate frozen id": (
        lambda d: d["frozen"].append("study"),
        "duplicate_frozen",
        ["frozen: 'study' is listed 2 times"],
    ),
    "two entry nodes": (
        lambda d: d["nodes"].append(agent("orphan")),
        "entry",
        ["workflow: needs exactly one entry node", "has 2: study, orphan"],
    ),
    "no entry node": (
        lambda d: d["edges"].append(edge("gate", "study")),
        "entry",
        ["has none"],
    ),
    "unreachable loop": (
        lambda d: (
            d["nodes"].extend([agent("left"), agent("right")]),
            d["edges"].extend([edge("left", "right"), edge("right", "left")]),
        ),
        "unreachable",
        ["node 'left': is not reachable from the entry node 'study'"],
    ),
    "no nodes": (
        lambda d: d.update(nodes=[], edges=[], frozen=[]),
        "no_nodes",
        ["workflow: has no nodes"],
    ),
}


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_invalid_workflow_names_the_fault(case: str) -> None:
    mutate, code, fragments = CASES[case]
    data = sample_data()
    mutate(data)
    issues = validate_workflow(Workflow.model_validate(data))
    matching = [str(i) for i in issues if i.code == code]
    assert matching, f"no {code} issue in {[str(i) for i in issues]}"
    for fragment in fragments:
        assert any(fragment in text for text in matching), (fragment, matching)


def test_sample_workflow_is_valid(data: Data) -> None:
    assert validate_workflow(Workflow.model_validate(data)) == []


def test_every_problem_is_reported_not_just_the_first(data: Data) -> None:
    node(data, "builder")["tools"] = ["teleport"]
    node(data, "tests")["fn"] = "nope"
    data["edges"].append(edge("gate", "nowhere"))
    data["frozen"].append("ghost")
    codes = [i.code for i in validate_workflow(Workflow.model_validate(data))]
    assert codes == ["unknown_tool", "unknown_function", "dangling_edge", "unknown_frozen"]


def test_issues_carry_the_node_id_when_about_one_node(data: Data) -> None:
    node(data, "builder")["loop"] = "nope"
    (issue,) = validate_workflow(Workflow.model_validate(data))
    assert issue.node_id == "builder"
    assert issue.to_dict() == {
        "code": "unknown_loop",
        "where": "node 'builder'",
        "message": issue.message,
        "node_id": "builder",
    }


def test_a_catalog_can_allow_more_names(data: Data) -> None:
    node(data, "builder")["tools"] = ["browse"]
    wf = Workflow.model_validate(data)
    assert [i.code for i in validate_workflow(wf)] == ["unknown_tool"]
    assert validate_workflow(wf, default_catalog().extended(tools=["browse"])) == []


def test_external_loops_are_accepted(data: Data) -> None:
    node(data, "builder")["loop"] = "external:claude-code"
    assert validate_workflow(Workflow.model_validate(data)) == []


def test_check_workflow_raises_one_error_listing_everything(data: Data) -> None:
    node(data, "builder")["tools"] = ["teleport"]
    data["frozen"].append("ghost")
    with pytest.raises(ConfigError) as info:
        check_workflow(Workflow.model_validate(data), source="flows/x.yaml")
    message = str(info.value)
    assert "workflow 'sample' (flows/x.yaml) has 2 problems:" in message
    assert "  - node 'builder': unknown tool 'teleport'" in message
    assert "  - frozen: 'ghost' is not a node" in message


def test_check_workflow_returns_none_when_valid(data: Data) -> None:
    assert check_workflow(Workflow.model_validate(data)) is None  # type: ignore[func-returns-value]
