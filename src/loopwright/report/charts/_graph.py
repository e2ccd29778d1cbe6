"""Workflow graphs in a report: SVG through Graphviz `dot` when it is installed, otherwise an SVG
laid out here (layers along the forward edges, RELOOPs as dashed arcs); and what changed
between two workflows, node by node."""

from __future__ import annotations

import difflib
import re
import shutil
import subprocess
from dataclasses import dataclass
from typing import Literal

from loopwright.errors import ConfigError
from loopwright.report._html import esc
from loopwright.report.charts._svg import n
from loopwright.workflow import GateNode, Node, Workflow, node_label_lines, to_dot
from loopwright.workflow import predecessors as wf_predecessors
from loopwright.workflow import topological_order as wf_topological_order

__all__ = [
    "ADDED",
    "CHANGED",
    "REMOVED",
    "Change",
    "GraphDrawing",
    "draw_workflow",
    "workflow_changes",
]

ADDED = "#d3f2d8"
CHANGED = "#ffeeb8"
REMOVED = "#fbd5d5"

_DOT_TIMEOUT_S = 30.0


@dataclass(frozen=True, slots=True)
class GraphDrawing:
    """An inline SVG of a workflow and the engine that drew it (`graphviz` or `builtin`)."""

    svg: str
    engine: Literal["graphviz", "builtin"]


def draw_workflow(
    wf: Workflow, uid: str, highlight: dict[str, str] | None = None, *, use_dot: bool = True
) -> GraphDrawing:
    """Draw `wf`, filling the nodes in `highlight` (node id -> colour).

    With `use_dot` and `dot` on PATH the drawing is Graphviz's; if `dot` is missing or fails,
    the built-in layout is used instead (a report never fails for want of Graphviz). `uid`
    keeps ids unique when several drawings share a page. Deterministic.
    """
    fills = highlight or {}
    if use_dot and shutil.which("dot") is not None:
        svg = _dot_svg(wf, fills)
        if svg is not None:
            return GraphDrawing(svg, "graphviz")
    return GraphDrawing(_builtin_svg(wf, uid, fills), "builtin")


