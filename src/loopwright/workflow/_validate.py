"""Semantic validation: every problem with a workflow, each naming the node or edge at fault.

`validate_workflow` collects all problems (it never stops at the first); `check_workflow` raises
them as one ConfigError. The rules are listed in docs/workflow.md.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from typing import Literal

import networkx as nx

from loopwright.errors import ConfigError
from loopwright.workflow._catalog import Catalog, default_catalog
from loopwright.workflow._graph import DiGraph, entry_nodes, find_cycles, gates, to_networkx
from loopwright.workflow._model import PLACEHOLDERS, AgentNode, FnNode, GateNode, Node, Workflow
from loopwright.workflow._template import parse_template

__all__ = ["IssueCode", "WorkflowIssue", "check_workflow", "validate_workflow"]

IssueCode = Literal[
    "no_nodes",
    "duplicate_node",
    "unknown_tool",
    "duplicate_tool",
    "unknown_loop",
    "unknown_function",
    "unknown_check",
    "gate_check_judge",
    "empty_prompt",
    "bad_template",
    "unknown_placeholder",
    "missing_instruction_file",
    "dangling_edge",
    "duplicate_edge",
    "cycle",
    "entry",
    "unreachable",
    "reloop_unknown",
    "reloop_not_upstream",
    "unknown_frozen",
    "duplicate_frozen",
]

WORKFLOW_DOC = "docs/workflow.md"


@dataclass(frozen=True, slots=True)
class WorkflowIssue:
    """One problem: a stable `code`, `where` it is ("node 'builder'", "edge a -> b", "frozen",
    "workflow"), a `message` saying what is wrong and what would be valid, and the `node_id`
    at fault when the problem belongs to one node."""

    code: IssueCode
    where: str
    message: str
    node_id: str | None = None

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"

    def to_dict(self) -> dict[str, str | None]:
        """The issue as a JSON-ready mapping."""
        return asdict(self)


def validate_workflow(wf: Workflow, catalog: Catalog | None = None) -> list[WorkflowIssue]:
    """Every problem with `wf`, in a stable order; empty when it is valid.

    Names are checked against `catalog` (default: `default_catalog()`). Pure and deterministic.
    """
    cat = catalog if catalog is not None else default_catalog()
    return [
        *_structure_issues(wf),
        *(issue for node in wf.nodes for issue in _node_issues(node, cat)),
        *_edge_issues(wf),
        *_cycle_issues(wf),
        *_entry_issues(wf),
        *_reloop_issues(wf),
        *_frozen_issues(wf),
    ]


def check_workflow(wf: Workflow, catalog: Catalog | None = None, *, source: str = "") -> None:
    """Raise one ConfigError listing every problem `validate_workflow` finds; return if none.

    `source` (a file name, say) is named in the message when given.
    """
    issues = validate_workflow(wf, catalog)
    if issues:
        origin = f" ({source})" if source else ""
        raise ConfigError(
            f"workflow {wf.name!r}{origin} has {_count(issues, 'problem')}:\n"
            + "\n".join(f"  - {issue}" for issue in issues),
            fix=f"correct the workflow; the rules are in {WORKFLOW_DOC}",
        )


def _structure_issues(wf: Workflow) -> Iterator[WorkflowIssue]:
    if not wf.nodes:
        yield WorkflowIssue(
            "no_nodes", "workflow", "has no nodes; add at least one agent node (see builder-only)"
        )
    where_is: dict[str, list[str]] = {}
    for index, node in enumerate(wf.nodes):
        where_is.setdefault(node.id, []).append(f"nodes[{index}]")
    for node_id, places in where_is.items():
        if len(places) > 1:
            yield _at(
                node_id,
                "duplicate_node",
                f"id {node_id!r} is used by {len(places)} nodes ({', '.join(places)}); "
                "give each node a unique id",
            )


def _node_issues(node: Node, cat: Catalog) -> Iterator[WorkflowIssue]:
    if isinstance(node, AgentNode):
        yield from _agent_issues(node, cat)
    elif isinstance(node, FnNode):
        if node.fn not in cat.functions:
            yield _at(
                node.id,
                "unknown_function",
                f"unknown function {node.fn!r}; registered functions: {_names(cat.functions)}",
            )
    else:
        yield from _gate_issues(node, cat)


def _agent_issues(node: AgentNode, cat: Catalog) -> Iterator[WorkflowIssue]:
    for tool in dict.fromkeys(node.tools):
        if tool not in cat.tools:
            yield _at(
                node.id, "unknown_tool", f"unknown tool {tool!r}; known tools: {_names(cat.tools)}"
            )
    for tool, count in Counter(node.tools).items():
        if count > 1:
            yield _at(
                node.id, "duplicate_tool", f"tool {tool!r} is listed {count} times; list it once"
            )
    if not cat.knows_loop(node.loop):
        yield _at(
            node.id,
            "unknown_loop",
            f"unknown loop {node.loop!r}; use one of {_names(cat.loops)}"
            + ("" if cat.closed_external else ", or external:NAME for an external agent CLI"),
        )
    yield from _prompt_issues(node.id, "prompt", node.prompt)


def _gate_issues(node: GateNode, cat: Catalog) -> Iterator[WorkflowIssue]:
    if (node.check is None) == (node.judge is None):
        got = "both check and judge" if node.check is not None else "neither check nor judge"
        yield _at(
            node.id,
            "gate_check_judge",
            f"has {got}; give exactly one: check (a registered check: "
            f"{_names(cat.checks)}) or judge (an LLM judge prompt)",
        )
    if node.check is not None and node.check not in cat.checks:
        yield _at(
            node.id,
            "unknown_check",
            f"unknown check {node.check!r}; registered checks: {_names(cat.checks)}",
        )
    if node.judge is not None:
        yield from _prompt_issues(node.id, "judge prompt", node.judge)


def _prompt_issues(node_id: str, what: str, template: str) -> Iterator[WorkflowIssue]:
    if not template.strip():
        yield _at(
            node_id,
            "empty_prompt",
            f"{what} is empty; write one that tells the agent to read {{instruction_file}}",
        )
        return
    try:
        fields = parse_template(template)
    except ConfigError as exc:
        yield _at(
            node_id, "bad_template", f"{what} is {exc.what}; write literal braces as {{{{ }}}}"
        )
        return
    for name in dict.fromkeys(f"{{{f.name}}}" for f in fields if not f.known):
        yield _at(
            node_id,
            "unknown_placeholder",
            f"{what} uses unknown placeholder {name}; known placeholders: {_placeholders()} "
            "(written plainly, without !conversion or :format); write literal braces as {{ }}",
        )
    if not any(f.known and f.name == "instruction_file" for f in fields):
        yield _at(
            node_id,
            "missing_instruction_file",
            f"{what} never mentions {{instruction_file}}, so the agent is not told where the "
            "task's instruction is; add a line such as 'Read the task instruction in "
            "{instruction_file} first.'",
        )


def _edge_issues(wf: Workflow) -> Iterator[WorkflowIssue]:
    ids = set(wf.node_ids)
    for edge in dict.fromkeys(wf.edges):
        for end in ("source", "target"):
            node_id = getattr(edge, end)
            if node_id not in ids:
                yield WorkflowIssue(
                    "dangling_edge",
                    f"edge {edge}",
                    f"{end} {node_id!r} is not a node; nodes: {_names(wf.node_ids, sort=False)}",
                )
    for edge, count in Counter(wf.edges).items():
        if count > 1:
            yield WorkflowIssue(
                "duplicate_edge", f"edge {edge}", f"appears {count} times; list it once"
            )


def _cycle_issues(wf: Workflow) -> Iterator[WorkflowIssue]:
    for cycle in find_cycles(wf):
        path = " -> ".join([*cycle, cycle[0]])
        yield WorkflowIssue(
            "cycle",
            f"edges {path}",
            f"form a cycle through {_names(cycle, sort=False)}; edges must go forward, and a "
            "back-edge is only allowed as a gate's reloop_to",
        )


def _entry_issues(wf: Workflow) -> Iterator[WorkflowIssue]:
    if not wf.nodes:
        return
    entries = entry_nodes(wf)
    if len(entries) != 1:
        got = f"{len(entries)}: {', '.join(entries)}" if entries else "none"
        yield WorkflowIssue(
            "entry",
            "workflow",
            f"needs exactly one entry node (a node with no incoming edge), has {got}; add "
            "edges so that every node but the first has an incoming edge",
        )
        return
    reachable = nx.descendants(to_networkx(wf), entries[0]) | {entries[0]}
    for node_id in dict.fromkeys(wf.node_ids):
        if node_id not in reachable:
            yield _at(
                node_id,
                "unreachable",
                f"is not reachable from the entry node {entries[0]!r}; add an edge into it "
                "from a node that runs before it",
            )


def _reloop_issues(wf: Workflow) -> Iterator[WorkflowIssue]:
    g = to_networkx(wf)
    for gate in gates(wf):
        upstream = nx.ancestors(g, gate.id)
        problem = _reloop_problem(wf, g, gate, upstream)
        if problem is not None:
            code, text = problem
            valid = _names([n for n in wf.node_ids if n in upstream], sort=False, none="none")
            yield _at(
                gate.id,
                code,
                f"{text}; a gate may only RELOOP to a node upstream of it. Valid targets: {valid}",
            )


def _reloop_problem(
    wf: Workflow, g: DiGraph, gate: GateNode, upstream: set[str]
) -> tuple[IssueCode, str] | None:
    target = gate.reloop_to
    if target not in wf.node_ids:
        return "reloop_unknown", f"reloop_to {target!r} is not a node"
    if target == gate.id:
        return "reloop_not_upstream", "a gate cannot RELOOP to itself"
    if target in nx.descendants(g, gate.id):
        return "reloop_not_upstream", f"reloop_to {target!r} comes after the gate"
    if target not in upstream:
        return (
            "reloop_not_upstream",
            f"reloop_to {target!r} is not upstream of the gate (no edges lead from it to the gate)",
        )
    return None


def _frozen_issues(wf: Workflow) -> Iterator[WorkflowIssue]:
    ids = set(wf.node_ids)
    for node_id, count in Counter(wf.frozen).items():
        if node_id not in ids:
            yield WorkflowIssue(
                "unknown_frozen",
                "frozen",
                f"{node_id!r} is not a node; nodes: {_names(wf.node_ids, sort=False)}",
            )
        if count > 1:
            yield WorkflowIssue(
                "duplicate_frozen", "frozen", f"{node_id!r} is listed {count} times; list it once"
            )


def _at(node_id: str, code: IssueCode, message: str) -> WorkflowIssue:
    return WorkflowIssue(code, f"node {node_id!r}", message, node_id)


def _names(names: Iterable[str], *, sort: bool = True, none: str = "(none)") -> str:
    unique = list(dict.fromkeys(names))
    return ", ".join(sorted(unique) if sort else unique) or none


def _placeholders() -> str:
    return ", ".join(f"{{{name}}}" for name in PLACEHOLDERS)


def _count(items: list[WorkflowIssue], noun: str) -> str:
    return f"{len(items)} {noun}{'s' if len(items) != 1 else ''}"
