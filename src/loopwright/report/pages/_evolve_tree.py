"""The whole family tree of an evolve run: every individual under its first parent, as nested
`<details>` (collapsible without script), the winner's chain open and marked."""

from __future__ import annotations

from loopwright.report._html import esc, fmt
from loopwright.search import Checkpoint, Individual

__all__ = ["lineage_tree"]


def _children(cp: Checkpoint) -> tuple[list[Individual], dict[str, list[Individual]]]:
    """Roots (no parent in the checkpoint: the seed, designs) and each individual's children
    under its first parent, both in (generation, id) order."""
    roots: list[Individual] = []
    kids: dict[str, list[Individual]] = {}
    for ind in sorted(cp.individuals.values(), key=lambda i: (i.generation, i.id)):
        parents = ind.lineage.parents
        if parents and parents[0] in cp.individuals and parents[0] != ind.id:
            kids.setdefault(parents[0], []).append(ind)
        else:
            roots.append(ind)
    return roots, kids


def _label(ind: Individual, cp: Checkpoint, on_chain: bool, count: int) -> str:
    lin = ind.lineage
    how = lin.operator + (f" @{lin.target}" if lin.target else "")
    others = [p[:8] for p in lin.parents[1:]]
    bits = [
        f'<span class="pill">gen {ind.generation}</span>',
        f"<code>{esc(ind.id[:8])}</code>",
        esc(how),
        f"train {fmt(ind.fitness, '.3f')}",
        f"holdout {fmt(ind.mean_score('holdout'), '.3f')}",
    ]
    if others:
        bits.append(f"<span class='muted'>also from {esc(', '.join(others))}</span>")
    if count:
        bits.append(f"<span class='muted'>{count} descendant(s)</span>")
    if ind.id == cp.winner_id or (cp.winner_id is None and on_chain and count == 0):
        bits.append("<span class='good'>WINNER</span>")
    elif ind.id == cp.seed_id:
        bits.append("<span class='pill'>seed</span>")
    return " · ".join(bits)


def lineage_tree(cp: Checkpoint, chain: list[Individual]) -> str:
    """The tree as markup: `<div class="tree" id="lineage-tree">`, one `details.ind` (or
    `div.ind.leaf`) per individual with `data-id`, the chain to the winner open and carrying
    `data-chain`. Deterministic; a parent cycle is cut where it closes."""
    roots, kids = _children(cp)
    chain_ids = {ind.id for ind in chain}
    seen: set[str] = set()
    sizes: dict[str, int] = {}

    def size(ind: Individual, path: frozenset[str]) -> int:
        if ind.id not in sizes:
            below = [k for k in kids.get(ind.id, []) if k.id not in path]
            sizes[ind.id] = sum(1 + size(k, path | {k.id}) for k in below)
        return sizes[ind.id]

    def node(ind: Individual) -> str:
        seen.add(ind.id)
        on_chain = ind.id in chain_ids
        below = [k for k in kids.get(ind.id, []) if k.id not in seen]
        label = _label(ind, cp, on_chain, size(ind, frozenset({ind.id})))
        mark = ' data-chain="true"' if on_chain else ""
        if not below:
            return f'<div class="ind leaf" data-id="{esc(ind.id)}"{mark}>{label}</div>'
        inner = "".join(node(k) for k in below)
        flag = " open" if on_chain else ""
        return (
            f'<details class="ind" data-id="{esc(ind.id)}"{mark}{flag}><summary>{label}'
            f'</summary><div class="kids">{inner}</div></details>'
        )

    body = "".join(node(r) for r in roots)
    return (
        f"<h3>The whole tree ({len(cp.individuals)} individuals)</h3>"
        "<p class='muted'>Every individual under its first parent; click a line to open or "
        "close its children. The chain to the winner is open.</p>"
        f'<div class="tree" id="lineage-tree">{body}</div>'
    )
