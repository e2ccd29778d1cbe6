"""Charts of the research page: the trajectory (workspace score per iteration, every measured
spec as a lollipop from its paired baseline, adoptions ringed), each spec's paired delta, and
the coverage of the intervention axes. Inline SVG, deterministic, marks with tooltips."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from loopwright.report._html import esc, fmt
from loopwright.report.charts._svg import (
    AXIS,
    GRID,
    Bar,
    Interval,
    Segment,
    hbar_chart,
    interval_chart,
    n,
    nice_ticks,
    svg_open,
)
from loopwright.research import IterRecord

__all__ = [
    "NOT_RUN",
    "VERDICT_COLORS",
    "coverage_chart",
    "delta_chart",
    "seed_score",
    "spec_tip",
    "trajectory_chart",
    "verdict_color",
]

VERDICT_COLORS: dict[str, str] = {
    "adopted": "#1e7b34",
    "confirmed": "#48bb78",
    "promising": "#2563eb",
    "inconclusive": "#90cdf4",
    "no_effect": "#718096",
    "refuted": "#c53030",
    "not_confirmed": "#dd6b20",
    "implementer_skip": "#805ad5",
    "critic_block": "#b7791f",
    "undistilled": "#a0aec0",
}
NOT_RUN = ("implementer_skip", "critic_block")
WORKSPACE = "#111827"
ADOPTED_RING = "#1e7b34"

# Coverage groups: what the experiments on an axis came to.
_GROUPS: tuple[tuple[str, str, frozenset[str]], ...] = (
    ("adopted/confirmed", "#2f855a", frozenset({"adopted", "confirmed"})),
    ("gain (unconfirmed)", "#3182ce", frozenset({"promising", "inconclusive"})),
    ("refuted/no effect", "#c53030", frozenset({"refuted", "no_effect", "not_confirmed"})),
    ("not run", "#805ad5", frozenset(NOT_RUN)),
    ("undistilled", "#a0aec0", frozenset({"undistilled"})),
)


def verdict_color(verdict: str) -> str:
    """The colour of a DISTILL verdict (grey for one this page does not know)."""
    return VERDICT_COLORS.get(verdict, "#a0aec0")


def spec_tip(r: IterRecord, index: int) -> str:
    """A spec's tooltip: where, what, its measurement and verdict."""
    s = r.specs[index]
    e = s.experiment
    head = f"iter {r.iter} {s.spec.spec_id} ({s.spec.intervention_axis}, {s.spec.scale}): "
    head += s.spec.title
    if e.score is None:
        return f"{head}\n{e.outcome_class}: {e.note}\nverdict {s.distill.verdict}"
    return (
        f"{head}\n{fmt(e.score, '.3f')} vs workspace {fmt(e.baseline, '.3f')} "
        f"({fmt(e.delta, '+.3f')}) on {e.pairs} pairs\nverdict {s.distill.verdict}"
    )


@dataclass(frozen=True, slots=True)
class _Plot:
    width: float
    height: float
    left: float
    right: float
    top: float
    bottom: float
    x_max: float
    y_min: float

    def x(self, v: float) -> float:
        span = self.width - self.left - self.right
        return self.left + (v + 0.6) / (self.x_max + 1.2) * span

    def y(self, v: float) -> float:
        share = (v - self.y_min) / (1.0 - self.y_min)
        return self.height - self.bottom - share * (self.height - self.top - self.bottom)


def _frame(p: _Plot, ticks: Sequence[tuple[float, str]]) -> list[str]:
    out = []
    for v, text in nice_ticks(p.y_min, 1.0):
        y = n(p.y(v))
        out.append(
            f'<line x1="{n(p.left)}" x2="{n(p.width - p.right)}" y1="{y}" y2="{y}" '
            f'stroke="{GRID}"/><text x="{n(p.left - 6)}" y="{y}" dy="4" text-anchor="end" '
            f'fill="{AXIS}">{esc(text)}</text>'
        )
    base = n(p.height - p.bottom)
    out.append(
        f'<line x1="{n(p.left)}" x2="{n(p.width - p.right)}" y1="{base}" y2="{base}" '
        f'stroke="{AXIS}"/>'
    )
    out += [
        f'<text x="{n(p.x(v))}" y="{n(p.height - p.bottom + 15)}" text-anchor="middle" '
        f'fill="{AXIS}">{esc(label)}</text>'
        for v, label in ticks
    ]
    return out


