"""The promotion rules, bucket by bucket, and the rubric's relative scores."""

from __future__ import annotations

import pytest

from loopwright.harness import WEIGHTS, Bucket, Standing, promote
from loopwright.harness._rubric import composite, relative, rework_score


def bucket(complexity: str, *standings: tuple[str, float, str | None]) -> Bucket:
    rows = [Standing(loop=loop, standing=s, disqualified=d) for loop, s, d in standings]
    from loopwright.harness._promotion import winner

    return Bucket(complexity=complexity, briefs=["b"], standings=rows, winner=winner(rows))


def test_default_goes_to_the_loop_winning_most_buckets_overrides_only_where_it_differs() -> None:
    buckets = [
        bucket("simple", ("react", 0.9, None), ("hybrid", 0.8, None)),
        bucket("medium", ("react", 0.7, None), ("hybrid", 0.95, "failed the gate on tier small")),
        bucket("complex", ("react", 0.6, None), ("hybrid", 0.8, None)),
    ]
    p = promote(buckets)
    assert p.lines == [
        "engine.default_loop_type = react",
        "engine.loop_complexity_overrides = complex:hybrid",
    ]
    assert p.note == "react wins 2 of 3 buckets (simple, medium)"


def test_no_override_line_values_when_one_loop_wins_everywhere() -> None:
    p = promote([bucket("simple", ("react", 0.9, None)), bucket("complex", ("react", 0.5, None))])
    assert p.lines == ["engine.default_loop_type = react", "engine.loop_complexity_overrides ="]
    assert p.loop_complexity_overrides == {}


def test_empty_recommendation_when_no_loop_clears_the_gate_anywhere() -> None:
    p = promote([bucket("simple", ("react", 0.99, "failed the gate on tier small"))])
    assert p.empty and p.lines == [] and p.default_loop_type is None
    assert "no loop cleared the correctness gate" in p.note


def test_a_bucket_without_a_winner_falls_to_the_default() -> None:
    p = promote(
        [
            bucket("simple", ("plan_execute", 0.9, None)),
            bucket("complex", ("plan_execute", 0.9, "unavailable")),
        ]
    )
    assert p.default_loop_type == "plan_execute" and p.loop_complexity_overrides == {}
    assert "no loop cleared the gate in complex (the default applies there)" in p.note


def test_ties_in_buckets_won_go_to_the_higher_standing_then_the_name() -> None:
    p = promote(
        [
            bucket("simple", ("react", 0.8, None), ("hybrid", 0.7, None)),
            bucket("complex", ("react", 0.5, None), ("hybrid", 0.9, None)),
        ]
    )
    assert p.default_loop_type == "hybrid"
    assert p.loop_complexity_overrides == {"simple": "react"}


def test_relative_scores_and_weights() -> None:
    assert relative(200, 100) == 0.5 and relative(100, 100) == 1.0 and relative(50, 100) == 1.0
    assert relative(0, 0) == 1.0
    assert rework_score(0) == 1.0 and rework_score(1) == 0.5
    assert sum(WEIGHTS.values()) == pytest.approx(1.0)
    assert max(WEIGHTS, key=WEIGHTS.__getitem__) == "correctness"
    perfect = dict.fromkeys(WEIGHTS, 1.0)
    assert composite(perfect) == pytest.approx(1.0)
    # Correctness dominates: a perfect but wrong loop is below a right but costly one.
    wrong = perfect | {"correctness": 0.0}
    right = dict.fromkeys(WEIGHTS, 0.0) | {"correctness": 1.0}
    assert composite(right) > composite(wrong)


def test_a_cell_below_the_gate_has_no_composite_however_cheap() -> None:
    # Issue 31: a loop with correctness 0.00 that failed the gate was shown a composite of 0.45.
    cheap_but_wrong = dict.fromkeys(WEIGHTS, 1.0) | {"correctness": 0.0}
    just_below = dict.fromkeys(WEIGHTS, 1.0) | {"correctness": 0.89}
    assert composite(cheap_but_wrong) == 0.0
    assert composite(just_below) == 0.0
    assert composite(dict.fromkeys(WEIGHTS, 1.0) | {"correctness": 0.9}) > 0.9
