"""The page around every report: one self-contained HTML file, styles inline, no script.

The page carries a Content-Security-Policy that forbids every external load, so a report that
referred to a CDN, a font or a remote image would fail loudly in a browser instead of quietly
needing the network. Every text that comes from a run directory is escaped here.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = [
    "REPORT_SCHEMA_VERSION",
    "Raw",
    "Section",
    "banner",
    "details",
    "esc",
    "figure",
    "fmt",
    "fmt_tokens",
    "fmt_usd",
    "page",
    "table",
]

REPORT_SCHEMA_VERSION = 1
"""Written into every page as `<meta name="loopwright-report-schema">` (docs/report.md)."""

_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

_CSS = """
:root { --fg:#1d2330; --muted:#5b6475; --line:#d8dde6; --bg:#ffffff; --panel:#f6f8fb; }
* { box-sizing: border-box; }
body { margin:0; font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;
  color:var(--fg); background:var(--bg); }
header.top { padding:16px 28px 8px; border-bottom:1px solid var(--line); }
h1 { font-size:22px; margin:0 0 6px; }
h2 { font-size:18px; margin:28px 0 10px; padding-top:8px; border-top:1px solid var(--line); }
h3 { font-size:15px; margin:18px 0 8px; }
main { padding:0 28px 40px; max-width:1400px; }
nav.toc { font-size:13px; margin:8px 0; }
nav.toc a { margin-right:14px; color:#2454a6; text-decoration:none; }
.stamp { font-size:12.5px; color:var(--muted); display:flex; flex-wrap:wrap; gap:4px 18px; }
.stamp b { color:var(--fg); font-weight:600; }
.banner { margin:10px 0; padding:10px 14px; border-radius:6px; font-weight:600; }
.banner.sim { background:#fff4d6; border:2px solid #e0a800; color:#5c4300; }
.banner.partial { background:#fde8e8; border:2px solid #c53030; color:#742a2a; }
.banner.stale { background:#fff0e0; border:2px solid #dd6b20; color:#7b341e; }
.banner.network { background:#fde8e8; border:2px solid #c53030; color:#742a2a; }
.cards { display:flex; flex-wrap:wrap; gap:10px; margin:12px 0; }
.card { background:var(--panel); border:1px solid var(--line); border-radius:6px;
  padding:8px 12px; min-width:150px; }
.card .k { font-size:12px; color:var(--muted); }
.card .v { font-size:17px; font-weight:600; }
table { border-collapse:collapse; font-size:13px; margin:6px 0 12px; }
th, td { border-bottom:1px solid var(--line); padding:3px 9px; text-align:left;
  vertical-align:top; }
th { background:var(--panel); font-weight:600; }
td.num, th.num { text-align:right; font-variant-numeric:tabular-nums; }
figure.chart { margin:10px 0 16px; overflow-x:auto; }
figure.chart figcaption { font-size:12.5px; color:var(--muted); margin-top:2px; }
.side { display:flex; flex-wrap:wrap; gap:18px; align-items:flex-start; }
.side > figure { flex:1 1 420px; }
.graph svg { max-width:100%; height:auto; }
details { margin:4px 0 8px; }
summary { cursor:pointer; color:#2454a6; }
pre { background:var(--panel); border:1px solid var(--line); padding:8px; overflow-x:auto;
  font-size:12px; max-height:480px; }
.muted { color:var(--muted); }
.bad { color:#b42318; font-weight:600; }
.good { color:#1e7b34; font-weight:600; }
.runcard { border:1px solid var(--line); border-radius:6px; padding:6px 14px; margin:10px 0; }
.tree .kids { margin-left:22px; border-left:1px dotted var(--line); padding-left:6px; }
.tree .ind { margin:2px 0; font-size:13px; }
.tree .leaf { padding-left:14px; }
.tree [data-chain] > summary, .tree .leaf[data-chain] { font-weight:600; }
.pill { display:inline-block; padding:0 7px; border-radius:9px; font-size:12px;
  background:var(--panel); border:1px solid var(--line); margin-right:4px; }
"""


@dataclass(frozen=True, slots=True)
class Section:
    """One titled part of a page; `anchor` is its id for the table of contents."""

    anchor: str
    title: str
    body: str


def esc(value: object) -> str:
    """`value` as text safe inside HTML or SVG (quotes escaped too)."""
    return html.escape(str(value), quote=True)


def fmt(value: float | None, spec: str = ".2f") -> str:
    """A number for a table, `-` for a missing one."""
    return "-" if value is None else format(value, spec)


def fmt_usd(value: float | None) -> str:
    """Dollars: `$0.0123`; `unknown` when no price was known."""
    if value is None:
        return "unknown"
    return f"${value:,.4f}" if value < 10 else f"${value:,.2f}"


def fmt_tokens(value: int) -> str:
    """Tokens as 1,234 / 12.3k / 4.56M."""
    if value >= 1_000_000:
        return f"{value / 1_000_000:.2f}M"
    if value >= 10_000:
        return f"{value / 1000:.1f}k"
    return f"{value:,}"


def table(
    headers: Sequence[str],
    rows: Iterable[Sequence[object]],
    *,
    numeric: Iterable[int] = (),
    css_class: str = "",
) -> str:
    """An HTML table. Cells are escaped unless given as `Raw`; columns in `numeric` align right."""
    right = set(numeric)
    cls = f' class="{esc(css_class)}"' if css_class else ""

    def cell(tag: str, index: int, value: object) -> str:
        align = ' class="num"' if index in right else ""
        text = value.html if isinstance(value, Raw) else esc(value)
        return f"<{tag}{align}>{text}</{tag}>"

    head = "".join(cell("th", i, h) for i, h in enumerate(headers))
    body = "".join(
        "<tr>" + "".join(cell("td", i, v) for i, v in enumerate(row)) + "</tr>" for row in rows
    )
    return f"<table{cls}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


@dataclass(frozen=True, slots=True)
class Raw:
    """Markup that `table` puts in a cell as is (already escaped by its maker)."""

    html: str


def figure(chart_id: str, svg: str, caption: str) -> str:
    """A chart: the inline SVG and its caption. `chart_id` names it for tests and links."""
    return (
        f'<figure class="chart" id="chart-{esc(chart_id)}" data-chart="{esc(chart_id)}">'
        f"{svg}<figcaption>{esc(caption)}</figcaption></figure>"
    )


def details(summary: str, body: str, *, open_: bool = False) -> str:
    """A collapsible block (`body` is markup)."""
    flag = " open" if open_ else ""
    return f"<details{flag}><summary>{esc(summary)}</summary>{body}</details>"


def banner(kind: str, text: str) -> str:
    """A banner across the page: `sim` (simulated results), `partial` (unfinished run),
    `stale` (measured at another commit) or `network` (external agents ran with the network
    open)."""
    return f'<div class="banner {esc(kind)}" id="{esc(kind)}-banner" role="note">{esc(text)}</div>'


def page(
    *,
    title: str,
    kind: str,
    stamp_html: str,
    banners: Sequence[str],
    sections: Sequence[Section],
    partial: bool,
) -> str:
    """The whole HTML document. Deterministic: the same inputs give the same bytes."""
    toc = "".join(f'<a href="#{esc(s.anchor)}">{esc(s.title)}</a>' for s in sections)
    body = "".join(
        f'<section id="{esc(s.anchor)}"><h2>{esc(s.title)}</h2>{s.body}</section>' for s in sections
    )
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta name="loopwright-report-schema" content="{REPORT_SCHEMA_VERSION}">'
        f'<meta name="loopwright-report-kind" content="{esc(kind)}">'
        f'<meta name="loopwright-report-partial" content="{str(partial).lower()}">'
        f"<title>{esc(title)}</title><style>{_CSS}</style></head><body>"
        f'<header class="top"><h1>{esc(title)}</h1>{stamp_html}{"".join(banners)}'
        f'<nav class="toc">{toc}</nav></header><main>{body}</main></body></html>\n'
    )
