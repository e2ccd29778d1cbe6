"""Credit assignment: which suggestion kinds and operators have made children that beat their
parents, so the guided strategy can shift weight toward what has paid off.

The table is derived from the individuals' lineages and training results, never stored apart:
a run resumed from its checkpoint has the same table. A child counts once it has a training
result and so does (each of) its parents. Its delta against a parent is paired: the mean over
the (task, repetition) runs valid for both, so a child stopped at a stage is compared with its
parent on the stage's tasks, not with the parent's mean over every task (which set a
three-task mean against a twelve-task one); with no shared run, the two fitnesses. It *beats*
its parents when its delta is above zero against each; under `objective: cost-aware` (a
`tolerance` given) also when it is a cheaper tie with each, by the stage's own rule
(`_staging.cheaper_tie`: within `tolerance`, at most CHEAPER times its paired dollars), which
cost-aware selection prefers. Children of the random strategy count under the kind `random`,
a guided strategy's exploration draws under `exploration`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from statistics import fmean

from loopwright.search._individual import Individual
from loopwright.search._staging import cheaper_tie

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
        """The pair's win rate over a coin flip, shrunk toward its operator's: (wins + 2 p) /
        (evaluated + 2) / 0.5, where p is the operator's smoothed win rate over every kind
        (`operator_factor` / 2). A kind never tried takes its operator's factor: a reflection
        that words the same failing change four ways (four prompt-lesson kinds) starts each
        new wording where the others left the operator, not at an even chance. For an
        operator never tried p = 0.5 and this is the row's own `factor`."""
        p = self.operator_factor(operator) * 0.5
        for row in self.rows:
            if row.kind == kind and row.operator == operator:
                return (row.beat_parent + 2 * p) / (row.evaluated + 2) / 0.5
        return 2 * p

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


def credit_table(individuals: Iterable[Individual], tolerance: float | None = None) -> CreditTable:
    """The credit table over every bred individual in `individuals` (the module docstring has
    the rules; `tolerance` None: no cheaper tie counts). Deterministic."""
    known = {ind.id: ind for ind in individuals}
    made: dict[tuple[str, str], int] = {}
    deltas: dict[tuple[str, str], list[tuple[float, bool]]] = {}
    for ind in known.values():
        key = credit_key(ind)
        if key is None:
            continue
        made[key] = made.get(key, 0) + 1
        deltas.setdefault(key, [])
        parents = [known[p] for p in ind.lineage.parents if p in known]
        if ind.fitness is None or not parents or any(p.fitness is None for p in parents):
            continue
        against = [_against(ind, p, tolerance) for p in parents]
        deltas[key].append((min(d for d, _ in against), all(b for _, b in against)))
    rows = [
        CreditRow(
            kind=kind,
            operator=op,
            children=made[(kind, op)],
            evaluated=len(d),
            beat_parent=sum(1 for _, beat in d if beat),
            mean_delta=round(fmean(x for x, _ in d), 4) if d else None,
        )
        for (kind, op), d in sorted(deltas.items())
    ]
    return CreditTable(tuple(rows))


def _against(child: Individual, parent: Individual, tolerance: float | None) -> tuple[float, bool]:
    """(the child's paired delta against `parent`, whether it beats it)."""
    mine, theirs = _runs(child), _runs(parent)
    both = [r for r in mine if r in theirs]
    if not both:
        assert child.fitness is not None and parent.fitness is not None
        return child.fitness - parent.fitness, child.fitness - parent.fitness > 1e-9
    child_mean = fmean(mine[r][0] for r in both)
    parent_mean = fmean(theirs[r][0] for r in both)
    delta = child_mean - parent_mean
    if delta > 1e-9:
        return delta, True
    usd = [(mine[r][1], theirs[r][1]) for r in both]
    if any(c is None or p is None for c, p in usd):
        return delta, False
    paired = (fmean(c for c, _ in usd if c is not None), fmean(p for _, p in usd if p is not None))
    return delta, cheaper_tie(child_mean, parent_mean, paired, tolerance) is not None


def _runs(ind: Individual) -> dict[tuple[str, int], tuple[float, float | None]]:
    """(task, repetition) -> (score, dollars) of `ind`'s valid training results."""
    return {(r.task_id, r.repetition): (r.score, r.cost_usd) for r in ind.split_results("train")}
