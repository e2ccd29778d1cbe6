"""Reading a report back in tests: its charts, its meta tags, its banners, its table rows."""

from __future__ import annotations

import re
from html.parser import HTMLParser

FIGURE = re.compile(r'<figure class="chart" id="chart-([^"]+)"[^>]*>(.*?)</figure>', re.DOTALL)


def charts(page: str) -> dict[str, str]:
    """Chart id -> the figure's markup."""
    return {m.group(1): m.group(2) for m in FIGURE.finditer(page)}


def marks(svg: str) -> int:
    """Drawn data elements: our charts' `mark`s and Graphviz's node groups."""
    return len(re.findall(r'class="(?:mark\b[^"]*|node)"', svg))


def meta(page: str, name: str) -> str | None:
    found = re.search(rf'<meta name="{re.escape(name)}" content="([^"]*)"', page)
    return found.group(1) if found else None


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


def text_of(markup: str) -> str:
    """The visible text of some markup, tags dropped, entities decoded."""
    parser = _Text()
    parser.feed(markup)
    return " ".join(" ".join(parser.parts).split())


def section(page: str, anchor: str) -> str:
    """The markup of `<section id=anchor>`."""
    found = re.search(rf'<section id="{re.escape(anchor)}">(.*?)</section>', page, re.DOTALL)
    assert found is not None, f"no section {anchor!r}"
    return found.group(1)


def table_rows(markup: str) -> list[list[str]]:
    """The text of each body row of the first table in `markup`."""
    body = re.search(r"<tbody>(.*?)</tbody>", markup, re.DOTALL)
    assert body is not None
    rows = re.findall(r"<tr>(.*?)</tr>", body.group(1), re.DOTALL)
    return [[text_of(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", r, re.DOTALL)] for r in rows]
