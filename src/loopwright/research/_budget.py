"""The research run's dollar budget (`max_usd` in config.yaml): what the run has spent so far.

The spend is what was paid, every gateway call in ROOT/ledger.jsonl (meta phases and agents,
every attempt, a discarded one too), plus the offline part of each committed iteration's agent
runs (sim's made-up price; the ledger holds no offline call). The gateway itself refuses a call
once the ledger reaches the budget; the loop checks the whole spend before each iteration.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from loopwright._caller import spoken
from loopwright.errors import ConfigError
from loopwright.models import LEDGER_FILE, CostLedger
from loopwright.research._config import WorkDir
from loopwright.research._record import load_iter_record

__all__ = ["Spend", "budget_fix", "check_budget", "run_spend"]


@dataclass(frozen=True, slots=True)
class Spend:
    """Dollars spent by a research run: `paid_usd` (the ledger's gateway calls) and
    `offline_usd` (committed iterations' runs on offline models, at simulated prices)."""

    paid_usd: float
    offline_usd: float

    @property
    def total_usd(self) -> float:
        return self.paid_usd + self.offline_usd

    def reached(self, max_usd: float | None) -> bool:
        """True when there is a budget and the whole spend has reached it."""
        return max_usd is not None and self.total_usd >= max_usd

    def refusing(self, max_usd: float | None) -> bool:
        """True when the gateway refuses calls now: the paid part has reached the budget."""
        return max_usd is not None and self.paid_usd >= max_usd

    def line(self, max_usd: float | None) -> str:
        """`$S spent of a $B budget` (or `$S spent, no budget`), saying when part of it is at
        simulated prices."""
        of = f" of a ${max_usd:g} budget" if max_usd is not None else ", no budget"
        sim = f" (${self.offline_usd:.4f} at simulated prices)" if self.offline_usd else ""
        return f"${self.total_usd:.4f} spent{of}{sim}"


def check_budget(max_usd: float | None) -> None:
    """ConfigError unless `max_usd` is None (no budget) or a positive number of dollars."""
    if max_usd is not None and not max_usd > 0:
        raise ConfigError(
            "a dollar budget must be positive",
            got=f"{spoken('max_usd', '--max-usd')} {max_usd:g}",
            fix=spoken(
                "pass max_usd with a positive number of dollars, e.g. max_usd=5",
                "pass --max-usd with a positive number of dollars, e.g. --max-usd 5",
            ),
        )


def run_spend(wd: WorkDir) -> Spend:
    """The spend of the run in `wd`, read from its ledger and committed records.
    Deterministic given those files."""
    paid = CostLedger(wd.root / LEDGER_FILE).spent_usd()
    offline = sum(
        load_iter_record(wd.iter_dir(n) / "record.json").offline_cost_usd for n in wd.committed()
    )
    return Spend(paid_usd=paid, offline_usd=offline)


def budget_fix(root: Path, max_usd: float, spent_usd: float) -> str:
    """How to continue a run the budget `max_usd` stopped after `spent_usd`: the command, with
    twice the larger of the two (rounded up to the cent) as the new budget."""
    more = math.ceil(max(max_usd, spent_usd) * 200) / 100
    return "raise the budget: " + spoken(
        f"loopwright.research({str(root)!r}, max_usd={more:g})",
        f"loopwright research run --dir {root} --max-usd {more:g}",
    )