def _dot_svg(wf: Workflow, fills: dict[str, str]) -> str | None:
    dot_text = to_dot(wf)
    extra = []
    for node in wf.nodes:
        if node.id in fills:
            style = "rounded,filled" if node.kind == "fn" else "filled"
            quoted = '"' + node.id.replace("\\", "\\\\").replace('"', '\\"') + '"'
            extra.append(f'  {quoted} [style="{style}", fillcolor="{fills[node.id]}"];')
    dot_text = dot_text.rstrip().removesuffix("}") + "\n".join(extra) + "\n}\n"
    try:
        done = subprocess.run(
            ["dot", "-Tsvg"],
            input=dot_text,
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=_DOT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None  # the built-in drawing stands in; nothing is lost but looks
    if done.returncode != 0:
        return None
    svg = done.stdout[done.stdout.find("<svg") :]
    svg = re.sub(r"<!--.*?-->\s*", "", svg, flags=re.DOTALL)
    return svg.replace("<svg ", '<svg class="graph-svg" ', 1)


_ROW_GAP = 46
_LINE_H = 15


@dataclass(frozen=True, slots=True)
class _Box:
    node: Node
    lines: tuple[str, ...]
    x: float  # centre
    y: float  # top
    w: float
    h: float


def _layers(wf: Workflow) -> list[list[str]]:
    try:
        order = wf_topological_order(wf)
    except ConfigError:
        return [[i] for i in dict.fromkeys(wf.node_ids)]  # forward edges loop: one per row
    depth: dict[str, int] = {}
    for node_id in order:
        preds = [p for p in wf_predecessors(wf, node_id) if p in depth]
        depth[node_id] = 1 + max((depth[p] for p in preds), default=-1)
    rows: list[list[str]] = [[] for _ in range(max(depth.values(), default=-1) + 1)]
    for node_id in order:
        rows[depth[node_id]].append(node_id)
    return rows


def _boxes(wf: Workflow) -> tuple[dict[str, _Box], float]:
    nodes = {node.id: node for node in reversed(wf.nodes)}  # first declaration wins
    rows = _layers(wf)
    sized: list[list[tuple[Node, tuple[str, ...], float, float]]] = []
    for row in rows:
        cells: list[tuple[Node, tuple[str, ...], float, float]] = []
        for node_id in row:
            node = nodes[node_id]
            lines = tuple(node_label_lines(node, frozen=node_id in wf.frozen))
            w = max(len(line) for line in lines) * 6.6 + 24
            w = w * 1.5 if isinstance(node, GateNode) else w
            cells.append(
                (node, lines, w, _LINE_H * len(lines) + 14 + (12 if node.kind == "gate" else 0))
            )
        sized.append(cells)
    width = max((sum(c[2] for c in row) + 24 * (len(row) - 1) for row in sized), default=100)
    boxes: dict[str, _Box] = {}
    y = 34.0
    for cells in sized:
        x = 20 + (width - sum(c[2] for c in cells) - 24 * (len(cells) - 1)) / 2
        for node, lines, w, h in cells:
            boxes[node.id] = _Box(node, lines, x + w / 2, y, w, h)
            x += w + 24
        y += max(c[3] for c in cells) + _ROW_GAP
    return boxes, width + 40


def _builtin_svg(wf: Workflow, uid: str, fills: dict[str, str]) -> str:
    boxes, width = _boxes(wf)
    height = max((b.y + b.h for b in boxes.values()), default=40) + 20
    width += 110 if any(isinstance(b.node, GateNode) for b in boxes.values()) else 0
    arrow = f"arrow-{re.sub(r'[^A-Za-z0-9_-]', '_', uid)}"
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="graph-svg" role="img" '
        f'aria-label="workflow {esc(wf.name)}" width="{n(width)}" height="{n(height)}" '
        f'viewBox="0 0 {n(width)} {n(height)}" font-family="system-ui,sans-serif" font-size="12">',
        f'<defs><marker id="{arrow}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
        'markerHeight="7" orient="auto-start-reverse"><path d="M0 0L10 5L0 10z" fill="#444"/>'
        "</marker></defs>",
        f'<text x="{n(width / 2)}" y="18" text-anchor="middle" font-weight="600">{esc(wf.name)}</text>',
    ]
    for edge in wf.edges:
        a, b = boxes.get(edge.source), boxes.get(edge.target)
        if a is not None and b is not None:
            parts.append(
                f'<path d="M{n(a.x)} {n(a.y + a.h)}L{n(b.x)} {n(b.y - 2)}" stroke="#444" '
                f'fill="none" marker-end="url(#{arrow})"/>'
            )
    for box in boxes.values():
        if isinstance(box.node, GateNode) and box.node.reloop_to in boxes:
            parts.append(_reloop_arc(box, boxes[box.node.reloop_to], width, arrow))
    parts.extend(_node_shape(box, fills.get(box.node.id)) for box in boxes.values())
    parts.append("</svg>")
    return "".join(parts)


def _reloop_arc(gate: _Box, target: _Box, width: float, arrow: str) -> str:
    assert isinstance(gate.node, GateNode)  # only gates RELOOP; callers check
    x0, y0 = gate.x + gate.w / 2, gate.y + gate.h / 2
    x1, y1 = target.x + target.w / 2, target.y + target.h / 2
    bend = max(x0, x1) + 60
    label = f"RELOOP ≤{gate.node.max_loops}"
    return (
        f'<path d="M{n(x0)} {n(y0)}C{n(bend)} {n(y0)} {n(bend)} {n(y1)} {n(x1 + 2)} {n(y1)}" '
        f'stroke="#7a5af8" stroke-dasharray="5 4" fill="none" marker-end="url(#{arrow})"/>'
        f'<text x="{n(min(bend - 8, width - 4))}" y="{n((y0 + y1) / 2)}" fill="#5b3fd0" '
        f'text-anchor="end">{esc(label)}</text>'
    )


