"""Evolve page sections about the winner: seed and winner graphs with what changed, the
lineage from the seed to the winner, and each generation's reflection report."""

from __future__ import annotations

from typing import Any

from loopwright.report._html import Section, details, esc, figure, fmt, table
from loopwright.report.charts._graph import (
    ADDED,
    CHANGED,
    REMOVED,
    Change,
    draw_workflow,
    workflow_changes,
)
from loopwright.report.charts._svg import n, score_color, svg_open, text_on
from loopwright.report.pages._evolve_data import EvolveData, winner_of
from loopwright.report.pages._evolve_tree import lineage_tree
from loopwright.report.pages._reflection import payoff_table, reflection_html, suggestion_text
from loopwright.search import Checkpoint, Individual, ReflectionSkipped
from loopwright.workflow import to_mermaid

__all__ = ["graphs_section", "lineage_of", "lineage_section", "reflection_section"]


def _fills(changes: list[Change]) -> tuple[dict[str, str], dict[str, str]]:
    """Node colours for the seed's drawing and the winner's from what changed."""
    seed_fill: dict[str, str] = {}
    win_fill: dict[str, str] = {}
    for c in changes:
        if not c.subject.startswith("node "):
            continue
        node = c.subject.removeprefix("node ")
        if c.kind == "removed":
            seed_fill[node] = REMOVED
        elif c.kind == "added":
            win_fill[node] = ADDED
        else:
            seed_fill[node] = win_fill[node] = CHANGED
    return seed_fill, win_fill


def _changes_html(changes: list[Change]) -> str:
    if not changes:
        return "<p>The winner is the seed workflow: nothing changed.</p>"
    rows = [(c.kind, c.subject, "; ".join(c.details)) for c in changes]
    diffs = "".join(
        details(f"prompt diff: {c.subject}", f"<pre>{esc(c.prompt_diff)}</pre>")
        for c in changes
        if c.prompt_diff
    )
    return "<h3>What changed</h3>" + table(["change", "where", "details"], rows) + diffs


def graphs_section(cp: Checkpoint, *, use_dot: bool = True) -> Section:
    seed, winner = cp.individuals[cp.seed_id], winner_of(cp)
    if winner is None:
        return Section("graphs", "Seed and winner workflows", "<p>No winner yet.</p>")
    changes = workflow_changes(seed.workflow, winner.workflow)
    seed_fill, win_fill = _fills(changes)
    left = draw_workflow(seed.workflow, "seed", seed_fill, use_dot=use_dot)
    right = draw_workflow(winner.workflow, "winner", win_fill, use_dot=use_dot)
    engine = (
        "Graphviz dot"
        if left.engine == "graphviz"
        else "the built-in layout (Graphviz dot not found)"
    )
    graphs = (
        '<div class="side graph">'
        + figure("graph-seed", left.svg, f"Seed {seed.mode}: removed nodes red, changed amber.")
        + figure(
            "graph-winner", right.svg, f"Winner {winner.mode}: added nodes green, changed amber."
        )
        + "</div>"
    )
    mermaid = details(
        "Mermaid source of both graphs",
        f"<pre>{esc(to_mermaid(seed.workflow, title=f'seed {seed.mode}'))}</pre>"
        f"<pre>{esc(to_mermaid(winner.workflow, title=f'winner {winner.mode}'))}</pre>",
    )
    body = graphs + f"<p class='muted'>Drawn with {esc(engine)}.</p>" + _changes_html(changes)
    return Section("graphs", "Seed and winner workflows", body + mermaid)


def lineage_of(cp: Checkpoint, ind: Individual) -> list[Individual]:
    """The chain from the first ancestor found (the seed, normally) to `ind`, following the
    first parent of each step. Stops at a parent the checkpoint does not hold or at a cycle."""
    chain, seen = [ind], {ind.id}
    current = ind
    while current.lineage.parents:
        parent = cp.individuals.get(current.lineage.parents[0])
        if parent is None or parent.id in seen:
            break
        chain.append(parent)
        seen.add(parent.id)
        current = parent
    return chain[::-1]


