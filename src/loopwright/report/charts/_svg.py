"""Charts as inline SVG drawn in Python: no JavaScript, no plotting library, small files.

Every chart is a function from plain values to an `<svg>` string. Drawn data elements carry
the class `mark` (and a `<title>` tooltip), so a test can tell a chart with data from an empty
frame. Output is deterministic: coordinates are rounded, nothing random, no timestamps.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

from loopwright.report._html import esc

__all__ = [
    "Bar",
    "Flag",
    "Interval",
    "Point",
    "Segment",
    "Series",
    "bar_chart",
    "hbar_chart",
    "interval_chart",
    "line_chart",
    "nice_ticks",
    "score_color",
    "svg_open",
    "text_on",
]

FONT = 'font-family="system-ui,sans-serif" font-size="11"'
AXIS = "#8a93a3"
GRID = "#e6e9ef"

# Viridis at five stops: perceptually even, readable in grey and by colour-blind readers.
_STOPS = (
    (0.0, (68, 1, 84)),
    (0.25, (59, 82, 139)),
    (0.5, (33, 145, 140)),
    (0.75, (94, 201, 98)),
    (1.0, (253, 231, 37)),
)


def score_color(value: float) -> str:
    """The colour of a score in [0, 1] (clamped) on the viridis ramp."""
    v = min(max(value, 0.0), 1.0)
    for (a, ca), (b, cb) in itertools.pairwise(_STOPS):
        if v <= b:
            f = (v - a) / (b - a)
            r, g, bl = (round(x + (y - x) * f) for x, y in zip(ca, cb, strict=True))
            return f"#{r:02x}{g:02x}{bl:02x}"
    return "#fde725"


def text_on(value: float) -> str:
    """Black or white text, whichever reads on `score_color(value)`."""
    return "#111" if value >= 0.55 else "#fff"


def n(value: float) -> str:
    """A coordinate with at most one decimal (keeps files small)."""
    text = f"{value:.1f}"
    return text[:-2] if text.endswith(".0") else text


def svg_open(width: float, height: float, label: str) -> str:
    """The opening `<svg>` tag of a chart, sized and labelled for screen readers."""
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart-svg" role="img" '
        f'aria-label="{esc(label)}" width="{n(width)}" height="{n(height)}" '
        f'viewBox="0 0 {n(width)} {n(height)}" {FONT}>'
    )


@dataclass(frozen=True, slots=True)
class _Frame:
    width: float
    height: float
    left: float
    right: float
    top: float
    bottom: float
    x_min: float
    x_max: float
    y_min: float
    y_max: float

    def x(self, v: float) -> float:
        span = (self.x_max - self.x_min) or 1.0
        return self.left + (v - self.x_min) / span * (self.width - self.left - self.right)

    def y(self, v: float) -> float:
        span = (self.y_max - self.y_min) or 1.0
        return (
            self.height
            - self.bottom
            - (v - self.y_min) / span * (self.height - self.top - self.bottom)
        )


def _axes(
    f: _Frame, x_ticks: Sequence[tuple[float, str]], y_ticks: Sequence[tuple[float, str]]
) -> list[str]:
    out = []
    for v, text in y_ticks:
        y = n(f.y(v))
        out.append(
            f'<line x1="{n(f.left)}" x2="{n(f.width - f.right)}" y1="{y}" y2="{y}" '
            f'stroke="{GRID}"/>'
        )
        out.append(
            f'<text x="{n(f.left - 6)}" y="{y}" dy="4" text-anchor="end" '
            f'fill="{AXIS}">{esc(text)}</text>'
        )
    base = n(f.height - f.bottom)
    out.append(
        f'<line x1="{n(f.left)}" x2="{n(f.width - f.right)}" y1="{base}" y2="{base}" '
        f'stroke="{AXIS}"/>'
    )
    for v, label in x_ticks:
        x = n(f.x(v))
        out.append(
            f'<text x="{x}" y="{n(f.height - f.bottom + 15)}" text-anchor="middle" '
            f'fill="{AXIS}">{esc(label)}</text>'
        )
    return out


def nice_ticks(
    low: float, high: float, count: int = 5, unit: str = "", prefix: str = ""
) -> list[tuple[float, str]]:
    """Round tick values covering [low, high] (steps of 1, 2, 2.5 or 5 times a power of ten),
    each with its label, printed with as many decimals as the step needs."""
    if high <= low:
        return [(low, f"{prefix}{low:g}{unit}")]
    raw = (high - low) / count
    magnitude = 10 ** math.floor(math.log10(raw))
    mult = next(m for m in (1.0, 2.0, 2.5, 5.0, 10.0) if m * magnitude >= raw * (1 - 1e-9))
    step = mult * magnitude
    decimals = max(0, -math.floor(math.log10(step))) + (1 if mult == 2.5 else 0)
    first = math.ceil(low / step - 1e-9)
    ticks = []
    k = first
    while k * step <= high + step * 1e-6:
        value = 0.0 if k == 0 else k * step
        text = f"{value:.{decimals}f}"
        ticks.append((value, f"{prefix}{text}{unit}"))
        k += 1
    return ticks


@dataclass(frozen=True, slots=True)
class Point:
    """One value of a series; `low`/`high` draw an interval bar; `title` is the tooltip."""

    x: float
    y: float | None
    low: float | None = None
    high: float | None = None
    title: str = ""


@dataclass(frozen=True, slots=True)
class Series:
    """A named line of points in one colour."""

    name: str
    color: str
    points: tuple[Point, ...]
    dashed: bool = False


@dataclass(frozen=True, slots=True)
class Flag:
    """A labelled alarm marker at (x, y)."""

    x: float
    y: float
    label: str
    title: str = ""


def line_chart(
    series: Sequence[Series],
    *,
    label: str,
    x_ticks: Sequence[tuple[float, str]],
    y_range: tuple[float, float] = (0.0, 1.0),
    flags: Sequence[Flag] = (),
    threshold: tuple[float, str] | None = None,
    size: tuple[float, float] = (680, 300),
    y_prefix: str = "",
) -> str:
    """Lines with dots, optional interval bars, alarm flags and a dashed threshold line;
    `y_prefix` goes before each y tick's label ("$")."""
    xs = [p.x for s in series for p in s.points] or [0.0]
    lo_x, hi_x = min(xs), max(xs)
    pad = max((hi_x - lo_x) * 0.04, 0.3)
    f = _Frame(size[0], size[1], 48, 130, 16, 30, lo_x - pad, hi_x + pad, *y_range)
    parts = [
        svg_open(f.width, f.height, label),
        *_axes(f, x_ticks, nice_ticks(*y_range, prefix=y_prefix)),
    ]
    if threshold is not None:
        ty = n(f.y(threshold[0]))
        parts.append(
            f'<line x1="{n(f.left)}" x2="{n(f.width - f.right)}" y1="{ty}" y2="{ty}" '
            f'stroke="#c53030" stroke-dasharray="5 4"/><text x="{n(f.width - f.right + 4)}" '
            f'y="{ty}" dy="4" fill="#c53030">{esc(threshold[1])}</text>'
        )
    for s in series:
        parts.extend(_series(f, s))
    for flag in flags:
        x, y = f.x(flag.x), f.y(flag.y)
        parts.append(
            f'<path class="mark alarm" d="M{n(x)} {n(y - 14)} l6 10 h-12 z" fill="#c53030">'
            f"<title>{esc(flag.title or flag.label)}</title></path>"
            f'<text x="{n(x)}" y="{n(y - 17)}" text-anchor="middle" fill="#c53030" '
            f'font-weight="600">{esc(flag.label)}</text>'
        )
    parts.extend(_legend(f, series))
    parts.append("</svg>")
    return "".join(parts)


