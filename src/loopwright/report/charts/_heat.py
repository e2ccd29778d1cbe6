"""Heat maps as inline SVG: a grid of cells coloured by a score in [0, 1] (the MAP-Elites
archive, the task x individual matrix, the run page's task x workflow scores)."""

from __future__ import annotations

from dataclasses import dataclass

from loopwright.report._html import esc
from loopwright.report.charts._svg import AXIS, n, score_color, svg_open, text_on

__all__ = ["HeatCell", "HeatGrid", "heat_grid"]


@dataclass(frozen=True, slots=True)
class HeatCell:
    """One filled cell: `value` in [0, 1] picks the colour, `text` is printed in it."""

    value: float | None
    text: str
    title: str
    outline: str | None = None


@dataclass(frozen=True, slots=True)
class HeatGrid:
    """Rows x columns of cells (missing keys are drawn empty). `col_groups` (label, span)
    adds a second header row above the column labels."""

    rows: tuple[str, ...]
    cols: tuple[str, ...]
    cells: dict[tuple[int, int], HeatCell]
    row_title: str = ""
    col_groups: tuple[tuple[str, int], ...] = ()
    cell_size: tuple[float, float] = (46, 26)


def heat_grid(grid: HeatGrid, *, label: str, legend: str = "score") -> str:
    """A heat map with a colour ramp legend; a cell's outline colour marks it (e.g. winner)."""
    cw, ch = grid.cell_size
    left = min(max((len(r) for r in grid.rows), default=4) * 6.4 + 16, 240)
    col_h = min(max((len(c) for c in grid.cols), default=2) * 5.2 + 14, 130)
    top = col_h + (20 if grid.col_groups else 0) + 4
    width = left + cw * len(grid.cols) + 120
    height = max(top + ch * len(grid.rows) + 10, top + 130)
    parts = [svg_open(width, height, label)]
    x = left
    for name, span in grid.col_groups:
        parts.append(
            f'<text x="{n(x + span * cw / 2)}" y="14" text-anchor="middle" '
            f'font-weight="600">{esc(name)}</text><line x1="{n(x + 2)}" '
            f'x2="{n(x + span * cw - 2)}" y1="19" y2="19" stroke="{AXIS}"/>'
        )
        x += span * cw
    for j, col in enumerate(grid.cols):
        cx = left + j * cw + cw / 2
        parts.append(
            f'<text transform="translate({n(cx + 3)},{n(top - 6)}) rotate(-55)">{esc(col)}</text>'
        )
    for i, row in enumerate(grid.rows):
        parts.append(
            f'<text x="{n(left - 6)}" y="{n(top + i * ch + ch / 2 + 4)}" '
            f'text-anchor="end">{esc(row)}</text>'
        )
        for j in range(len(grid.cols)):
            parts.append(_heat_cell(grid.cells.get((i, j)), left + j * cw, top + i * ch, cw, ch))
    parts.append(_ramp(left + cw * len(grid.cols) + 24, top, legend))
    parts.append("</svg>")
    return "".join(parts)


def _heat_cell(cell: HeatCell | None, x: float, y: float, w: float, h: float) -> str:
    box = f'x="{n(x + 1)}" y="{n(y + 1)}" width="{n(w - 2)}" height="{n(h - 2)}"'
    if cell is None:
        return f'<rect {box} fill="#f3f4f7"/>'
    fill = "#cfd4dc" if cell.value is None else score_color(cell.value)
    ink = "#111" if cell.value is None else text_on(cell.value)
    stroke = f' stroke="{cell.outline}" stroke-width="2.5"' if cell.outline else ""
    return (
        f'<g class="mark"><title>{esc(cell.title)}</title><rect {box} fill="{fill}"{stroke}/>'
        f'<text x="{n(x + w / 2)}" y="{n(y + h / 2 + 4)}" text-anchor="middle" fill="{ink}">'
        f"{esc(cell.text)}</text></g>"
    )


def _ramp(x: float, y: float, legend: str) -> str:
    parts = [f'<text x="{n(x)}" y="{n(y - 4)}">{esc(legend)}</text>']
    for k in range(10):
        v = 1.0 - k / 9
        parts.append(
            f'<rect x="{n(x)}" y="{n(y + k * 10)}" width="14" height="10" fill="{score_color(v)}"/>'
        )
    parts.append(
        f'<text x="{n(x + 18)}" y="{n(y + 9)}">1.0</text>'
        f'<text x="{n(x + 18)}" y="{n(y + 100)}">0.0</text>'
    )
    return "".join(parts)
