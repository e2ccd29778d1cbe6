"""The exhaust of one run as a timeline: one lane per node with a bar per visit, ticks for
model calls, dots for tool calls, diamonds for gate decisions (and RELOOP arrows), the grade.
Drawn from events.jsonl, so it works for a run cut off before it had a record."""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from loopwright.records import (
    ErrorEvent,
    Event,
    GateDecision,
    GradeEvent,
    ModelCall,
    NodeEnd,
    NodeStart,
    ToolCallEvent,
)
from loopwright.report._html import esc, fmt_tokens, fmt_usd
from loopwright.report.charts._svg import AXIS, GRID, n, nice_ticks, svg_open

__all__ = ["STATUS_COLOURS", "Span", "spans_of", "timeline_svg"]

STATUS_COLOURS = {
    "ok": "#48bb78",
    "failed": "#ed8936",
    "error": "#e53e3e",
    "timeout": "#c53030",
    "max_turns": "#9f7aea",
    "skipped": "#cbd5e0",
    "unfinished": "#a0aec0",
}
_GATE_COLOURS = {"proceed": "#38a169", "reloop": "#dd6b20", "exhausted": "#c53030"}
_LANE_H, _LEFT, _TOP, _RIGHT = 30, 130, 26, 70

Scale = Callable[[float], float]
LaneY = Callable[[str | None], float]


@dataclass(frozen=True, slots=True)
class Span:
    """One visit of a node: from its node_start to its node_end (or the last event)."""

    node_id: str
    kind: str
    attempt: int
    start: float
    end: float
    status: str
    error: str | None


def spans_of(events: Sequence[Event]) -> list[Span]:
    """Every node visit, in start order; a visit without node_end is `unfinished`."""
    last = max((e.t for e in events), default=0.0)
    open_: dict[tuple[str, int], NodeStart] = {}
    spans = []
    for e in events:
        if isinstance(e, NodeStart):
            open_[(e.node_id, e.attempt)] = e
        elif isinstance(e, NodeEnd):
            start = open_.pop((e.node_id, e.attempt), None)
            begin = start.t if start is not None else max(e.t - e.duration_s, 0.0)
            kind = start.kind if start is not None else "agent"
            spans.append(Span(e.node_id, kind, e.attempt, begin, e.t, e.status, e.error))
    for (node_id, attempt), start in open_.items():
        spans.append(Span(node_id, start.kind, attempt, start.t, last, "unfinished", None))
    return sorted(spans, key=lambda s: (s.start, s.node_id))


def _lanes(events: Sequence[Event]) -> list[str]:
    lanes: dict[str, None] = {}
    for e in events:
        node = getattr(e, "node_id", None)
        if isinstance(node, str):
            lanes.setdefault(node)
    return list(lanes)


def timeline_svg(events: Sequence[Event], label: str, width: float = 920) -> str:
    """The timeline of one run's events. Deterministic; empty lanes when there is no node."""
    lanes = _lanes(events)
    row = {node: i for i, node in enumerate(lanes)}
    t_max = max((e.t for e in events), default=0.0) or 1e-3
    span_w = width - _LEFT - _RIGHT
    height = _TOP + _LANE_H * max(len(lanes), 1) + 26

    def x(t: float) -> float:
        return _LEFT + t / t_max * span_w

    def lane_y(node: str | None) -> float:
        return _TOP + _LANE_H * row.get(node or "", 0)

    parts = [svg_open(width, height, label), *_grid(lanes, t_max, x, height)]
    usage: dict[tuple[str, int], list[int]] = {}
    for e in events:
        if isinstance(e, ModelCall):
            u = usage.setdefault((e.node_id, e.attempt), [0, 0])
            u[0] += 1
            u[1] += e.input_tokens + e.output_tokens
    for s in spans_of(events):
        y = lane_y(s.node_id)
        tip = f"{s.node_id} attempt {s.attempt}: {s.status}, {s.end - s.start:.3f} s"
        tip += f"\n{s.error}" if s.error else ""
        dash = ' stroke="#4a5568" stroke-dasharray="3 2"' if s.status == "unfinished" else ""
        parts.append(
            f'<rect class="mark span" x="{n(x(s.start))}" y="{n(y + 5)}" '
            f'width="{n(max(x(s.end) - x(s.start), 1.5))}" height="20" rx="3" '
            f'fill="{STATUS_COLOURS.get(s.status, "#a0aec0")}" opacity="0.55"{dash}>'
            f"<title>{esc(tip)}</title></rect>"
        )
        calls, tokens = usage.get((s.node_id, s.attempt), [0, 0])
        text = f"#{s.attempt} " if s.attempt > 1 else ""
        if calls and x(s.end) - x(s.start) > 150:
            text += f"{calls} calls · {fmt_tokens(tokens)} tokens"
        if text:
            parts.append(
                f'<text x="{n(x(s.start) + 4)}" y="{n(y + 22)}" font-size="10">{esc(text)}</text>'
            )
    crowded = _crowded_gates(events, x)
    for e in events:
        if isinstance(e, GateDecision):
            parts.extend(_gate_mark(e, x, lane_y, label=id(e) not in crowded))
        else:
            parts.extend(_event_mark(e, x, lane_y))
    parts.append("</svg>")
    return "".join(parts)


