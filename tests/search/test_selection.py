from __future__ import annotations

import random

import pytest

from loopwright.search._individual import Individual, Lineage, TaskResult
from loopwright.search._selection import selection_key, tournament
from loopwright.workflow import builtin_workflow

_WF = builtin_workflow("builder-only")


def ind(
    ident: str,
    scores: tuple[float, ...] = (),
    cost: float | None = 0.0,
    loops: int = 0,
) -> Individual:
    results = tuple(
        TaskResult(
            task_id=f"t{i}",
            repetition=0,
            split="train",
            score=s,
            resolved=s == 1.0,
            invalid=False,
            failure_category="none",
            cost_usd=cost,
            duration_s=1.0,
            gate_loops=loops,
            record_path=f"r/{ident}/{i}",
        )
        for i, s in enumerate(scores)
    )
    return Individual(
        id=ident, generation=0, workflow=_WF, lineage=Lineage(operator="seed"), results=results
    )


def test_tournament_with_full_draw_picks_the_fittest() -> None:
    pop = [ind("a", (0.2,)), ind("b", (0.9,)), ind("c", (0.5,)), ind("d")]
    for seed in range(20):
        assert tournament(pop, k=10, rng=random.Random(seed)).id == "b"


def test_tournament_picks_the_best_of_the_drawn() -> None:
    pop = [ind(f"i{n}", (n / 20,)) for n in range(20)]
    rng, mirror = random.Random(7), random.Random(7)
    for _ in range(50):
        winner = tournament(pop, k=3, rng=rng)
        drawn = mirror.sample(pop, 3)
        assert winner.id == max(drawn, key=lambda i: i.fitness or 0.0).id


def test_tournament_is_deterministic_for_a_seed() -> None:
    pop = [ind(f"i{n}", (random.Random(n).random(),)) for n in range(30)]
    first = [tournament(pop, 4, random.Random(3)).id for _ in range(5)]
    again = [tournament(pop, 4, random.Random(3)).id for _ in range(5)]
    assert first == again
    rng_a, rng_b = random.Random(11), random.Random(11)
    assert [tournament(pop, 4, rng_a).id for _ in range(20)] == [
        tournament(pop, 4, rng_b).id for _ in range(20)
    ]


def test_none_fitness_ranks_last() -> None:
    pop = [ind("unevaluated"), ind("zero", (0.0,))]
    assert tournament(pop, 2, random.Random(0)).id == "zero"


@pytest.mark.parametrize(
    ("a", "b", "winner"),
    [
        (ind("x", (0.5,), cost=0.3), ind("y", (0.5,), cost=0.1), "y"),
        (ind("x", (0.5,), cost=None), ind("y", (0.5,), cost=5.0), "y"),
        (ind("x", (0.5,), cost=0.1, loops=2), ind("y", (0.5,), cost=0.1, loops=1), "y"),
        (ind("y", (0.5,), cost=0.1, loops=1), ind("x", (0.5,), cost=0.1, loops=1), "x"),
    ],
    ids=["lower-cost", "unknown-cost-last", "fewer-gate-loops", "lower-id"],
)
def test_tournament_tie_breaks(a: Individual, b: Individual, winner: str) -> None:
    assert tournament([a, b], 2, random.Random(0)).id == winner
    assert tournament([b, a], 2, random.Random(1)).id == winner


def test_k_is_capped_at_the_population_size() -> None:
    pop = [ind("a", (0.1,)), ind("b", (0.3,))]
    assert tournament(pop, 99, random.Random(0)).id == "b"


def test_empty_population_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="empty"):
        tournament([], 3, random.Random(0))


def test_selection_key_orders_fitness_first() -> None:
    assert selection_key(ind("a", (0.9,), cost=9.0)) < selection_key(ind("b", (0.1,), cost=0.0))
