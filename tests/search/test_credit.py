"""Credit assignment: children that beat their parents, per suggestion kind and operator."""

from __future__ import annotations

from loopwright.search import Individual, Lineage, TaskResult
from loopwright.search._credit import CreditRow, credit_table
from loopwright.search._individual import Guidance
from tests.reflection.records import SEED


def result(score: float, split: str = "train") -> TaskResult:
    return TaskResult(task_id="t", repetition=0, split=split, score=score, resolved=score == 1.0,
                      invalid=False, failure_category="none", cost_usd=0.0, duration_s=1.0,
                      gate_loops=0, record_path="x")  # fmt: skip


def ind(ind_id: str, score: float | None, lineage: Lineage) -> Individual:
    results = () if score is None else (result(score),)
    return Individual(id=ind_id, generation=1, workflow=SEED, lineage=lineage, results=results)


def child(ind_id: str, score: float | None, op: str, kind: str | None, *parents: str) -> Individual:
    guidance = None if kind is None else Guidance(mode="suggestion", kind=kind)
    return ind(ind_id, score, Lineage(parents=parents, operator=op, guidance=guidance))


def test_children_that_beat_their_best_parent_count_per_kind_and_operator() -> None:
    pop = [
        ind("seed", 0.5, Lineage(operator="seed")),
        ind("design", 0.7, Lineage(parents=("seed",), operator="design:thorough")),
        child("a", 0.9, "gate_add", "add_gate", "seed"),
        child("b", 0.4, "gate_add", "add_gate", "seed"),
        child("c", 0.8, "crossover", "crossover", "seed", "design"),  # beats 0.7
        child("d", 0.7, "crossover", "crossover", "seed", "design"),  # ties: no win
        child("e", None, "node_insert", "insert_researcher", "seed"),  # not evaluated yet
        child("f", 0.6, "model_tier_change", None, "seed"),  # random strategy
        ind("h", 0.6, Lineage(parents=("seed",), operator="prompt_mutate")),
    ]
    rows = {(r.kind, r.operator): r for r in credit_table(pop).rows}
    assert rows[("add_gate", "gate_add")] == CreditRow("add_gate", "gate_add", 2, 2, 1, 0.15)
    assert rows[("crossover", "crossover")].beat_parent == 1
    assert rows[("insert_researcher", "node_insert")].evaluated == 0
    assert rows[("random", "model_tier_change")].beat_parent == 1
    assert ("seed", "seed") not in rows and all(not k[1].startswith("design") for k in rows)
    holdout_only = ind("g", None, Lineage(parents=("seed",), operator="gate_add"))
    holdout_only = holdout_only.model_copy(update={"results": (result(1.0, "holdout"),)})
    assert credit_table([*pop, holdout_only]).factor("random", "gate_add") == 1.0


def test_the_factor_is_a_smoothed_win_rate_over_a_coin_flip() -> None:
    assert CreditRow("k", "o", 0, 0, 0, None).factor == 1.0
    assert CreditRow("k", "o", 8, 8, 8, 0.2).factor == 1.8
    assert CreditRow("k", "o", 8, 8, 0, -0.2).factor == 0.2
    assert credit_table([]).factor("k", "o") == 1.0