def seed_score(records: Sequence[IterRecord]) -> float | None:
    """The seed workspace's score as iteration 1 measured it: the score before the iteration
    when it was known, else the workspace's score on the pairs its specs were compared on."""
    if not records:
        return None
    first = records[0]
    baselines = [s.experiment.baseline for s in first.specs if s.experiment.baseline is not None]
    if first.summary.score_before is not None:
        return first.summary.score_before
    if not first.summary.adopted and first.workspace_next.score() is not None:
        return first.workspace_next.score()
    return baselines[0] if baselines else None


def _workspace_line(p: _Plot, records: Sequence[IterRecord]) -> list[str]:
    points: list[tuple[float, float, str]] = []
    first = seed_score(records)
    if first is not None:
        points.append((0.0, first, f"seed workspace: {first:.3f} (measured in iteration 1)"))
    for r in records:
        score = r.workspace_next.score()
        if score is not None:
            where = f"adopted {r.summary.adopted}" if r.summary.adopted else "unchanged"
            pairs = len(r.workspace_next.pairs)
            points.append(
                (float(r.iter), score, f"after iteration {r.iter}: {score:.3f} ({where}, "
                 f"{pairs} pairs)")
            )  # fmt: skip
    out = []
    if len(points) > 1:
        coords = " ".join(f"{n(p.x(x))},{n(p.y(y))}" for x, y, _ in points)
        out.append(
            f'<polyline points="{coords}" fill="none" stroke="{WORKSPACE}" stroke-width="2"/>'
        )
    out += [
        f'<rect class="mark" x="{n(p.x(x) - 4)}" y="{n(p.y(y) - 4)}" width="8" height="8" '
        f'fill="{WORKSPACE}"><title>{esc(tip)}</title></rect>'
        for x, y, tip in points
    ]
    return out


def _spec_marks(p: _Plot, r: IterRecord) -> list[str]:
    out = []
    count = len(r.specs)
    for i, s in enumerate(r.specs):
        e, verdict = s.experiment, s.distill.verdict
        x = p.x(r.iter + (i - (count - 1) / 2) * min(0.6 / max(count - 1, 1), 0.25))
        color, tip = verdict_color(verdict), esc(spec_tip(r, i))
        if e.score is None:  # not measured: a cross in the strip above the plot
            y = p.top - 12
            out.append(
                f'<path class="mark" d="M{n(x - 4)} {n(y - 4)}l8 8m0 -8l-8 8" '
                f'stroke="{color}" stroke-width="2.5"><title>{tip}</title></path>'
            )
            continue
        y = p.y(e.score)
        if e.baseline is not None:
            out.append(
                f'<line x1="{n(x)}" x2="{n(x)}" y1="{n(p.y(e.baseline))}" y2="{n(y)}" '
                f'stroke="{color}" stroke-width="1.5" opacity="0.8"/>'
            )
        out.append(
            f'<circle class="mark" cx="{n(x)}" cy="{n(y)}" r="4.5" fill="{color}">'
            f"<title>{tip}</title></circle>"
        )
        if r.summary.adopted == s.spec.spec_id:
            out.append(
                f'<circle class="mark adopted" cx="{n(x)}" cy="{n(y)}" r="9" fill="none" '
                f'stroke="{ADOPTED_RING}" stroke-width="2.5"><title>adopted: {tip}</title>'
                f'</circle><text x="{n(x)}" y="{n(y - 13)}" text-anchor="middle" '
                f'fill="{ADOPTED_RING}" font-weight="600">{esc(s.spec.spec_id)}</text>'
            )
    return out


def _legend(p: _Plot, verdicts: Sequence[str]) -> list[str]:
    x = p.width - p.right + 14
    out = [
        f'<rect x="{n(x + 5)}" y="{n(p.top + 4)}" width="8" height="8" fill="{WORKSPACE}"/>'
        f'<text x="{n(x + 23)}" y="{n(p.top + 8)}" dy="4">workspace</text>'
        f'<circle cx="{n(x + 9)}" cy="{n(p.top + 26)}" r="7" fill="none" '
        f'stroke="{ADOPTED_RING}" stroke-width="2.5"/><circle cx="{n(x + 9)}" '
        f'cy="{n(p.top + 26)}" r="3.5" fill="{verdict_color("adopted")}"/>'
        f'<text x="{n(x + 23)}" y="{n(p.top + 26)}" dy="4">adopted</text>'
    ]
    for i, v in enumerate(v for v in verdicts if v != "adopted"):
        y = p.top + 44 + i * 18
        out.append(
            f'<circle cx="{n(x + 9)}" cy="{n(y)}" r="4.5" fill="{verdict_color(v)}"/>'
            f'<text x="{n(x + 23)}" y="{n(y)}" dy="4">{esc(v)}</text>'
        )
    return out


