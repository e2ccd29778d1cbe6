"""Cost as an objective: the holdout/cost front and the cost-aware winner (docs/evolve.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from loopwright.cli import main
from loopwright.search import Checkpoint, Individual, Lineage, TaskResult, evolve_result
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


@pytest.fixture(scope="module")
def cost_aware_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One small cost-aware run on mini with sim, shared by the tests below."""
    run_dir = tmp_path_factory.mktemp("objective") / "run"
    holdout = ("l1-roman-numerals", "l2-fsm-guards")
    make_engine(run_dir, make_config(objective="cost-aware", holdout_tasks=holdout)).run()
    return run_dir


@pytest.fixture
def cost_aware_run(cost_aware_dir: Path) -> Checkpoint:
    return load_checkpoint(cost_aware_dir)


def test_cost_aware_run_picks_the_cheapest_point_within_the_best(
    cost_aware_run: Checkpoint,
) -> None:
    cp = cost_aware_run
    result = evolve_result(cp)
    within = [p for p in result.points if p.within_best]
    cheapest = min(within, key=lambda p: (p.usd_per_task or 0.0, -p.holdout, p.individual_id))
    assert cp.winner_id == cheapest.individual_id == result.winner.id
    assert result.objective == "cost-aware"


def test_choose_winner_takes_the_cheapest_within_the_best_only_when_cost_aware(
    cost_aware_run: Checkpoint,
) -> None:
    synthetic = {i.id: i for i in (BEST, CLOSE, POOR, DOMINATED)}
    aware = cost_aware_run.model_copy(update={"individuals": synthetic})
    assert choose_winner(aware, "dominated") == "close"
    holdout = aware.model_copy(
        update={"config": aware.config.model_copy(update={"objective": "holdout"})}
    )
    assert choose_winner(holdout, "dominated") == "dominated"


def test_status_prints_the_front_and_the_winner(
    cost_aware_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["outer-loop", "status", "--run-dir", str(cost_aware_dir)]) == 0
    out = capsys.readouterr().out
    assert "holdout vs cost (objective: cost-aware" in out
    winner = load_checkpoint(cost_aware_dir).winner_id
    assert winner is not None
    line = next(ln for ln in out.splitlines() if ln.strip().startswith(winner[:8]))
    assert line.rstrip().endswith("winner")


def test_the_engine_records_the_objectives_choice_as_the_winner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chosen: list[str] = []

    def choose_seed(checkpoint: Checkpoint, leader_id: str) -> str:
        chosen.append(leader_id)
        return checkpoint.seed_id

    monkeypatch.setattr("loopwright.search.strategies._state.choose_winner", choose_seed)
    make_engine(tmp_path / "run", make_config(budgets={"max_generations": 1})).run()
    cp = load_checkpoint(tmp_path / "run")
    assert chosen and cp.winner_id == cp.seed_id


def test_a_point_far_below_the_best_does_not_tie_it_even_inside_a_wide_interval() -> None:
    # 0.0 and 0.9 on two of eight tasks, equal elsewhere: no task shows it better, so the
    # interval's upper end is 0, but its mean is 0.1375 below the best's
    far = ind("far", [1.0] * 6 + [0.0, 0.9], 0.01)
    loose = {p.individual_id: p.within_best for p in front_points([BEST, far])}
    assert loose["far"]  # the interval alone calls it a tie: this was the winner before
    tight = {p.individual_id: p.within_best for p in front_points([BEST, far], tolerance=0.03)}
    assert not tight["far"] and tight["best"]


def test_choose_winner_skips_the_cheap_point_far_below_the_best(cost_aware_run: Checkpoint) -> None:
    far = ind("far", [1.0] * 6 + [0.0, 0.9], 0.01)
    synthetic = {i.id: i for i in (BEST, CLOSE, far)}
    aware = cost_aware_run.model_copy(update={"individuals": synthetic})
    assert choose_winner(aware, "best") == "close"


def test_the_holdout_round_measures_the_fittest_as_well_as_a_cheaper_leader() -> None:
    from types import SimpleNamespace

    from loopwright.search.strategies._evaluation import EvaluationRound

    asked: list[list[str]] = []

    class Round(EvaluationRound):
        def evaluate(self, state, split, ids, *, runs=None):  # type: ignore[no-untyped-def]
            asked.append([split, *ids])
            return None

    def state(leader: str, fittest: str, generation: int):  # type: ignore[no-untyped-def]
        return SimpleNamespace(
            leader=lambda by_cost=True: SimpleNamespace(id=leader if by_cost else fittest),
            checkpoint=SimpleNamespace(generation=generation, seed_id="seed"),
        )  # fmt: skip

    round_ = Round(evaluator=None)  # type: ignore[arg-type]
    round_.holdout(state("cheap", "fit", 3))  # type: ignore[arg-type]
    round_.holdout(state("same", "same", 3))  # type: ignore[arg-type]
    round_.holdout(state("cheap", "fit", 0))  # type: ignore[arg-type]
    assert asked == [
        ["holdout", "cheap", "fit"], ["holdout", "same"], ["holdout", "seed", "cheap", "fit"],
    ]  # fmt: skip
