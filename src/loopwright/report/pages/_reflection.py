"""Reflection in the evolve page: each generation's `reflection_gen{N}.json` (read as plain
JSON, so a report written by another version still shows), the suggestion behind each guided
child, and how guided mutations paid off against their parents."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from statistics import fmean
from typing import Any

from loopwright.report._html import details, esc, fmt, table
from loopwright.search import Checkpoint, Individual

__all__ = ["guidance_of", "json_html", "payoff_table", "reflection_html", "suggestion_text"]

_SHOWN = {
    "failure_patterns",
    "success_patterns",
    "mutation_suggestions",
    "prompt_improvements",
    "structural_recommendations",
    "dropped",
    "attempts",
    "schema_version",
    "generation",
    "source",
    "model",
    "simulated",
    "candidates",
    "digest_chars",
    "digest_omitted",
    "note",
}


def _evidence(item: dict[str, Any]) -> str:
    ev = item.get("evidence")
    if not isinstance(ev, dict):
        return ""
    parts = [f"{ev.get('count', '?')}x"]
    if ev.get("tasks"):
        parts.append("tasks " + ", ".join(map(str, ev["tasks"])))
    if ev.get("candidates"):
        parts.append("candidates " + ", ".join(str(c)[:8] for c in ev["candidates"]))
    if ev.get("detail") and str(ev["detail"]) not in str(item.get("description", "")):
        parts.append(f"“{ev['detail']}”")
    return "; ".join(parts)


def _items(report: dict[str, Any], key: str) -> list[dict[str, Any]]:
    value = report.get(key)
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


_Row = tuple[object, ...]
_TABLES: tuple[tuple[str, str, tuple[str, ...], Callable[[dict[str, Any]], _Row]], ...] = (
    (
        "failure_patterns",
        "Failure patterns",
        ("kind", "pattern", "evidence"),
        lambda p: (p.get("kind", ""), p.get("description", ""), _evidence(p)),
    ),
    (
        "success_patterns",
        "Success patterns",
        ("kind", "pattern", "evidence"),
        lambda p: (p.get("kind", ""), p.get("description", ""), _evidence(p)),
    ),
    (
        "mutation_suggestions",
        "Mutation suggestions",
        ("id", "operator", "target", "kind", "confidence", "rationale", "evidence"),
        lambda s: (
            s.get("id", ""),
            s.get("operator", ""),
            s.get("target", ""),
            s.get("kind", ""),
            fmt(s.get("confidence")),
            s.get("rationale", ""),
            _evidence(s),
        ),
    ),
    (
        "prompt_improvements",
        "Prompt improvements",
        ("target", "kind", "text"),
        lambda p: (p.get("target", ""), p.get("kind", ""), p.get("text", "")),
    ),
    (
        "structural_recommendations",
        "Structural recommendations",
        ("action", "target", "role", "rationale"),
        lambda r: (
            r.get("action", ""),
            r.get("target", ""),
            r.get("role") or "-",
            r.get("rationale", ""),
        ),
    ),
)


def reflection_html(report: Any) -> str:
    """A ReflectionReport as tables: patterns, suggestions, prompt improvements, structural
    recommendations, what was dropped; unknown keys as nested lists. Escaped."""
    if not isinstance(report, dict):
        return json_html(report)
    keys = ("source", "model", "simulated", "digest_chars")
    head = ", ".join(f"{k}: {report[k]}" for k in keys if k in report)
    out = [f"<p class='muted'>{esc(head)}</p>" if head else ""]
    if report.get("note"):
        out.append(f"<p>{esc(report['note'])}</p>")
    for key, title, headers, row in _TABLES:
        rows = [row(item) for item in _items(report, key)]
        if rows:
            out.append(f"<p><b>{esc(title)}</b></p>" + table(headers, rows))
    dropped = [(d.get("item", ""), d.get("reason", "")) for d in _items(report, "dropped")]
    if dropped:
        out.append(details(f"dropped ({len(dropped)})", table(["item", "reason"], dropped)))
    rest = {k: v for k, v in report.items() if k not in _SHOWN}
    if rest:
        out.append(json_html(rest))
    return "".join(out)


def guidance_of(ind: Individual) -> dict[str, Any] | None:
    """The lineage's guidance (how a guided strategy chose the mutation) as a mapping, or None
    (random children, designs, the seed; and checkpoints from before reflection)."""
    value = getattr(ind.lineage, "guidance", None)
    if value is None:
        return None
    dumped = value.model_dump(mode="json") if hasattr(value, "model_dump") else value
    return dumped if isinstance(dumped, dict) else {"guidance": dumped}


def suggestion_text(ind: Individual, reflections: dict[int, Any]) -> str | None:
    """The reflection suggestion behind `ind`, spelled out from the report it names; None when
    the child was not guided by one."""
    g = guidance_of(ind)
    if g is None:
        return None
    mode, kind = g.get("mode", "?"), g.get("kind", "")
    sid, gen = g.get("suggestion_id"), g.get("report_generation")
    if mode != "suggestion" or sid is None:
        return f"{mode}" + (f" ({kind})" if kind and kind != mode else "")
    report = reflections.get(gen) if isinstance(gen, int) else None
    found = (
        next((s for s in _items(report, "mutation_suggestions") if s.get("id") == sid), None)
        if isinstance(report, dict)
        else None
    )
    if found is None:
        return f"suggestion {sid} of generation {gen}'s reflection ({kind})"
    text = f"{sid} (gen {gen}): {found.get('operator')} at {found.get('target')}"
    if found.get("role"):
        text += f" ({found['role']})"
    if found.get("rationale"):
        text += f": {found['rationale']}"
    return text


def payoff_table(cp: Checkpoint) -> str:
    """Per (guidance, operator): children made, how many beat their first parent's training
    fitness, and the mean change. Empty string when no child was guided."""
    groups: dict[tuple[str, str], list[float]] = defaultdict(list)
    for ind in cp.individuals.values():
        g = guidance_of(ind)
        if g is None or not ind.lineage.parents:
            continue
        parent = cp.individuals.get(ind.lineage.parents[0])
        if parent is None or parent.fitness is None or ind.fitness is None:
            continue
        label = str(g.get("mode", "?")) + (
            f": {g['kind']}" if g.get("kind") and g.get("kind") != g.get("mode") else ""
        )
        groups[(label, ind.lineage.operator)].append(ind.fitness - parent.fitness)
    if not groups:
        return ""
    rows = [
        [label, op, len(d), sum(1 for x in d if x > 0), f"{fmean(d):+.3f}"]
        for (label, op), d in sorted(groups.items())
    ]
    return "<h3>How guided mutations paid off</h3>" + table(
        ["guidance", "operator", "children", "beat parent", "mean Δ train"], rows, numeric=(2, 3, 4)
    )


def json_html(value: Any, depth: int = 0) -> str:
    """Any JSON value as nested HTML lists (mappings as labelled items). Escaped; deeper than
    6 levels shown as text."""
    if depth > 6:
        return f"<code>{esc(value)}</code>"
    if isinstance(value, dict):
        items = "".join(
            f"<li><b>{esc(k)}</b>: {json_html(v, depth + 1)}</li>" for k, v in value.items()
        )
        return f"<ul>{items}</ul>" if items else "{}"
    if isinstance(value, list):
        if not value:
            return "<span class='muted'>none</span>"
        return "<ul>" + "".join(f"<li>{json_html(v, depth + 1)}</li>" for v in value) + "</ul>"
    return esc(value)
