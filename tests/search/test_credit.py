"""Credit assignment: children that beat their parents, per suggestion kind and operator."""

from __future__ import annotations

import pytest

from loopwright.search import Individual, Lineage, TaskResult
from loopwright.search._credit import CreditRow, CreditTable, credit_table
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


def runs(*scores: float, usd: float = 0.0) -> tuple[TaskResult, ...]:
    return tuple(
        result(s).model_copy(update={"task_id": f"t{i}", "cost_usd": usd})
        for i, s in enumerate(scores)
    )


def staged(ind_id: str, results: tuple[TaskResult, ...], kind: str = "k") -> Individual:
    guidance = Guidance(mode="suggestion", kind=kind)
    lineage = Lineage(parents=("p",), operator="node_remove", guidance=guidance)
    return Individual(id=ind_id, generation=1, workflow=SEED, lineage=lineage, results=results)


PARENT = Individual(id="p", generation=0, workflow=SEED, lineage=Lineage(operator="seed"),
                    results=runs(0.2, 0.2, 0.2, 1.0, 1.0, 1.0, usd=1.0))  # fmt: skip


def test_a_child_stopped_at_a_stage_is_compared_with_its_parent_on_the_stage_tasks() -> None:
    """The parent's mean over all its tasks is 0.6; a child run on the first three only
    (stopped at a stage) used to be set against it, so a child better on each of its tasks
    counted as a loss and one equal to it as a loss of 0.4."""
    better = staged("b", runs(0.3, 0.3, 0.3, usd=1.0))
    equal = staged("e", runs(0.2, 0.2, 0.2, usd=1.0), kind="k2")
    rows = {r.kind: r for r in credit_table([PARENT, better, equal]).rows}
    assert (rows["k"].beat_parent, rows["k"].mean_delta) == (1, 0.1)
    assert (rows["k2"].beat_parent, rows["k2"].mean_delta) == (0, 0.0)


def test_under_cost_aware_a_cheaper_tie_counts_as_beating_its_parent() -> None:
    cheap = staged("c", runs(0.2, 0.19, 0.2, usd=0.5))  # within 0.03, half the dollars
    close = staged("n", runs(0.2, 0.2, 0.2, usd=0.95), kind="k2")  # only 5 % cheaper
    poor = staged("w", runs(0.1, 0.1, 0.1, usd=0.1), kind="k3")  # cheap but worse
    pop = [PARENT, cheap, close, poor]
    with_tie = {r.kind: r.beat_parent for r in credit_table(pop, tolerance=0.03).rows}
    assert with_tie == {"k": 1, "k2": 0, "k3": 0}
    assert all(r.beat_parent == 0 for r in credit_table(pop).rows)  # objective holdout


def test_a_kind_never_tried_starts_from_its_operators_record() -> None:
    table = CreditTable((
        CreditRow("prompt_imports", "prompt_mutate", 6, 6, 0, -0.1),
        CreditRow("prompt_edge_cases", "prompt_mutate", 6, 6, 0, -0.1),
        CreditRow("add_gate", "gate_add", 4, 4, 4, 0.1),
    ))  # fmt: skip
    assert table.factor("prompt_signatures", "prompt_mutate") == pytest.approx(1 / 14 / 0.5)
    assert table.factor("insert_fixer", "node_insert") == 1.0  # an operator never tried
    assert table.factor("add_gate", "gate_add") == pytest.approx((4 + 2 * 5 / 6) / 6 / 0.5)
    # a tried kind is shrunk toward its operator's rate, not toward a coin flip
    assert table.factor("prompt_imports", "prompt_mutate") < CreditRow("k", "o", 6, 6, 0, 0).factor