def _node_shape(box: _Box, fill: str | None) -> str:
    colour = fill or "#ffffff"
    left, top = box.x - box.w / 2, box.y
    border = 'stroke-width="3"' if box.lines[-1] == "(frozen)" else 'stroke-width="1.3"'
    if isinstance(box.node, GateNode):
        cy = top + box.h / 2
        shape = (
            f'<path d="M{n(box.x)} {n(top)}L{n(left + box.w)} {n(cy)}L{n(box.x)} '
            f'{n(top + box.h)}L{n(left)} {n(cy)}z" fill="{colour}" stroke="#333" {border}/>'
        )
    else:
        rx = 10 if box.node.kind == "fn" else 2
        shape = (
            f'<rect x="{n(left)}" y="{n(top)}" width="{n(box.w)}" height="{n(box.h)}" '
            f'rx="{rx}" fill="{colour}" stroke="#333" {border}/>'
        )
    first = top + (box.h - _LINE_H * len(box.lines)) / 2 + 11
    bold = ' font-weight="600"'
    text = "".join(
        f'<text x="{n(box.x)}" y="{n(first + i * _LINE_H)}" text-anchor="middle"'
        f"{bold if i == 0 else ''}>{esc(line)}</text>"
        for i, line in enumerate(box.lines)
    )
    return f'<g class="node"><title>{esc(box.node.id)}</title>{shape}{text}</g>'


@dataclass(frozen=True, slots=True)
class Change:
    """One difference between two workflows: a node or edge added, removed or changed."""

    kind: Literal["added", "removed", "changed"]
    subject: str
    details: tuple[str, ...] = ()
    prompt_diff: str = ""


def workflow_changes(before: Workflow, after: Workflow) -> list[Change]:
    """What turns `before` into `after`: nodes by id (added, removed, each changed field;
    a changed prompt with its unified diff), forward edges, and the frozen set. Deterministic,
    in declaration order of `after` then `before`."""
    old = {node.id: node for node in before.nodes}
    new = {node.id: node for node in after.nodes}
    out = [Change("removed", f"node {i}") for i in old if i not in new]
    for node_id, node in new.items():
        if node_id not in old:
            out.append(Change("added", f"node {node_id}", (node_label_lines(node)[1],)))
        else:
            change = _node_change(old[node_id], node)
            if change is not None:
                out.append(change)
    old_edges = [(e.source, e.target) for e in before.edges]
    new_edges = [(e.source, e.target) for e in after.edges]
    out += [Change("removed", f"edge {a} → {b}") for a, b in old_edges if (a, b) not in new_edges]
    out += [Change("added", f"edge {a} → {b}") for a, b in new_edges if (a, b) not in old_edges]
    if set(before.frozen) != set(after.frozen):
        out.append(
            Change(
                "changed", "frozen nodes", (f"{sorted(before.frozen)} → {sorted(after.frozen)}",)
            )
        )
    return out


def _node_change(a: Node, b: Node) -> Change | None:
    da, db = a.model_dump(mode="json"), b.model_dump(mode="json")
    details: list[str] = []
    prompt_diff = ""
    for key in [k for k in db if k != "id"] + [k for k in da if k not in db]:
        va, vb = da.get(key), db.get(key)
        if va == vb:
            continue
        if key in ("prompt", "judge") and isinstance(va, str) and isinstance(vb, str):
            diff = list(
                difflib.unified_diff(
                    va.splitlines(), vb.splitlines(), "before", "after", n=1, lineterm=""
                )
            )
            changed = sum(1 for line in diff[2:] if line[:1] in "+-")
            details.append(
                f"{key} rewritten: {len(va):,} → {len(vb):,} chars, {changed} lines changed"
            )
            prompt_diff += "\n".join(diff) + "\n"
        elif key == "tools" and isinstance(va, list) and isinstance(vb, list):
            plus = [f"+{t}" for t in vb if t not in va]
            minus = [f"-{t}" for t in va if t not in vb]
            details.append("tools " + " ".join(plus + minus or ["reordered"]))
        else:
            details.append(f"{key}: {va} → {vb}")
    if not details:
        return None
    return Change("changed", f"node {b.id}", tuple(details), prompt_diff)
