"""Family 2 of the sim's landscapes (`sim:SEED?family=2`): its spelling, its draw, that family 1
and plain `sim` are untouched, and that each downside it adds acts (at its extreme) and does
nothing (at its neutral value), always through what the model was given."""

from __future__ import annotations

import hashlib
import random
from pathlib import Path

import pytest

from loopwright.errors import ConfigError
from loopwright.evaluation import EvalSettings
from loopwright.models import SimModel, SimParams, model_factory
from loopwright.models._sim import SimOptions, parse_sim_spec
from loopwright.models._sim_landscape import LANDSCAPE_FAMILIES, RANGES_2, draw_landscape
from loopwright.models._sim_policy import BREAKING_KINDS, GOLD, Context, choose_variant
from loopwright.tasks import Benchmark, FailureKind, FlawedVariant
from tests.models.conftest import fresh_tools
from tests.models.driver import agent, render, run_node

ONE_PER_KIND = [FlawedVariant(name=k.value, kind=k, description="x") for k in FailureKind]
FAMILY_1_FIELDS = (
    *("base_error", "notes_factor", "guidance_factor", "repair", "notes_by_level"),
    *("guidance_by_kind", "review", "tests_first", "context_budget", "context_penalty"),
    "extra_reads",
)
# sha256 of family 1's draws for seeds 0-19 over the fields it had, computed on main before
# family 2 existed (commit 67b16ad): family 1 must never change.
FAMILY_1_DIGEST = "24fbbf6f0a300b570e5d72ff10c2dacb7674e94527f81f44ef5419c09b5457e2"


def _fingerprint(params: SimParams) -> str:
    values = [(f, getattr(params, f)) for f in FAMILY_1_FIELDS]
    return repr([(f, dict(v) if hasattr(v, "items") else v) for f, v in values])


def test_family_1_is_unchanged() -> None:
    drawn = "".join(_fingerprint(draw_landscape(s)) for s in range(20))
    assert hashlib.sha256(drawn.encode()).hexdigest() == FAMILY_1_DIGEST
    assert all(draw_landscape(s) == draw_landscape(s, 1) for s in range(5))
    neutral = draw_landscape(3)
    assert neutral.review_break[1] == 0.0 and neutral.repair_regress[1] == 0.0


