"""Credit assignment: which suggestion kinds and operators have made children that beat their
parents, so the guided strategy can shift weight toward what has paid off.

The table is derived from the individuals' lineages and training fitness, never stored apart:
a run resumed from its checkpoint has the same table. A child counts once it has a training
fitness and so does (each of) its parents; it *beats* its parents when its fitness is strictly
above the best parent's. Children of the random strategy count under the kind `random`, a
guided strategy's exploration draws under `exploration`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from statistics import fmean

from loopwright.search._individual import Individual

__all__ = ["CreditRow", "CreditTable", "credit_key", "credit_table"]

_NOT_BRED = ("seed", "design:")


@dataclass(frozen=True, slots=True)
class CreditRow:
    """One (suggestion kind, operator): children made, evaluated, and how many beat their
    parents; `mean_delta` is the mean of (child - best parent) fitness over evaluated ones."""

    kind: str
    operator: str
    children: int
    evaluated: int
    beat_parent: int
    mean_delta: float | None

    @property
    def win_rate(self) -> float | None:
        return self.beat_parent / self.evaluated if self.evaluated else None

    @property
    def factor(self) -> float:
        """The weight multiplier: the Laplace-smoothed win rate over a coin flip,
        (wins + 1) / (evaluated + 2) / 0.5, in (0, 2); 1.0 with no evidence."""
        return _smoothed(self.beat_parent, self.evaluated)


@dataclass(frozen=True)
class CreditTable:
    """Credit rows by (kind, operator), sorted by kind then operator."""

    rows: tuple[CreditRow, ...] = ()

    def factor(self, kind: str, operator: str) -> float:
        """The row's factor; 1.0 for a pair never tried."""
        for row in self.rows:
            if row.kind == kind and row.operator == operator:
                return row.factor
        return 1.0

    def operator_factor(self, operator: str) -> float:
        """The factor of `operator` pooled over every kind (same smoothing as a row's);
        1.0 for an operator never tried."""
        rows = [r for r in self.rows if r.operator == operator]
        return _smoothed(sum(r.beat_parent for r in rows), sum(r.evaluated for r in rows))


def _smoothed(wins: int, evaluated: int) -> float:
    """The Laplace-smoothed win rate over a coin flip: (wins + 1) / (evaluated + 2) / 0.5."""
    return (wins + 1) / (evaluated + 2) / 0.5


def credit_key(ind: Individual) -> tuple[str, str] | None:
    """(kind, operator) of a bred child; None for the seed and designs."""
    lineage = ind.lineage
    if not lineage.parents or lineage.operator.startswith(_NOT_BRED):
        return None
    kind = lineage.guidance.kind if lineage.guidance is not None else "random"
    return kind, lineage.operator


def credit_table(individuals: Iterable[Individual]) -> CreditTable:
    """The credit table over every bred individual in `individuals` (deterministic)."""
    known = {ind.id: ind for ind in individuals}
    made: dict[tuple[str, str], int] = {}
    deltas: dict[tuple[str, str], list[float]] = {}
    for ind in known.values():
        key = credit_key(ind)
        if key is None:
            continue
        made[key] = made.get(key, 0) + 1
        deltas.setdefault(key, [])
        parents = [known[p].fitness for p in ind.lineage.parents if p in known]
        child = ind.fitness
        if child is None or not parents or any(f is None for f in parents):
            continue
        deltas[key].append(child - max(f for f in parents if f is not None))
    rows = [
        CreditRow(
            kind=kind,
            operator=op,
            children=made[(kind, op)],
            evaluated=len(d),
            beat_parent=sum(1 for x in d if x > 1e-9),
            mean_delta=round(fmean(d), 4) if d else None,
        )
        for (kind, op), d in sorted(deltas.items())
    ]
    return CreditTable(tuple(rows))
