"""Spend accounting and the budgets that bound evaluation.

The meter keeps the exact sum of every result's cost (a `Fraction`: the same whatever order
results arrived in), the meta roles' spend read from the run ledger, and the wall clock since
the run (or its resume) started. The budgets that bound evaluation are checked by the evaluation
round (`_evaluation.exhausted`, `_evaluation.room`).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from fractions import Fraction

from loopwright.models import CostLedger, read_ledger, role_kind
from loopwright.search._individual import Individual, TaskResult
from loopwright.search._progress import Spent

__all__ = ["SpendMeter"]


class SpendMeter:
    """The run's spend: evaluations, dollars (results plus meta calls), wall time."""

    def __init__(self, spent: Spent, individuals: Iterable[Individual]) -> None:
        self._wall_base = spent.wall_s
        self._clock = time.monotonic()
        self._usd = sum(
            (Fraction(r.cost_usd or 0.0) for i in individuals for r in i.results), Fraction(0)
        )
        self._meta = Fraction(spent.meta_usd)

    def spent(self, recorded: Spent) -> Spent:
        """`recorded` with the wall time now."""
        wall = self._wall_base + (time.monotonic() - self._clock)
        return recorded.model_copy(update={"wall_s": wall})

    def add_result(self, result: TaskResult, recorded: Spent) -> Spent:
        """`recorded` after one more evaluation costing `result.cost_usd`."""
        self._usd += Fraction(result.cost_usd or 0.0)
        spent = self.spent(recorded)
        return Spent(
            evaluations=spent.evaluations + 1, usd=float(self._usd + self._meta),
            wall_s=spent.wall_s, meta_usd=float(self._meta),
        )  # fmt: skip

    def count_meta(self, ledger: CostLedger | None, recorded: Spent) -> Spent:
        """`recorded` with the meta roles' spend taken from the run ledger (every `meta:` call
        so far, also those made after the last checkpoint); unchanged without a ledger file."""
        if ledger is None or ledger.path is None or not ledger.path.is_file():
            return recorded
        records = read_ledger(ledger.path, torn_tail=True)
        meta = [r.cost_usd or 0.0 for r in records if role_kind(r.labels.role) == "meta"]
        self._meta = sum((Fraction(c) for c in meta), Fraction(0))
        return recorded.model_copy(
            update={"usd": float(self._usd + self._meta), "meta_usd": float(self._meta)}
        )