def _grid(lanes: list[str], t_max: float, x: Scale, height: float) -> list[str]:
    out = []
    for i, node in enumerate(lanes):
        y = _TOP + _LANE_H * i
        out.append(
            f'<line x1="{_LEFT}" x2="{n(x(t_max))}" y1="{n(y + _LANE_H)}" '
            f'y2="{n(y + _LANE_H)}" stroke="{GRID}"/><text x="{_LEFT - 8}" y="{n(y + 19)}" '
            f'text-anchor="end">{esc(node[:20])}</text>'
        )
    for t, text in nice_ticks(0.0, t_max, 6, " s"):
        out.append(
            f'<line x1="{n(x(t))}" x2="{n(x(t))}" y1="{_TOP - 4}" y2="{n(height - 22)}" '
            f'stroke="{GRID}"/><text x="{n(x(t))}" y="{n(height - 8)}" text-anchor="middle" '
            f'fill="{AXIS}">{esc(text)}</text>'
        )
    return out


def _event_mark(e: Event, x: Scale, lane_y: LaneY) -> list[str]:
    if isinstance(e, ModelCall):
        y = lane_y(e.node_id)
        tip = (
            f"model call, turn {e.turn}: {e.input_tokens:,} in / {e.output_tokens:,} out / "
            f"{e.cached_tokens:,} cached tokens, {fmt_usd(e.cost_usd)}, {e.tool_calls} tool "
            f"call(s), {e.latency_s:.2f} s" + (f"\nerror: {e.error}" if e.error else "")
        )
        colour = "#c53030" if e.error else "#1a365d"
        return [
            f'<line class="mark call" x1="{n(x(e.t))}" x2="{n(x(e.t))}" y1="{n(y + 4)}" '
            f'y2="{n(y + 12)}" stroke="{colour}" stroke-width="1.5"><title>{esc(tip)}</title>'
            "</line>"
        ]
    if isinstance(e, ToolCallEvent):
        y = lane_y(e.node_id)
        tip = f"{e.tool}({e.arguments[:160]}) " + ("ok" if e.ok else f"FAILED: {e.error}")
        colour = "#2f855a" if e.ok else "#c53030"
        return [
            f'<circle class="mark tool" cx="{n(x(e.t))}" cy="{n(y + 27)}" r="2.4" '
            f'fill="{colour}"><title>{esc(tip)}</title></circle>'
        ]
    if isinstance(e, GradeEvent):
        px = n(x(e.t))
        text = "invalid grade" if e.invalid else f"grade {e.score:.2f}"
        return [
            f'<g class="mark grade"><title>{esc(text)}: f2p {e.f2p_passed}/{e.f2p_total}, '
            f'p2p {e.p2p_passed}/{e.p2p_total}</title><line x1="{px}" x2="{px}" y1="8" '
            f'y2="{n(lane_y(None) + 4)}" stroke="#2b6cb0" stroke-width="2"/><text x="{px}" '
            f'y="14" dx="3" fill="#2b6cb0" font-weight="600">{esc(text)}</text></g>'
        ]
    if isinstance(e, ErrorEvent):
        ex, ey = x(e.t), lane_y(e.node_id) + 15
        return [
            f'<path class="mark error" d="M{n(ex - 4)} {n(ey - 4)}l8 8m0 -8l-8 8" '
            f'stroke="#c53030" stroke-width="2"><title>{esc(e.where)}: '
            f"{esc(e.message[:300])}</title></path>"
        ]
    return []


def _crowded_gates(events: Sequence[Event], x: Scale, room: float = 95) -> set[int]:
    """Gate decisions whose label would run into the next decision of the same gate (by
    `id`): they are drawn without one (the tooltip keeps it)."""
    by_gate: dict[str, list[GateDecision]] = {}
    for e in events:
        if isinstance(e, GateDecision):
            by_gate.setdefault(e.node_id, []).append(e)
    crowded = set()
    for decisions in by_gate.values():
        for a, b in itertools.pairwise(decisions):
            if x(b.t) - x(a.t) < room:
                crowded.add(id(a))
    return crowded


def _gate_mark(e: GateDecision, x: Scale, lane_y: LaneY, *, label: bool = True) -> list[str]:
    px, y = x(e.t), lane_y(e.node_id) + 15
    colour = _GATE_COLOURS[e.decision]
    said = e.decision if e.decision == "proceed" else f"{e.decision} {e.loop_count}/{e.max_loops}"
    tip = f"{e.node_id}: {said}" + (f" → {e.target}" if e.target else "")
    tip += f"\n{_first_lines(e.reason)}" if e.reason else ""
    text = (
        f'<text x="{n(px + 9)}" y="{n(y - 4)}" font-size="10" fill="{colour}">{esc(said)}</text>'
        if label
        else ""
    )
    out = [
        f'<g class="mark gate"><title>{esc(tip)}</title><path d="M{n(px)} {n(y - 8)}l7 8l-7 8'
        f'l-7 -8z" fill="{colour}"/>{text}</g>'
    ]
    if e.decision == "reloop" and e.target is not None:
        ty = lane_y(e.target) + 15
        out.append(
            f'<path d="M{n(px)} {n(y - 8)}L{n(px)} {n(ty + 6)}" stroke="{colour}" '
            f'stroke-dasharray="3 3" fill="none"/><path d="M{n(px)} {n(ty)}l-4 7h8z" '
            f'fill="{colour}"/>'
        )
    return out


def _first_lines(text: str, lines: int = 8) -> str:
    kept = text.splitlines()[:lines]
    return re.sub(r"[ \t]+", " ", "\n".join(kept))[:600]