def _series(f: _Frame, s: Series) -> list[str]:
    out = []
    for p in s.points:
        if p.y is not None and p.low is not None and p.high is not None:
            x, lo, hi = n(f.x(p.x)), n(f.y(p.low)), n(f.y(p.high))
            out.append(
                f'<path d="M{x} {lo}V{hi}M{n(f.x(p.x) - 4)} {lo}h8M{n(f.x(p.x) - 4)} '
                f'{hi}h8" stroke="{s.color}" stroke-width="1.5" fill="none" '
                f'opacity="0.7"/>'
            )
    run: list[str] = []
    runs = [run]
    for p in s.points:
        if p.y is None:
            run = []
            runs.append(run)
        else:
            run.append(f"{n(f.x(p.x))},{n(f.y(p.y))}")
    dash = ' stroke-dasharray="6 4"' if s.dashed else ""
    for pts in runs:
        if len(pts) > 1:
            out.append(
                f'<polyline points="{" ".join(pts)}" fill="none" stroke="{s.color}" '
                f'stroke-width="2"{dash}/>'
            )
    for p in s.points:
        if p.y is not None:
            tip = esc(p.title or f"{s.name}: {p.y:.3f}")
            out.append(
                f'<circle class="mark" cx="{n(f.x(p.x))}" cy="{n(f.y(p.y))}" r="3.5" '
                f'fill="{s.color}"><title>{tip}</title></circle>'
            )
    return out