def test_family_2_is_deterministic_and_differs_from_family_1() -> None:
    assert draw_landscape(5, 2) == draw_landscape(5, 2)
    two = [draw_landscape(s, 2) for s in range(10)]
    assert all(a != draw_landscape(s) for s, a in enumerate(two))
    assert len({p.repair[1] for p in two}) == 10
    # every downside is drawn on some landscapes and not on others
    assert {p.review_break[1] > 0 for p in two} == {True, False}
    assert {p.repair_regress[1] > 0 for p in two} == {True, False}
    assert {max(p.notes_by_level.values()) > 1 for p in two} == {True, False}
    assert {max(p.guidance_by_kind.values()) > 1 for p in two} == {True}
    assert {p.tests_first > 1 for p in two} == {True, False}
    assert len(RANGES_2) == 16 and LANDSCAPE_FAMILIES == {
        1: "sim-landscapes-1",
        2: "sim-landscapes-2",
    }
    with pytest.raises(ValueError):
        draw_landscape(1, 3)


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("sim:7?family=2", SimOptions(landscape=7, family=2)),
        ("sim:7?family=1", SimOptions(landscape=7)),
        ("sim:7?family=2&latency=0.05", SimOptions(latency_s=0.05, landscape=7, family=2)),
        ("sim:7?latency=0.05&family=2", SimOptions(latency_s=0.05, landscape=7, family=2)),
    ],
)
def test_family_specs_parse(spec: str, expected: SimOptions) -> None:
    assert parse_sim_spec(spec) == expected


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("sim:7?family=3", "family=N with N one of 1 (sim-landscapes-1), 2 (sim-landscapes-2)"),
        ("sim:7?family=x", "e.g. sim:7?family=2"),
        ("sim:7?family=", "e.g. sim:7?family=2"),
        ("sim?family=2", "sim:SEED?family=N"),
    ],
)
def test_a_bad_family_is_a_config_error_with_the_fix(spec: str, says: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_sim_spec(spec)
    assert caught.value.got == spec and says in (caught.value.fix or "")


def test_the_family_is_part_of_the_model_spec(mini: Benchmark) -> None:
    """The spec names the model in the run's settings and the fitness cache key
    (`evaluation.cache_key` hashes `settings.model`): family 2 never shares family 1's."""
    one, two = "sim:4", "sim:4?family=2"
    assert model_factory(two, benchmark=mini)(0).params == draw_landscape(4, 2)  # type: ignore[attr-defined]
    assert model_factory(one, benchmark=mini)(0).params == draw_landscape(4)  # type: ignore[attr-defined]
    settings = EvalSettings(model=two, sandbox="local", seed=0)
    back = EvalSettings.model_validate_json(settings.model_dump_json())
    assert back.model == two and parse_sim_spec(back.model) == SimOptions(landscape=4, family=2)
    assert EvalSettings(model=one, sandbox="local", seed=0) != settings


def _choices(ctx: Context, params: SimParams, n: int = 2000) -> list[tuple[str, str]]:
    rng = random.Random(0)
    picks = [choose_variant(1, ONE_PER_KIND, ctx, params, rng) for _ in range(n)]
    return [(c.variant, c.reason) for c in picks]


def test_review_break_breaks_a_correct_file_only_when_drawn() -> None:
    review = Context("Review the change.", 0.0, failing_feedback=False, previous=GOLD, review=True)
    silent = Context("", 0.0, failing_feedback=False, previous=GOLD, review=False)
    broken = _choices(review, SimParams(review_break={1: 1.0}))
    assert all(v != GOLD and r == "review-break" for v, r in broken)
    half = _choices(review, SimParams(review_break={1: 0.5}))
    assert sum(v != GOLD for v, _ in half) / len(half) == pytest.approx(0.5, abs=0.04)
    assert _choices(review, SimParams(review_break={1: 0.0})) == [(GOLD, "keep")] * 2000
    assert _choices(silent, SimParams(review_break={1: 1.0})) == [(GOLD, "keep")] * 2000


def test_repair_regress_turns_failed_repairs_into_breaking_kinds() -> None:
    relapse = Context("", 0.0, failing_feedback=True, previous="wrong_logic")
    no_repair = {1: 0.0}
    breaking = {k.value for k in BREAKING_KINDS}
    regress = _choices(relapse, SimParams(repair=no_repair, repair_regress={1: 1.0}))
    assert {v for v, _ in regress} == breaking
    plain = _choices(relapse, SimParams(repair=no_repair))
    assert {v for v, _ in plain} == {k.value for k in FailureKind}
    assert _choices(relapse, SimParams(repair=no_repair, repair_regress={1: 0.0})) == plain
    no_breaking_kind = [v for v in ONE_PER_KIND if v.kind not in BREAKING_KINDS]
    rng = random.Random(0)
    params = SimParams(repair=no_repair, repair_regress={1: 1.0})
    assert all(
        choose_variant(1, no_breaking_kind, relapse, params, rng).kind not in breaking
        for _ in range(200)
    )


def _error_rate(ctx: Context, params: SimParams) -> float:
    return sum(v != GOLD for v, _ in _choices(ctx, params, 4000)) / 4000


def test_notes_and_lessons_above_one_mislead() -> None:
    notes = Context("", 1.0, failing_feedback=False, previous=None)
    assert _error_rate(notes, SimParams(base_error={1: 0.4}, notes_by_level={1: 1.5})) == (
        pytest.approx(0.6, abs=0.03)
    )
    neutral = SimParams(base_error={1: 0.4}, notes_by_level={1: 1.0})
    no_notes = Context("", 0.0, failing_feedback=False, previous=None)
    assert _choices(notes, neutral) == _choices(no_notes, neutral)
    kind = FailureKind.WRONG_LOGIC
    lesson = Context("verify the result", 0.0, False, None)
    misled = SimParams(base_error={1: 0.6}, guidance_by_kind={kind.value: 2.0})
    assert _error_rate(lesson, misled) == pytest.approx(0.6 * 7 / 6, abs=0.03)
    capped = SimParams(base_error={1: 0.98}, guidance_by_kind={k.value: 2.0 for k in FailureKind})
    every = Context("edge case import signature complete regression verify", 0.0, False, None)
    assert _error_rate(every, capped) == 1.0


def test_a_reviewer_breaks_gold_through_its_prompt_only(mini: Benchmark, tmp_path: Path) -> None:
    """Through the tool contract: thorough's reviewer (offered edit_file, its prompt asks for a
    review) after a builder wrote the gold breaks it at review_break 1 and keeps it at 0."""
    task = mini.task("l1-slugify")
    builder, reviewer = agent("builder-only", "builder"), agent("thorough", "reviewer")
    outcomes = {}
    for p in (0.0, 1.0):
        params = SimParams(base_error={1: 0.0}, review_break={1: p})
        tools = fresh_tools(task, tmp_path / f"p{p}")
        model = SimModel(mini, 1, params)
        run_node(model, render(builder.prompt, task, tools), builder.tools, tools)
        run = run_node(model, render(reviewer.prompt, task, tools), reviewer.tools, tools)
        writes = [c for c in run.calls if c.name in ("edit_file", "write_file")]
        outcomes[p] = ([d.reason for d in model.decisions], len(writes))
    assert outcomes[0.0] == (["fresh", "keep"], 0)
    reasons, writes = outcomes[1.0]
    assert reasons == ["fresh", "review-break"] and writes > 0
