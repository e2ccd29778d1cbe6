"""Drawing a workflow: Mermaid flowcharts, Graphviz DOT, and SVG through Graphviz's `dot`.

Agents are rectangles (id, role, model), function nodes rounded boxes, gates diamonds; forward
edges are solid, RELOOP edges dashed and labelled `RELOOP ≤N`; frozen nodes are marked.
All output is deterministic. Labels are escaped, so any role or id text is safe.
"""

from __future__ import annotations

import shutil
import subprocess

from loopwright.errors import LoopwrightError, MissingDependencyError
from loopwright.workflow._graph import gates
from loopwright.workflow._hash import workflow_hash
from loopwright.workflow._model import AgentNode, Edge, FnNode, GateNode, Node, Workflow

__all__ = ["node_label_lines", "render_svg", "to_dot", "to_mermaid"]

_MERMAID_ENTITIES = {
    "#": "#35;",
    "&": "#amp;",
    '"': "#quot;",
    "<": "#lt;",
    ">": "#gt;",
    "`": "#96;",
}
_MERMAID_SHAPES = {"agent": ('["', '"]'), "fn": ('[["', '"]]'), "gate": ('{"', '"}')}
_DOT_SHAPES = {"agent": "shape=box", "fn": 'shape=box, style="rounded"', "gate": "shape=diamond"}


def node_label_lines(node: Node, *, frozen: bool = False) -> list[str]:
    """The text lines a drawing shows for `node` (unescaped): id, then what it is."""
    if isinstance(node, AgentNode):
        detail = f"{node.role} · {node.model}"
    elif isinstance(node, FnNode):
        detail = f"fn: {node.fn}"
    else:
        detail = f"check: {node.check}" if node.check is not None else "judge (LLM)"
    return [node.id, detail, *(["(frozen)"] if frozen else [])]


def to_mermaid(wf: Workflow, *, title: str | None = None) -> str:
    """A Mermaid `flowchart TD` of `wf`. Node ids are `n0`, `n1`... in declaration order. Its
    first line, a comment, names the graph by `title` (default: the workflow's name; an
    evolved workflow keeps its seed's name, so the caller names it, e.g. `winner ind-7`).

    Edges and RELOOPs naming an unknown node (an invalid workflow) are left out.
    """
    ids: dict[str, str] = {}
    for index, node in enumerate(wf.nodes):
        ids.setdefault(node.id, f"n{index}")
    lines = [f"%% {title or wf.name} (hash {workflow_hash(wf)[:12]})", "flowchart TD"]
    for node in _first_of_each(wf):
        opening, closing = _MERMAID_SHAPES[node.kind]
        label = node_label_lines(node, frozen=node.id in wf.frozen)
        text = "<br/>".join(_mermaid_escape(line) for line in label)
        lines.append(f"    {ids[node.id]}{opening}{text}{closing}")
    for edge in _drawable_edges(wf):
        lines.append(f"    {ids[edge.source]} --> {ids[edge.target]}")
    for gate in _drawable_gates(wf):
        reloop = f"RELOOP ≤{gate.max_loops}"
        lines.append(f'    {ids[gate.id]} -.->|"{reloop}"| {ids[gate.reloop_to]}')
    frozen = [ids[n] for n in dict.fromkeys(wf.frozen) if n in ids]
    if frozen:
        lines.append("    classDef frozen stroke-width:3px,fill:#eeeeee")
        lines.append(f"    class {','.join(frozen)} frozen")
    return "\n".join(lines) + "\n"


def to_dot(wf: Workflow) -> str:
    """A Graphviz DOT `digraph` of `wf`, keyed by the real node ids (quoted and escaped).

    Edges and RELOOPs naming an unknown node (an invalid workflow) are left out.
    """
    lines = [
        f"digraph {_dot_quote(wf.name)} {{",
        f'  graph [rankdir=TB, fontname="Helvetica", labelloc=t, label={_dot_quote(wf.name)}];',
        '  node [fontname="Helvetica"];',
        '  edge [fontname="Helvetica"];',
    ]
    for node in _first_of_each(wf):
        frozen = node.id in wf.frozen
        label = "\\n".join(_dot_escape(line) for line in node_label_lines(node, frozen=frozen))
        extra = ", peripheries=2" if frozen else ""
        lines.append(f'  {_dot_quote(node.id)} [{_DOT_SHAPES[node.kind]}{extra}, label="{label}"];')
    for edge in _drawable_edges(wf):
        lines.append(f"  {_dot_quote(edge.source)} -> {_dot_quote(edge.target)};")
    for gate in _drawable_gates(wf):
        lines.append(
            f"  {_dot_quote(gate.id)} -> {_dot_quote(gate.reloop_to)} "
            f'[style=dashed, constraint=false, label="RELOOP ≤{gate.max_loops}"];'
        )
    lines.append("}")
    return "\n".join(lines) + "\n"


def render_svg(wf: Workflow, *, timeout_s: float = 60.0) -> str:
    """An SVG drawing of `wf`, made by piping `to_dot(wf)` through Graphviz's `dot -Tsvg`.

    Raises MissingDependencyError when `dot` is not on PATH, and LoopwrightError when `dot`
    fails or takes longer than `timeout_s` (either would be a bug in the DOT output or a
    broken Graphviz install).
    """
    dot = shutil.which("dot")
    if dot is None:
        raise MissingDependencyError(
            "rendering SVG needs Graphviz's `dot` program, which is not on PATH",
            fix="install Graphviz (apt-get install graphviz; brew install graphviz on macOS), "
            "or render --format dot or --format mermaid instead",
        )
    try:
        done = subprocess.run(
            [dot, "-Tsvg"],
            input=to_dot(wf),
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=timeout_s,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise LoopwrightError(f"graphviz `dot` took longer than {timeout_s}s") from None
    if done.returncode != 0:
        raise LoopwrightError(f"graphviz `dot` failed (exit {done.returncode}): {done.stderr}")
    return done.stdout


def _first_of_each(wf: Workflow) -> list[Node]:
    # A valid workflow has unique ids; an invalid one still draws, once per id.
    seen: dict[str, Node] = {}
    for node in wf.nodes:
        seen.setdefault(node.id, node)
    return list(seen.values())


def _drawable_edges(wf: Workflow) -> list[Edge]:
    ids = set(wf.node_ids)
    return [e for e in wf.edges if e.source in ids and e.target in ids]


def _drawable_gates(wf: Workflow) -> list[GateNode]:
    return [g for g in gates(wf) if g.reloop_to in wf.node_ids]


def _mermaid_escape(text: str) -> str:
    escaped = "".join(_MERMAID_ENTITIES.get(c, c) for c in text)
    return "<br/>".join(escaped.splitlines())


def _dot_escape(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return "\\n".join(escaped.splitlines())


def _dot_quote(text: str) -> str:
    return f'"{_dot_escape(text)}"'