def lineage_section(cp: Checkpoint, reflections: dict[int, Any] | None = None) -> Section:
    winner = winner_of(cp)
    if winner is None:
        return Section("lineage", "Lineage of the winner", "<p>No winner yet.</p>")
    chain = lineage_of(cp, winner)
    rows = []
    previous: float | None = None
    for ind in chain:
        fit = ind.fitness
        delta = "" if previous is None or fit is None else f"{fit - previous:+.3f}"
        suggestion = suggestion_text(ind, reflections or {})
        rows.append(
            [
                ind.generation,
                ind.mode,
                ", ".join(p[:8] for p in ind.lineage.parents) or "-",
                ind.lineage.operator,
                ind.lineage.target or "-",
                ind.lineage.reason or "-",
                suggestion or "-",
                fmt(fit, ".3f"),
                delta,
                fmt(ind.mean_score("holdout"), ".3f"),
            ]
        )
        previous = fit if fit is not None else previous
    chart = figure(
        "lineage",
        _chain_svg(chain),
        "From the seed to the winner; each arrow is "
        "the mutation (or design) that made the next individual; colour is its "
        "training fitness.",
    )
    body = chart + table(
        [
            "gen",
            "individual",
            "parents",
            "operator",
            "target",
            "why",
            "suggestion",
            "train",
            "Δ train",
            "holdout",
        ],
        rows,
        numeric=(7, 8, 9),
    )
    body += lineage_tree(cp, chain)
    return Section("lineage", "Lineage of the winner", body + payoff_table(cp))


def _chain_svg(chain: list[Individual]) -> str:
    box_w, gap, h = 128, 46, 64
    width = 20 + len(chain) * (box_w + gap)
    parts = [svg_open(width, h + 40, "lineage of the winner")]
    for i, ind in enumerate(chain):
        x = 10 + i * (box_w + gap)
        fit = ind.fitness
        fill = "#cfd4dc" if fit is None else score_color(fit)
        ink = "#111" if fit is None else text_on(fit)
        parts.append(
            f'<g class="mark"><title>{esc(ind.mode)}: {esc(ind.lineage.operator)}</title>'
            f'<rect x="{x}" y="20" width="{box_w}" height="{h}" rx="6" fill="{fill}" '
            f'stroke="#333"/><text x="{n(x + box_w / 2)}" y="40" text-anchor="middle" '
            f'fill="{ink}" font-weight="600">gen {ind.generation} · {esc(ind.id[:8])}</text>'
            f'<text x="{n(x + box_w / 2)}" y="58" text-anchor="middle" fill="{ink}">train '
            f'{fmt(fit, ".3f")}</text><text x="{n(x + box_w / 2)}" y="74" text-anchor="middle" '
            f'fill="{ink}">holdout {fmt(ind.mean_score("holdout"), ".3f")}</text></g>'
        )
        if i + 1 < len(chain):
            nxt = chain[i + 1].lineage
            label = nxt.operator + (f" @{nxt.target}" if nxt.target else "")
            x1 = x + box_w
            parts.append(
                f'<path d="M{x1} 52h{gap - 4}" stroke="#444" stroke-width="1.5"/>'
                f'<path d="M{x1 + gap} 52l-7 -4v8z" fill="#444"/>'
                f'<text x="{n(x1 + gap / 2)}" y="{h + 36}" text-anchor="middle" '
                f'font-size="10">{esc(label[:28])}</text>'
            )
    parts.append("</svg>")
    return "".join(parts)


def reflection_section(data: EvolveData, cp: Checkpoint) -> Section:
    skipped = {e.generation: e.reason for e in data.progress if isinstance(e, ReflectionSkipped)}
    blocks = []
    for s in cp.summaries:
        g = s.generation
        if g in data.reflections:
            blocks.append(
                details(
                    f"generation {g}: reflection report",
                    reflection_html(data.reflections[g]),
                    open_=g == cp.summaries[-1].generation,
                )
            )
        elif g in skipped:
            blocks.append(f"<p>generation {g}: no reflection ({esc(skipped[g])}).</p>")
        else:
            blocks.append(f"<p>generation {g}: no reflection recorded.</p>")
    extra = [g for g in data.reflections if g not in {s.generation for s in cp.summaries}]
    for g in extra:
        blocks.append(
            details(f"generation {g}: reflection report", reflection_html(data.reflections[g]))
        )
    return Section("reflection", "Reflection per generation", "".join(blocks) or "<p>none</p>")
