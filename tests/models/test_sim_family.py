"""The sim as a family of landscapes (`sim:SEED`): parsing, determinism, that plain `sim` is the
default landscape, and that each drawn sensitivity acts only through what the model was given."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from loopwright.errors import ConfigError
from loopwright.models import SimModel, SimParams, model_factory
from loopwright.models._sim import SimOptions, parse_sim_spec
from loopwright.models._sim_landscape import RANGES, draw_landscape
from loopwright.models._sim_policy import GOLD, Context, choose_variant
from loopwright.tasks import Benchmark, FailureKind, FlawedVariant
from tests.models.conftest import fresh_tools
from tests.models.driver import agent, render, run_node

ONE_PER_KIND = [FlawedVariant(name=k.value, kind=k, description="x") for k in FailureKind]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("sim", SimOptions()),
        ("sim:7", SimOptions(landscape=7)),
        ("sim?latency=0.05", SimOptions(latency_s=0.05)),
        ("sim:7?latency=0.05", SimOptions(latency_s=0.05, landscape=7)),
        ("simple", None),
        ("openai/gpt-4o", None),
    ],
)
def test_sim_specs_parse(spec: str, expected: SimOptions | None) -> None:
    assert parse_sim_spec(spec) == expected


@pytest.mark.parametrize("spec", ["sim:", "sim:x", "sim:-1", "sim:1.5", "sim:7?depth=2"])
def test_a_bad_sim_spec_is_a_config_error(spec: str) -> None:
    with pytest.raises(ConfigError):
        parse_sim_spec(spec)


def test_plain_sim_is_the_default_landscape() -> None:
    assert SimOptions().params() == SimParams()
    assert SimOptions(landscape=3).params() == draw_landscape(3)


def test_landscapes_are_deterministic_and_differ() -> None:
    assert draw_landscape(5) == draw_landscape(5)
    drawn = [draw_landscape(s) for s in range(10)]
    assert len({p.repair[1] for p in drawn}) == 10
    assert len({p.notes_factor for p in drawn}) == 10
    assert {p.review[1] > 0 for p in drawn} == {True, False}
    assert {p.tests_first > 1 for p in drawn} == {True, False}
    assert {p.context_penalty > 0 for p in drawn} == {True, False}
    assert len(RANGES) == 14


def test_factory_builds_the_landscape(mini: Benchmark) -> None:
    model = model_factory("sim:4", benchmark=mini)(0)
    assert isinstance(model, SimModel)
    assert model.params == draw_landscape(4)
    assert model_factory("sim", benchmark=mini)(0).params == SimParams()  # type: ignore[attr-defined]


def _rate(ctx: Context, params: SimParams, n: int = 3000) -> float:
    rng = random.Random(0)
    picks = [choose_variant(1, ONE_PER_KIND, ctx, params, rng) for _ in range(n)]
    return sum(c.variant != GOLD for c in picks) / n


def test_review_cue_fixes_earlier_flaws_only_when_the_landscape_rewards_it() -> None:
    reviewing = Context("", 0.0, failing_feedback=False, previous="wrong_logic", review=True)
    silent = Context("", 0.0, failing_feedback=False, previous="wrong_logic", review=False)
    rewards = SimParams(review={1: 0.5})
    assert _rate(reviewing, rewards) == pytest.approx(0.5, abs=0.03)
    assert _rate(silent, rewards) == 1.0
    assert _rate(reviewing, SimParams()) == 1.0


def test_tests_first_and_long_contexts_scale_a_fresh_error() -> None:
    base = SimParams(base_error={1: 0.5})
    plain = Context("", 0.0, failing_feedback=False, previous=None)
    tests_first = Context("Turn the instruction into tests.", 0.0, False, None)
    helped = SimParams(base_error={1: 0.5}, tests_first=0.6)
    assert _rate(tests_first, helped) == pytest.approx(0.3, abs=0.03)
    assert _rate(tests_first, base) == pytest.approx(0.5, abs=0.03)
    long = Context("", 0.0, False, None, context_chars=4 * 3000)
    penalised = SimParams(base_error={1: 0.5}, context_budget=1000, context_penalty=0.2)
    assert _rate(long, penalised) == pytest.approx(0.5 * 1.4, abs=0.03)
    assert _rate(plain, penalised) == pytest.approx(0.5, abs=0.03)


def test_guidance_by_kind_weighs_each_kind() -> None:
    kind = FailureKind.WRONG_LOGIC
    guided = Context("verify the result", 0.0, False, None)
    params = SimParams(base_error={1: 0.6}, guidance_by_kind={kind.value: 0.0})
    rng = random.Random(1)
    picks = [choose_variant(1, ONE_PER_KIND, guided, params, rng) for _ in range(2000)]
    assert not any(c.kind == kind.value for c in picks)


def test_extra_reads_cost_tokens_and_change_nothing(mini: Benchmark, tmp_path: Path) -> None:
    task = mini.task("l1-slugify")
    node = agent("builder-only", "builder")
    runs = {}
    for name, params in (("plain", SimParams()), ("reads", SimParams(extra_reads={"builder": 3}))):
        tools = fresh_tools(task, tmp_path / name)
        model = SimModel(mini, 2, params)
        runs[name] = (run_node(model, render(node.prompt, task, tools), node.tools, tools), model)
    (plain, m_plain), (reads, m_reads) = runs["plain"], runs["reads"]
    assert [d.variant for d in m_plain.decisions] == [d.variant for d in m_reads.decisions]
    rereads = [c for c in reads.calls if c.name == "read_file"]
    assert len(rereads) == len([c for c in plain.calls if c.name == "read_file"]) + 3


@pytest.mark.parametrize("spec", ["sim:7", "sim:7?latency=0.05", "sim"])
def test_a_landscape_is_offline_and_simulated(spec: str) -> None:
    from loopwright.models._choice import is_offline_spec
    from loopwright.store import is_simulated

    assert is_offline_spec(spec) and is_simulated(spec)
