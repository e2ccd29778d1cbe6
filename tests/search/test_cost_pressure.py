"""Cost pressure during search under `objective: cost-aware` (docs/evolve.md, "Cost as an
objective"): near-best training fitness counts as a tie in selection, broken by dollars per run;
under the default objective selection is unchanged."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from loopwright.errors import ConfigError
from loopwright.search import cost_aware_order
from loopwright.search._individual import Individual, Lineage, TaskResult
from loopwright.search._selection import tournament
from loopwright.search.strategies._parents import TournamentParents
from loopwright.search.strategies._survivors import Elitism
from loopwright.workflow import builtin_workflow

from .test_engine import TRAIN, make_config, make_engine

SEED_WF = builtin_workflow("builder-only")


def ind(ident: str, scores: tuple[float, ...], usd: float, generation: int = 1) -> Individual:
    results = tuple(
        TaskResult(
            task_id=task, repetition=0, split="train", score=s, resolved=s == 1.0,
            invalid=False, failure_category="none", cost_usd=usd, duration_s=1.0,
            gate_loops=0, record_path=f"r/{ident}/{task}",
        )
        for task, s in zip(TRAIN, scores, strict=True)
    )  # fmt: skip
    return Individual(
        id=ident, generation=generation, workflow=SEED_WF, lineage=Lineage(operator="seed"),
        results=results,
    )  # fmt: skip


BEST = ind("best", (1.0, 1.0), 0.40)  # fittest, dear
NEAR = ind("near", (1.0, 0.96), 0.10)  # 0.02 below the best, a quarter of the price
FAR = ind("far", (1.0, 0.80), 0.01)  # 0.10 below: cheap, but not a tie


def test_cost_aware_order_puts_the_cheapest_near_best_first() -> None:
    assert [i.id for i in cost_aware_order([BEST, NEAR, FAR], 0.03)] == ["near", "best", "far"]


def test_without_a_tolerance_the_order_is_fitness_first() -> None:
    assert [i.id for i in cost_aware_order([FAR, NEAR, BEST], None)] == ["best", "near", "far"]


def test_a_zero_tolerance_breaks_only_exact_ties_by_cost() -> None:
    twin = ind("twin", (1.0, 1.0), 0.05)
    assert [i.id for i in cost_aware_order([BEST, NEAR, twin], 0.0)] == ["twin", "best", "near"]


def test_tournament_with_a_tolerance_takes_the_cheaper_near_best_with_the_same_draws() -> None:
    plain, costed = random.Random(3), random.Random(3)
    assert tournament([BEST, NEAR, FAR], 3, plain).id == "best"
    assert tournament([BEST, NEAR, FAR], 3, costed, tolerance=0.03).id == "near"
    assert plain.getstate() == costed.getstate()


def _engine_with(tmp_path: Path, objective: str) -> object:
    """An engine whose current population is BEST and NEAR (both fully trained)."""
    engine = make_engine(tmp_path / objective, make_config(objective=objective))
    now = engine.now
    for i in (BEST, NEAR):
        now.individuals[i.id] = i
    now.update(population=(BEST.id, NEAR.id))
    return engine


def test_cost_aware_run_leads_keeps_and_breeds_from_the_cheaper_near_best(tmp_path: Path) -> None:
    engine = _engine_with(tmp_path, "cost-aware")
    now = engine.now  # type: ignore[attr-defined]
    assert now.leader().id == "near"
    assert [v.id for v in Elitism().survivors(now, now.contenders())] == ["near"]
    parent = TournamentParents(tournament).select(now, now.contenders())
    assert parent.id == "near"  # tournament_k 3 draws both


def test_holdout_objective_selects_as_before(tmp_path: Path) -> None:
    engine = _engine_with(tmp_path, "holdout")
    now = engine.now  # type: ignore[attr-defined]
    assert now.leader().id == "best"
    assert [v.id for v in Elitism().survivors(now, now.contenders())] == ["best"]
    assert TournamentParents(tournament).select(now, now.contenders()).id == "best"


@pytest.mark.parametrize("bad", [-0.01, 1.5])
def test_cost_tolerance_outside_zero_one_is_a_config_error(bad: float) -> None:
    with pytest.raises(ConfigError, match="cost_tolerance"):
        make_config(objective="cost-aware", cost_tolerance=bad)
