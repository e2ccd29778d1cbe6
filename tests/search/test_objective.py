"""Cost as an objective: the holdout/cost front and the cost-aware winner (docs/evolve.md)."""

from __future__ import annotations

from pathlib import Path

from loopwright.search import Individual, Lineage, TaskResult, evolve_result
from loopwright.search._checkpoint import load_checkpoint
from loopwright.search._objective import choose_winner, cost_front, front_points
from loopwright.workflow import builtin_workflow

from .test_engine import make_config, make_engine

WF = builtin_workflow("builder-only")
TASKS = [f"t{i}" for i in range(8)]


def holdout(task_id: str, score: float, usd: float | None) -> TaskResult:
    return TaskResult(
        task_id=task_id, repetition=0, split="holdout", score=score, resolved=score == 1.0,
        invalid=False, failure_category="none", cost_usd=usd, duration_s=1.0, gate_loops=0,
        record_path=f"gen_0/x/{task_id}/rep_0",
    )  # fmt: skip


def ind(ind_id: str, scores: list[float], usd: float | None) -> Individual:
    results = tuple(holdout(t, s, usd) for t, s in zip(TASKS, scores, strict=True))
    return Individual(id=ind_id, generation=0, workflow=WF, lineage=Lineage(operator="seed"),
                      results=results)  # fmt: skip


BEST = ind("best", [1.0] * 8, 0.40)
CLOSE = ind("close", [1.0] * 7 + [0.8], 0.10)  # within noise of the best, a quarter the price
POOR = ind("poor", [0.2] * 8, 0.05)  # cheapest, clearly worse
DOMINATED = ind("dominated", [0.9] * 8, 0.50)  # worse and dearer than the best


def test_the_front_keeps_the_undominated_points_cheapest_first() -> None:
    front = cost_front([BEST, CLOSE, POOR, DOMINATED])
    assert [p.individual_id for p in front] == ["poor", "close", "best"]


def test_within_best_follows_the_paired_interval() -> None:
    marks = {p.individual_id: p.within_best for p in front_points([BEST, CLOSE, POOR, DOMINATED])}
    assert marks == {"best": True, "close": True, "poor": False, "dominated": False}


def test_points_report_mean_dollars_per_task_and_unknown_costs() -> None:
    points = {p.individual_id: p for p in front_points([BEST, ind("unpriced", [1.0] * 8, None)])}
    assert points["best"].usd_per_task == 0.40 and points["best"].n_tasks == 8
    assert points["unpriced"].usd_per_task is None
    assert points["best"].on_front and not points["unpriced"].on_front


def test_individuals_without_holdout_results_are_not_points() -> None:
    bare = Individual(id="bare", generation=0, workflow=WF, lineage=Lineage(operator="seed"))
    assert front_points([bare]) == []


def test_cost_aware_run_picks_the_cheapest_point_within_the_best(tmp_path: Path) -> None:
    config = make_config(
        objective="cost-aware", holdout_tasks=("l1-roman-numerals", "l2-fsm-guards")
    )
    make_engine(tmp_path / "run", config).run()
    cp = load_checkpoint(tmp_path / "run")
    result = evolve_result(cp)
    within = [p for p in result.points if p.within_best]
    cheapest = min(within, key=lambda p: (p.usd_per_task or 0.0, -p.holdout, p.individual_id))
    assert cp.winner_id == cheapest.individual_id == result.winner.id
    assert result.objective == "cost-aware"
    leader = cp.summaries[-1].best_id
    holdout_only = cp.model_copy(
        update={"config": cp.config.model_copy(update={"objective": "holdout"})}
    )
    assert choose_winner(holdout_only, leader) == leader