def _y_min(records: Sequence[IterRecord]) -> float:
    """The bottom of the score axis: 0, or a tenth below every plotted score when they all
    sit high (so small differences near 1.0 stay visible)."""
    values = [
        v
        for r in records
        for v in (r.workspace_next.score(), r.summary.score_before)
        if v is not None
    ]
    values += [
        v
        for r in records
        for s in r.specs
        for v in (s.experiment.score, s.experiment.baseline)
        if v is not None
    ]
    low = min(values, default=0.0)
    return max(0.0, math.floor(low * 10 - 0.5) / 10) if low > 0.3 else 0.0


def trajectory_chart(
    records: Sequence[IterRecord], *, size: tuple[float, float] = (860, 320)
) -> str:
    """Workspace score after every committed iteration (squares; `seed` is the workspace
    measured in iteration 1 before any change), each measured spec's score (dots, coloured by
    verdict) on a stem from the workspace's score on the same pairs, adoptions ringed, specs
    that did not run as crosses above the plot."""
    last = max((r.iter for r in records), default=1)
    p = _Plot(size[0], size[1], 48, 150, 34, 30, float(last), _y_min(records))
    ticks = [(0.0, "seed"), *((float(r.iter), str(r.iter)) for r in records)]
    parts = [svg_open(p.width, p.height, "research trajectory"), *_frame(p, ticks)]
    if any(s.experiment.score is None for r in records for s in r.specs):
        parts.append(
            f'<text x="{n(p.left - 6)}" y="{n(p.top - 8)}" text-anchor="end" '
            f'fill="{AXIS}">not run</text>'
        )
    parts += _workspace_line(p, records)
    for r in records:
        parts += _spec_marks(p, r)
    seen = dict.fromkeys(s.distill.verdict for r in records for s in r.specs)
    order = [v for v in VERDICT_COLORS if v in seen] + [v for v in seen if v not in VERDICT_COLORS]
    parts += _legend(p, order)
    parts.append("</svg>")
    return "".join(parts)


def delta_chart(records: Sequence[IterRecord]) -> str | None:
    """Each measured spec's paired delta against the workspace, as a stem from zero (solid
    when DISTILL adopted or confirmed it). None when no spec was measured."""
    rows = []
    for r in records:
        for i, s in enumerate(r.specs):
            d = s.experiment.delta
            if d is None:
                continue
            rows.append(
                Interval(
                    f"iter {r.iter} {s.spec.spec_id} {s.spec.intervention_axis} ({s.spec.scale})",
                    d,
                    min(0.0, d),
                    max(0.0, d),
                    s.distill.verdict in ("adopted", "confirmed"),
                    spec_tip(r, i),
                )
            )
    return interval_chart(rows, label="paired delta per spec") if rows else None


def coverage_chart(axes: Sequence[str], records: Sequence[IterRecord]) -> str:
    """One bar per axis of the taxonomy: its specs split by what they came to, with the best
    paired delta after the bar ('untried' for an axis no spec named)."""
    bars = []
    for axis in axes:
        specs = [s for r in records for s in r.specs if s.spec.intervention_axis == axis]
        segments = []
        for name, color, verdicts in _GROUPS:
            count = sum(1 for s in specs if s.distill.verdict in verdicts)
            if count:
                tip = f"{axis}: {count} spec(s) {name} ({', '.join(sorted(verdicts))})"
                segments.append(Segment(float(count), color, tip))
        deltas = [s.experiment.delta for s in specs if s.experiment.delta is not None]
        note = (
            f"{len(specs)} spec(s), best {max(deltas):+.3f}"
            if deltas
            else (f"{len(specs)} spec(s), none measured" if specs else "untried")
        )
        bars.append(Bar(axis, tuple(segments), note))
    legend = [(name, color) for name, color, _ in _GROUPS[:4]]
    return hbar_chart(bars, label="coverage of the intervention axes", legend=legend, width=760)