def _legend(f: _Frame, series: Sequence[Series]) -> list[str]:
    out = []
    x = f.width - f.right + 12
    for i, s in enumerate(series):
        y = f.top + 8 + i * 18
        dash = ' stroke-dasharray="6 4"' if s.dashed else ""
        out.append(
            f'<line x1="{n(x)}" x2="{n(x + 18)}" y1="{n(y)}" y2="{n(y)}" '
            f'stroke="{s.color}" stroke-width="2"{dash}/><text x="{n(x + 23)}" y="{n(y)}" '
            f'dy="4">{esc(s.name)}</text>'
        )
    return out


@dataclass(frozen=True, slots=True)
class Segment:
    """One stacked part of a bar."""

    value: float
    color: str
    title: str


@dataclass(frozen=True, slots=True)
class Bar:
    """A labelled bar made of stacked segments; `note` is printed at its end."""

    label: str
    segments: tuple[Segment, ...]
    note: str = ""


def bar_chart(
    bars: Sequence[Bar],
    *,
    label: str,
    note_fmt: str = ".2f",
    y_prefix: str = "",
    legend: Sequence[tuple[str, str]] = (),
    size: tuple[float, float] = (680, 280),
) -> str:
    """Vertical stacked bars, one per `Bar`, with the total (or note) above each."""
    top = max((sum(s.value for s in b.segments) for b in bars), default=0.0) or 1.0
    width = max(size[0], 60 + 46 * len(bars) + 130)
    f = _Frame(width, size[1], 56, 130, 20, 30, 0, max(len(bars), 1), 0.0, top * 1.12)
    slot = (f.width - f.left - f.right) / max(len(bars), 1)
    ticks = [(i + 0.5, b.label) for i, b in enumerate(bars)]
    y_ticks = nice_ticks(0.0, top * 1.12, 4, prefix=y_prefix)
    parts = [svg_open(f.width, f.height, label), *_axes(f, ticks, y_ticks)]
    for i, bar in enumerate(bars):
        x0, acc = f.left + slot * i + slot * 0.18, 0.0
        for seg in bar.segments:
            if seg.value <= 0:
                continue
            y1, y0 = f.y(acc + seg.value), f.y(acc)
            parts.append(
                f'<rect class="mark" x="{n(x0)}" y="{n(y1)}" width="{n(slot * 0.64)}" '
                f'height="{n(max(y0 - y1, 0.5))}" fill="{seg.color}"><title>'
                f"{esc(seg.title)}</title></rect>"
            )
            acc += seg.value
        note = bar.note or format(acc, note_fmt)
        parts.append(
            f'<text x="{n(x0 + slot * 0.32)}" y="{n(f.y(acc) - 4)}" '
            f'text-anchor="middle">{esc(note)}</text>'
        )
    for i, (name, color) in enumerate(legend):
        x, y = f.width - f.right + 12, f.top + 8 + i * 18
        parts.append(
            f'<rect x="{n(x)}" y="{n(y - 6)}" width="12" height="12" fill="{color}"/>'
            f'<text x="{n(x + 17)}" y="{n(y)}" dy="4">{esc(name)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def hbar_chart(
    bars: Sequence[Bar],
    *,
    label: str,
    legend: Sequence[tuple[str, str]] = (),
    width: float = 680,
) -> str:
    """Horizontal stacked bars (one row per `Bar`, top to bottom), the note after each."""
    label_w = min(max((len(b.label) for b in bars), default=4) * 6.6 + 14, 220)
    top = max((sum(s.value for s in b.segments) for b in bars), default=0.0) or 1.0
    row, head = 22, 22 if legend else 6
    height = head + row * len(bars) + 8
    span = width - label_w - 190
    parts = [svg_open(width, height, label)]
    for i, (name, color) in enumerate(legend):
        x = label_w + i * 130
        parts.append(
            f'<rect x="{n(x)}" y="4" width="12" height="12" fill="{color}"/>'
            f'<text x="{n(x + 17)}" y="14">{esc(name)}</text>'
        )
    for i, bar in enumerate(bars):
        y = head + i * row
        parts.append(
            f'<text x="{n(label_w - 8)}" y="{n(y + 14)}" text-anchor="end">{esc(bar.label)}</text>'
        )
        acc = 0.0
        for seg in bar.segments:
            if seg.value <= 0:
                continue
            x0, w = label_w + acc / top * span, seg.value / top * span
            parts.append(
                f'<rect class="mark" x="{n(x0)}" y="{n(y + 3)}" width="{n(max(w, 0.5))}" '
                f'height="{row - 6}" fill="{seg.color}"><title>{esc(seg.title)}</title>'
                "</rect>"
            )
            acc += seg.value
        parts.append(
            f'<text x="{n(label_w + acc / top * span + 5)}" y="{n(y + 14)}">{esc(bar.note)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


@dataclass(frozen=True, slots=True)
class Interval:
    """One row of a forest plot: a value with its interval; `strong` draws it solid."""

    label: str
    value: float
    low: float
    high: float
    strong: bool
    title: str = ""


def interval_chart(rows: Sequence[Interval], *, label: str, width: float = 680) -> str:
    """A forest plot: one row per interval around a dashed zero line (e.g. paired
    differences with their bootstrap intervals). Solid when `strong`, hollow otherwise."""
    label_w = min(max((len(r.label) for r in rows), default=4) * 6.6 + 14, 260)
    lo = min([0.0, *(r.low for r in rows)])
    hi = max([0.0, *(r.high for r in rows)])
    pad = (hi - lo) * 0.08 or 0.05
    row_h, top = 24, 8
    height = top + row_h * len(rows) + 30
    f = _Frame(width, height, label_w, 30, top, 30, lo - pad, hi + pad, 0.0, 1.0)
    parts = [svg_open(width, height, label)]
    for v, text in nice_ticks(lo - pad, hi + pad, 6):
        x = n(f.x(v))
        parts.append(
            f'<line x1="{x}" x2="{x}" y1="{top}" y2="{n(height - 28)}" stroke="{GRID}"/>'
            f'<text x="{x}" y="{n(height - 12)}" text-anchor="middle" fill="{AXIS}">{text}</text>'
        )
    zero = n(f.x(0.0))
    parts.append(
        f'<line x1="{zero}" x2="{zero}" y1="{top}" y2="{n(height - 28)}" stroke="#444" '
        'stroke-dasharray="4 3"/>'
    )
    for i, r in enumerate(rows):
        y = top + i * row_h + row_h / 2
        fill = "#2563eb" if r.strong else "#ffffff"
        parts.append(
            f'<text x="{n(label_w - 8)}" y="{n(y + 4)}" text-anchor="end">{esc(r.label)}</text>'
            f'<g class="mark"><title>{esc(r.title or r.label)}</title>'
            f'<line x1="{n(f.x(r.low))}" x2="{n(f.x(r.high))}" y1="{n(y)}" y2="{n(y)}" '
            f'stroke="#2563eb" stroke-width="2"/><circle cx="{n(f.x(r.value))}" cy="{n(y)}" '
            f'r="5" fill="{fill}" stroke="#2563eb" stroke-width="2"/></g>'
        )
    parts.append("</svg>")
    return "".join(parts)
