"""The sim's error model, measured over many seeds: the effects docs/sim-model.md promises."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loopwright.models import GUIDANCE_KEYWORDS, SimModel, SimParams
from loopwright.models._sim_policy import GOLD, Context, choose_variant
from loopwright.tasks import Benchmark, FailureKind, FlawedVariant, Task
from tests.models.conftest import fresh_tools
from tests.models.driver import agent, render, run_node

N = 4000
ONE_PER_KIND = [FlawedVariant(name=k.value, kind=k, description="x") for k in FailureKind]


def _rate(
    ctx: Context, level: int = 1, params: SimParams | None = None, kind: str | None = None
) -> float:
    rng = random.Random(0)
    picks = [choose_variant(level, ONE_PER_KIND, ctx, params or SimParams(), rng) for _ in range(N)]
    return sum(c.variant != GOLD and (kind is None or c.kind == kind) for c in picks) / N


def _fresh(guidance: str = "", coverage: float = 0.0) -> Context:
    return Context(guidance, coverage, failing_feedback=False, previous=None)


def test_error_rate_matches_the_documented_formula() -> None:
    params = SimParams()
    assert _rate(_fresh(), 1) == pytest.approx(params.base_error[1], abs=0.03)
    expected = params.base_error[2] * params.notes_factor
    assert _rate(_fresh(coverage=1.0), 2) == pytest.approx(expected, abs=0.03)


def test_notes_naming_the_files_lower_the_error_rate() -> None:
    assert _rate(_fresh(coverage=1.0)) < _rate(_fresh(coverage=0.5)) < _rate(_fresh())


def test_level_two_errs_more_than_level_one() -> None:
    assert _rate(_fresh(), 2) > _rate(_fresh(), 1) + 0.2


@pytest.mark.parametrize("kind", list(FailureKind))
def test_guidance_keywords_lower_their_kind(kind: FailureKind) -> None:
    guided = _fresh(f"Please mind this: {GUIDANCE_KEYWORDS[kind][0]}.")
    assert _rate(guided, kind=kind.value) < 0.8 * _rate(_fresh(), kind=kind.value)
    assert _rate(guided) < _rate(_fresh())


def test_failing_feedback_after_a_flaw_repairs_at_the_repair_rate() -> None:
    params = SimParams()
    for level in (1, 2):
        ctx = Context("", 0.0, failing_feedback=True, previous="wrong_logic")
        assert 1 - _rate(ctx, level) == pytest.approx(params.repair[level], abs=0.03)


def test_without_feedback_or_after_gold_it_keeps_what_it_wrote() -> None:
    rng = random.Random(0)
    state = rng.getstate()
    flawed_quiet = Context("", 0.0, failing_feedback=False, previous="wrong_logic")
    assert choose_variant(2, ONE_PER_KIND, flawed_quiet, SimParams(), rng).reason == "keep"
    gold_failing = Context("", 0.0, failing_feedback=True, previous=GOLD)
    assert choose_variant(2, ONE_PER_KIND, gold_failing, SimParams(), rng).variant == GOLD
    assert rng.getstate() == state  # keeping draws nothing


@given(
    seed=st.integers(0, 2**32),
    coverage=st.floats(0.0, 1.0),
    kinds=st.sets(st.sampled_from(list(GUIDANCE_KEYWORDS))),
)
@settings(max_examples=200, deadline=None)
def test_a_better_context_errs_only_where_the_worse_one_did(
    seed: int, coverage: float, kinds: set[FailureKind]
) -> None:
    """Common random numbers, coupled: with the same draws, more notes and more guidance are
    never wrong where the bare context was right, and when both are wrong they make the same
    mistake unless the better context's guidance was aimed at the bare one's mistake."""
    guidance = " ".join(GUIDANCE_KEYWORDS[k][0] for k in sorted(kinds))
    bare = choose_variant(1, ONE_PER_KIND, _fresh(), SimParams(), random.Random(seed))
    better = choose_variant(
        1, ONE_PER_KIND, _fresh(guidance, coverage), SimParams(), random.Random(seed)
    )
    if bare.variant == GOLD:
        assert better.variant == GOLD
    elif better.variant != GOLD and FailureKind(bare.kind) not in kinds:
        assert better.variant == bare.variant


def test_params_reject_probabilities_out_of_range() -> None:
    with pytest.raises(ValueError, match="base_error"):
        SimParams(base_error={1: 1.5})
    with pytest.raises(ValueError, match="notes_factor"):
        SimParams(notes_factor=-0.1)
    assert (
        SimParams(base_error={1: 0.2}).for_level(SimParams(base_error={1: 0.2}).base_error, 2)
        == 0.2
    )


# Through the model and the tool contract (run_tests answers without running pytest).

SEEDS = range(30)
NEUTRAL = "Read {instruction_file}, implement it in {workspace}, run the tests."


def _builder_flaws(
    mini: Benchmark, tasks: list[Task], tmp: Path, prompt: str, study: bool
) -> list[str]:
    builder = agent("builder-only", "builder")
    variants = []
    for task in tasks:
        for seed in SEEDS:
            tools = fresh_tools(task, tmp, quiet=True)
            model = SimModel(mini, seed)
            if study:
                node = agent("research-build-verify", "study")
                run_node(model, render(node.prompt, task, tools), node.tools, tools)
            run_node(model, render(prompt, task, tools), builder.tools, tools)
            variants.append(model.decisions[-1].variant or "none")
    return variants


def _flawed_share(variants: list[str]) -> float:
    return sum(v != GOLD for v in variants) / len(variants)


def _level(mini: Benchmark, level: int) -> list[Task]:
    return [t for t in mini.tasks if t.level == level]


def test_study_notes_lower_the_builders_flaw_rate(mini: Benchmark, tmp_path: Path) -> None:
    prompt = agent("research-build-verify", "builder").prompt
    alone = _flawed_share(_builder_flaws(mini, _level(mini, 2), tmp_path, prompt, study=False))
    studied = _flawed_share(_builder_flaws(mini, _level(mini, 2), tmp_path, prompt, study=True))
    assert studied < alone - 0.2


def test_level_two_tasks_get_more_flaws(mini: Benchmark, tmp_path: Path) -> None:
    one = _flawed_share(_builder_flaws(mini, _level(mini, 1), tmp_path, NEUTRAL, study=False))
    two = _flawed_share(_builder_flaws(mini, _level(mini, 2), tmp_path, NEUTRAL, study=False))
    assert two > one + 0.15


def test_edge_case_guidance_lowers_edge_case_flaws(mini: Benchmark, tmp_path: Path) -> None:
    tasks = [t for t in mini.tasks if any(v.kind == "missed_edge_case" for v in t.spec.flawed)]
    edge = {v.name for t in tasks for v in t.spec.flawed if v.kind == "missed_edge_case"}
    guided = NEUTRAL + " Handle every edge case and boundary."
    plain = _builder_flaws(mini, tasks, tmp_path, NEUTRAL, study=False)
    careful = _builder_flaws(mini, tasks, tmp_path, guided, study=False)
    assert sum(v in edge for v in careful) < 0.85 * sum(v in edge for v in plain)
