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
    """The run's spend: evaluations, dollars (results plus meta calls), wall time, and how many
    evaluations and meta calls had no price (their cost is not in the dollars)."""

    def __init__(self, spent: Spent, individuals: Iterable[Individual]) -> None:
        self._wall_base = spent.wall_s
        self._clock = time.monotonic()
        results = [r for i in individuals for r in i.results]
        self._usd = sum((Fraction(r.cost_usd or 0.0) for r in results), Fraction(0))
        self._unpriced = sum(r.cost_usd is None for r in results)
        self._meta = Fraction(spent.meta_usd)
        self._meta_unpriced = spent.unpriced_meta_calls

    def spent(self, recorded: Spent) -> Spent:
        """`recorded` with the wall time now."""
        wall = self._wall_base + (time.monotonic() - self._clock)
        return recorded.model_copy(update={"wall_s": wall})

    def add_result(self, result: TaskResult, recorded: Spent) -> Spent:
        """`recorded` after one more evaluation costing `result.cost_usd`."""
        self._usd += Fraction(result.cost_usd or 0.0)
        self._unpriced += result.cost_usd is None
        spent = self.spent(recorded)
        return Spent(
            evaluations=spent.evaluations + 1, usd=float(self._usd + self._meta),
            wall_s=spent.wall_s, meta_usd=float(self._meta),
            unpriced_evaluations=self._unpriced, unpriced_meta_calls=self._meta_unpriced,
        )  # fmt: skip

    def count_meta(self, ledger: CostLedger | None, recorded: Spent) -> Spent:
        """`recorded` with the meta roles' spend taken from the run ledger (every `meta:` call
        so far, also those made after the last checkpoint); unchanged without a ledger file."""
        if ledger is None or ledger.path is None or not ledger.path.is_file():
            return recorded
        records = read_ledger(ledger.path, torn_tail=True)
        meta = [r for r in records if role_kind(r.labels.role) == "meta"]
        self._meta = sum((Fraction(r.cost_usd or 0.0) for r in meta), Fraction(0))
        self._meta_unpriced = sum(r.cost_usd is None and r.ok for r in meta)
        return recorded.model_copy(
            update={"usd": float(self._usd + self._meta), "meta_usd": float(self._meta),
                    "unpriced_meta_calls": self._meta_unpriced}
        )  # fmt: skip
