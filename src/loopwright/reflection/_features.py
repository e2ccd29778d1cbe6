"""What a workflow's structure shows, in words reflection can contrast across candidates.

Features are read from the graph and the prompts only (never from node ids or names):

- `study`: an agent that writes notes but no files runs before an agent that writes files;
- `reloop_gate`: a gate that can send the run back (every gate can: RELOOP is its failure path);
- `review`: an agent that writes no files runs after an agent that writes files;
- `role:<role>`: an agent of that role (builder excluded: every candidate has one);
- `writers:2+`: more than one agent that writes files;
- `lesson:<text>`: every file-writing agent's prompt holds that lesson (a bullet under "Lessons
  from earlier attempts:"), so the contrasts measure each lesson the population tried.
"""

from __future__ import annotations

import networkx as nx

from loopwright.workflow import (
    AgentNode,
    GateNode,
    Workflow,
    prompt_lessons,
    to_networkx,
    topological_order,
)

__all__ = [
    "FEATURE_LABELS",
    "LESSON_PREFIX",
    "feature_label",
    "note_takers",
    "structure_line",
    "workflow_features",
    "writers",
]

LESSON_PREFIX = "lesson:"
WRITE_TOOLS = frozenset({"write_file", "edit_file", "run_command"})
NOTES_TOOL = "write_notes"

FEATURE_LABELS = {
    "study": "a study node (notes written before a file-writing agent)",
    "reloop_gate": "a RELOOP gate",
    "review": "a read-only agent after a file-writing agent",
    "writers:2+": "more than one file-writing agent",
}


def feature_label(feature: str) -> str:
    """A phrase for `feature` as the digest's contrasts print it."""
    if feature in FEATURE_LABELS:
        return FEATURE_LABELS[feature]
    if feature.startswith("role:"):
        return f"a {feature.removeprefix('role:')} agent"
    if feature.startswith(LESSON_PREFIX):
        text = feature.removeprefix(LESSON_PREFIX)
        short = text if len(text) <= 100 else text[:97] + "..."
        return f'the lesson "{short}" in every writer prompt'
    return feature


def writers(wf: Workflow) -> list[AgentNode]:
    """Agents that can change files (write_file, edit_file or run_command), in node order."""
    return [n for n in wf.nodes if isinstance(n, AgentNode) and set(n.tools) & WRITE_TOOLS]


def note_takers(wf: Workflow) -> list[AgentNode]:
    """Agents that write notes but no files."""
    return [
        n
        for n in wf.nodes
        if isinstance(n, AgentNode) and NOTES_TOOL in n.tools and not set(n.tools) & WRITE_TOOLS
    ]


def workflow_features(wf: Workflow) -> tuple[str, ...]:
    """The features of `wf` (see the module docstring), sorted. Deterministic."""
    g = to_networkx(wf)
    writer_ids = {w.id for w in writers(wf)}
    features: set[str] = set()
    for agent in note_takers(wf):
        if nx.descendants(g, agent.id) & writer_ids:
            features.add("study")
    for node in wf.nodes:
        if isinstance(node, GateNode):
            features.add("reloop_gate")
        if isinstance(node, AgentNode):
            if node.role != "builder":
                features.add(f"role:{node.role}")
            if node.id not in writer_ids and nx.ancestors(g, node.id) & writer_ids:
                features.add("review")
    if len(writer_ids) > 1:
        features.add("writers:2+")
    lessons = [set(prompt_lessons(w.prompt)) for w in writers(wf)]
    if lessons:
        features.update(LESSON_PREFIX + text for text in set.intersection(*lessons))
    return tuple(sorted(features))


def structure_line(wf: Workflow) -> str:
    """The nodes in topological order, e.g. `study[researcher] -> builder[builder] ->
    gate_verify[gate visible_tests_pass, reloop builder x3]`; frozen nodes marked `*`."""
    parts = []
    for node_id in topological_order(wf):
        node = wf.node(node_id)
        star = "*" if node_id in wf.frozen else ""
        if isinstance(node, AgentNode):
            parts.append(f"{node_id}{star}[{node.role}]")
        elif isinstance(node, GateNode):
            check = node.check or "judge"
            parts.append(
                f"{node_id}{star}[gate {check}, reloop {node.reloop_to} x{node.max_loops}]"
            )
        else:
            parts.append(f"{node_id}{star}[fn {node.fn}]")
    return " -> ".join(parts)
