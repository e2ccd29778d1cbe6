"""The guided strategy: random without a report, suggestions carried out at their targets,
exploration, satisfied and frozen targets, crossover, and credit shifting the weights."""

from __future__ import annotations

import random
from typing import Any

import pytest

from loopwright.errors import ConfigError
from loopwright.reflection import ReflectionReport
from loopwright.search import EvolveConfig, Individual, Lineage
from loopwright.search._credit import CreditRow, CreditTable
from loopwright.search._protocols import MutationContext
from loopwright.search.mutations._core import RandomStrategy, mutate
from loopwright.search.mutations._guided import GuidedStrategy, apply_suggestion, guided_mutate
from loopwright.workflow import AgentNode, GateNode, workflow_hash
from tests.reflection.records import SEED, with_gate, with_study

LESSON = "Verify your result against the expected output of every example."


def ind(wf: Any = SEED, ind_id: str = "p") -> Individual:
    return Individual(id=ind_id, generation=0, workflow=wf, lineage=Lineage(operator="seed"))


def suggestion(operator: str, kind: str, sid: str, **extra: Any) -> dict[str, Any]:
    return {"id": sid, "operator": operator, "target": "builder", "kind": kind, "confidence": 0.8,
            "evidence": {"candidates": ["p"], "count": 1}, **extra}  # fmt: skip


def report(*suggestions: dict[str, Any]) -> ReflectionReport:
    return ReflectionReport.model_validate(
        {
            "generation": 0, "source": "offline_rules", "simulated": True,
            "mutation_suggestions": list(suggestions),
            "prompt_improvements": [{"target": "builder", "kind": "verification", "text": LESSON,
                                     "evidence": {"candidates": ["p"], "count": 1}}],
        }
    )  # fmt: skip


ALL = report(
    suggestion("gate_add", "add_gate", "s1", max_loops=3),
    suggestion("node_insert", "insert_researcher", "s2", role="researcher"),
    suggestion("prompt_mutate", "prompt_verification", "s3"),
)


def ctx(seed: int = 0, **over: Any) -> MutationContext:
    return MutationContext(rng=random.Random(seed), **over)


def test_without_a_report_it_draws_what_the_random_strategy_draws() -> None:
    for seed in range(8):
        a, b = ctx(seed), ctx(seed)
        guided = guided_mutate(SEED, GuidedStrategy(), a)
        plain = mutate(SEED, RandomStrategy(), b)
        assert guided.child is not None and plain.child is not None
        assert workflow_hash(guided.child) == workflow_hash(plain.child)
        assert a.rng.getstate() == b.rng.getstate() and guided.guidance is None


def test_each_suggestion_is_carried_out_at_its_target() -> None:
    parent = SEED
    gate = apply_suggestion(parent, ALL.mutation_suggestions[0], ctx(), ALL)
    assert gate.child is not None and gate.operator == "gate_add"
    (node,) = [n for n in gate.child.nodes if isinstance(n, GateNode)]
    assert (node.reloop_to, node.max_loops) == ("builder", 3)  # the suggestion's, not a draw
    study = apply_suggestion(parent, ALL.mutation_suggestions[1], ctx(), ALL)
    assert study.child is not None and study.operator == "node_insert"
    assert [n.role for n in study.child.nodes if isinstance(n, AgentNode)] == [
        "researcher",
        "builder",
    ]
    assert "{notes}" in study.child.node("builder").model_dump()["prompt"]
    lesson = apply_suggestion(parent, ALL.mutation_suggestions[2], ctx(), ALL)
    assert (
        lesson.child is not None and LESSON in lesson.child.node("builder").model_dump()["prompt"]
    )
    assert lesson.guidance is not None
    assert (lesson.guidance.mode, lesson.guidance.suggestion_id) == ("suggestion", "s3")
    assert lesson.reason.startswith("s3 (prompt_verification): ")


def test_with_no_exploration_every_child_follows_a_suggestion() -> None:
    strategy = GuidedStrategy(exploration=0.0)
    for seed in range(10):
        result = guided_mutate(SEED, strategy, ctx(seed, report=ALL))
        assert result.child is not None and result.guidance is not None
        assert result.guidance.mode == "suggestion"
        assert result.operator in {"gate_add", "node_insert", "prompt_mutate"}


def test_the_exploration_share_keeps_random_choices() -> None:
    always = GuidedStrategy(exploration=1.0)
    modes = {guided_mutate(SEED, always, ctx(s, report=ALL)).guidance.mode for s in range(5)}  # type: ignore[union-attr]
    assert modes == {"exploration"}
    with pytest.raises(ConfigError, match="exploration"):
        GuidedStrategy(exploration=1.5)
    with pytest.raises(ConfigError, match="exploration"):
        EvolveConfig(seed_workflow="builder-only", bench="mini", exploration=-0.1)


def test_cost_aware_exploration_prunes_a_component_and_holdout_draws_as_before() -> None:
    full = with_gate(with_study())  # researcher, builder and a gate on it
    pruning = GuidedStrategy(exploration=1.0, prune=1.0)
    removed: set[str] = set()
    for seed in range(12):
        result = guided_mutate(full, pruning, ctx(seed, report=ALL))
        assert result.child is not None and result.guidance is not None
        assert (result.guidance.mode, result.guidance.kind) == ("exploration", "prune")
        assert result.operator in {"node_remove", "gate_remove"}
        assert "builder" in result.child.node_ids  # never the main writer
        assert len(result.child.nodes) == len(full.nodes) - 1
        removed |= set(full.node_ids) - set(result.child.node_ids)
    assert "builder" not in removed and len(removed) == 2  # the researcher and the gate, by draw
    # a removal whose child is known is skipped; with none novel, the random operator as before
    nothing_new = ctx(0, report=ALL, novel=lambda wf: len(wf.nodes) >= len(full.nodes))
    fallback = guided_mutate(full, pruning, nothing_new)
    assert fallback.guidance is not None and fallback.guidance.kind == "exploration"
    # prune 0 (objective holdout) makes no extra draw: the same children as before the change
    for seed in range(8):
        a, b = ctx(seed, report=ALL), ctx(seed, report=ALL)
        plain = guided_mutate(full, GuidedStrategy(exploration=1.0), a)
        b.rng.random()  # the exploration draw
        explored = mutate(full, RandomStrategy(), b)
        assert plain.child is not None and explored.child is not None
        assert workflow_hash(plain.child) == workflow_hash(explored.child)
        assert a.rng.getstate() == b.rng.getstate()
    with pytest.raises(ConfigError, match="prune share"):
        GuidedStrategy(prune=2.0)


def test_only_a_cost_aware_run_prunes() -> None:
    from loopwright.search._components import _mutator

    full = with_gate(with_study())
    kinds = {}
    for objective in ("holdout", "cost-aware"):
        config = EvolveConfig(seed_workflow="builder-only", bench="mini", exploration=1.0,
                              objective=objective)  # fmt: skip
        mutator = _mutator(config, None, None)
        kinds[objective] = {mutator(full, ctx(s, report=ALL)).guidance.kind for s in range(12)}  # type: ignore[union-attr]
    assert kinds["holdout"] == {"exploration"}
    assert kinds["cost-aware"] == {"exploration", "prune"}


def test_satisfied_and_frozen_targets_are_not_usable() -> None:
    strategy = GuidedStrategy()
    has_both = with_gate(with_study())
    kinds = {s.kind for s in strategy.usable(has_both, ctx(report=ALL))}
    assert kinds == {"prompt_verification"}  # it already has a gate and a researcher
    frozen = SEED.model_copy(update={"frozen": ("builder",)})
    assert strategy.usable(frozen, ctx(report=ALL)) == []
    refused = apply_suggestion(frozen, ALL.mutation_suggestions[2], ctx(), ALL)
    assert refused.child is None and "frozen" in refused.reason


def test_when_no_suggestion_applies_a_structural_neighbour_is_the_fallback() -> None:
    only_gate = report(suggestion("gate_add", "add_gate", "s1"))
    result = guided_mutate(with_gate(), GuidedStrategy(exploration=0.0), ctx(3, report=only_gate))
    assert result.guidance is not None and result.guidance.mode == "fallback"
    assert result.guidance.kind == "neighbourhood"
    assert result.reason.startswith("neighbourhood (no usable suggestion for this parent)")
    assert result.operator in ("node_insert", "gate_remove")


def test_when_every_neighbour_is_known_the_child_is_two_steps_away() -> None:
    only_gate = report(suggestion("gate_add", "add_gate", "s1"))
    parent = with_gate()
    one_step = {workflow_hash(c) for c in _neighbour_children(parent)}
    two_steps = {workflow_hash(g) for c in _neighbour_children(parent)
                 for g in _neighbour_children(c)} - one_step - {workflow_hash(parent)}  # fmt: skip
    assert two_steps
    for seed in range(6):
        known = MutationContext(rng=random.Random(seed), report=only_gate,
                                novel=lambda wf: workflow_hash(wf) not in one_step)  # fmt: skip
        result = guided_mutate(parent, GuidedStrategy(exploration=0.0), known)
        assert result.guidance is not None and result.guidance.kind == "neighbourhood"
        assert "two steps: " in result.reason and "; then " in result.reason
        assert result.child is not None and workflow_hash(result.child) in two_steps


def test_when_nothing_near_is_novel_a_random_operator_is_the_fallback() -> None:
    only_gate = report(suggestion("gate_add", "add_gate", "s1"))
    nothing = MutationContext(rng=random.Random(3), report=only_gate, novel=lambda wf: False)
    result = guided_mutate(with_gate(), GuidedStrategy(exploration=0.0), nothing)
    assert result.guidance is not None and result.guidance.kind == "fallback"
    assert result.reason.startswith("fallback (no usable suggestion for this parent)")


def _neighbour_children(wf: Any) -> list[Any]:
    from loopwright.search.mutations._neighbourhood import neighbours

    out = []
    for move in neighbours(wf, ("node_insert", "gate_add", "node_remove", "gate_remove")):
        result = move.apply(wf, ctx())
        if result.child is not None:
            out.append(result.child)
    return out


def test_the_neighbourhood_toggles_each_component_at_the_main_writer() -> None:
    from loopwright.search.mutations._neighbourhood import main_writer, neighbours

    wf = with_gate()
    assert main_writer(wf) == "builder"
    moves = neighbours(wf, ("node_insert", "gate_add", "node_remove", "gate_remove"))
    children = _neighbour_children(wf)
    roles = [sorted(n.role for n in c.nodes if isinstance(n, AgentNode)) for c in children]
    for role in ("researcher", "fixer", "reviewer", "test_writer", "planner", "debugger"):
        assert sorted([role, "builder"]) in roles  # each missing role, once
    assert ["builder"] in roles  # the gate removed: the only child with no gate
    assert sum(not any(isinstance(n, GateNode) for n in c.nodes) for c in children) == 1
    assert len({workflow_hash(c) for c in children}) == len(children)
    # the gate already RELOOPs to the builder, so adding one is refused, not duplicated
    assert len(children) == len(moves) - 1
    (old_gate,) = [n for n in wf.nodes if isinstance(n, GateNode)]
    loops = [n.max_loops for c in children for n in c.nodes if isinstance(n, GateNode)]
    assert min(8, 2 * old_gate.max_loops) in loops  # more repair attempts, once
    only_removals = neighbours(wf, ("node_remove", "gate_remove"))
    assert [m.name for m in only_removals] == ["gate_remove"]


def test_two_structural_suggestions_can_make_one_compound_child() -> None:
    both = report(
        suggestion("gate_add", "add_gate", "s1", max_loops=3),
        suggestion("node_insert", "insert_researcher", "s2", role="researcher"),
    )
    kinds = set()
    for seed in range(12):
        result = guided_mutate(SEED, GuidedStrategy(exploration=0.0), ctx(seed, report=both))
        assert result.child is not None and result.guidance is not None
        kinds.add(result.guidance.kind)
        if result.guidance.kind == "compound":
            roles = [n.role for n in result.child.nodes if isinstance(n, AgentNode)]
            assert roles == ["researcher", "builder"]
            (gate,) = [n for n in result.child.nodes if isinstance(n, GateNode)]
            assert (gate.reloop_to, gate.max_loops) == ("builder", 3)
            assert result.reason.startswith("compound: ")
    assert kinds == {"compound", "add_gate", "insert_researcher"}  # a share, not always


def test_offline_crossover_grafts_what_the_mate_has() -> None:
    cross = report(suggestion("crossover", "crossover", "s1"))
    parent, mate = ind(with_gate(), "a"), ind(with_study(), "b")
    result = guided_mutate(
        parent.workflow, GuidedStrategy(exploration=0.0), ctx(report=cross, mates=(parent, mate))
    )
    assert result.child is not None and result.operator == "crossover"
    assert result.parents == ("b",)
    roles = [n.role for n in result.child.nodes if isinstance(n, AgentNode)]
    assert roles == ["researcher", "builder"]
    assert any(isinstance(n, GateNode) for n in result.child.nodes)
    assert "took study node 'study'" in result.reason


def test_credit_shifts_weight_toward_what_paid_off() -> None:
    pair = report(
        suggestion("gate_add", "add_gate", "s1"),
        suggestion("node_insert", "insert_researcher", "s2", role="researcher"),
    )
    credit = CreditTable((
        CreditRow("add_gate", "gate_add", 10, 10, 9, 0.1),
        CreditRow("insert_researcher", "node_insert", 10, 10, 0, -0.1),
    ))  # fmt: skip
    strategy = GuidedStrategy(exploration=0.0)
    usable = strategy.usable(SEED, ctx(report=pair))
    plain = ctx(7, report=pair)
    paid = ctx(7, report=pair, credit=credit)
    assert strategy.weight(usable[0], paid) > strategy.weight(usable[0], plain)
    assert strategy.weight(usable[1], paid) < strategy.weight(usable[1], plain)
    picks = [strategy.pick(usable, paid).kind for _ in range(300)]
    assert picks.count("add_gate") > 0.8 * len(picks)


def test_an_operator_counts_once_however_many_suggestions_name_it() -> None:
    """Four prompt lessons and one gate of equal confidence: the gate is drawn about half the
    time (one draw over the five suggestions gave it a fifth)."""
    lessons = [suggestion("prompt_mutate", f"prompt_{k}", f"s{k}") for k in range(2, 6)]
    many = report(suggestion("gate_add", "add_gate", "s1"), *lessons)
    strategy = GuidedStrategy(exploration=0.0)
    usable = strategy.usable(SEED, ctx(report=many))
    assert len(usable) == 5
    draws = ctx(3, report=many)
    picks = [strategy.pick(usable, draws).operator for _ in range(2000)]
    assert 0.45 < picks.count("gate_add") / len(picks) < 0.55
    kinds = {strategy.pick(usable, draws).kind for _ in range(400)}
    assert kinds == {"add_gate", "prompt_2", "prompt_3", "prompt_4", "prompt_5"}


def test_the_fallback_draws_operators_by_their_pooled_credit() -> None:
    only_gate = report(suggestion("gate_add", "add_gate", "s1"))
    credit = CreditTable((
        CreditRow("fallback", "model_tier_change", 12, 12, 0, 0.0),
        CreditRow("random", "model_tier_change", 8, 8, 0, 0.0),
        CreditRow("fallback", "loop_type_change", 10, 10, 8, 0.05),
    ))  # fmt: skip
    assert credit.operator_factor("model_tier_change") == pytest.approx(1 / 22 / 0.5)
    assert credit.operator_factor("loop_type_change") == pytest.approx(9 / 12 / 0.5)
    assert credit.operator_factor("gate_remove") == 1.0  # never tried
    ops = ("model_tier_change", "loop_type_change")  # no structural toggle: no neighbourhood
    strategy = GuidedStrategy(operators=ops, exploration=0.0)

    def fallbacks(credit_table: CreditTable | None) -> list[str]:
        out = []
        for seed in range(200):
            c = ctx(seed, report=only_gate, credit=credit_table)
            result = guided_mutate(with_gate(), strategy, c, operators=ops)
            assert result.guidance is not None and result.guidance.mode == "fallback"
            out.append(result.operator)
        return out

    weighted, uniform = fallbacks(credit), fallbacks(None)
    assert weighted.count("model_tier_change") < 0.25 * len(weighted)
    assert 0.35 * len(uniform) < uniform.count("model_tier_change") < 0.65 * len(uniform)


def test_more_loops_doubles_a_gate_up_to_the_cap_and_compound_needs_two() -> None:
    from loopwright.search.mutations._neighbourhood import MAX_GATE_LOOPS, MoreLoops, compound

    wf = with_gate()
    (gate,) = [n for n in wf.nodes if isinstance(n, GateNode)]
    loops = []
    for _ in range(6):
        result = MoreLoops(gate.id).apply(wf, ctx())
        if result.child is None:
            assert "below" in result.reason
            break
        wf = result.child
        loops.append(wf.node(gate.id).model_dump()["max_loops"])
    assert loops and loops[-1] == MAX_GATE_LOOPS and loops == sorted(set(loops))
    assert MoreLoops("builder").apply(wf, ctx()).child is None  # not a gate
    one = report(suggestion("gate_add", "add_gate", "s1", max_loops=3))
    assert compound(SEED, one.mutation_suggestions, ctx(), one) is None


def test_a_fixer_suggestion_puts_an_editing_reviewer_after_the_writer() -> None:
    """What the hidden-miss rule asks for: a reviewer that may edit, after the main writer
    (the library's reviewer is read-only and cannot fix what it finds)."""
    from loopwright.workflow import to_networkx

    rep = report(suggestion("node_insert", "insert_fixer", "s1", role="fixer"))
    parent = with_gate()
    result = apply_suggestion(parent, rep.mutation_suggestions[0], ctx(), rep)
    assert result.child is not None
    (fixer,) = [n for n in result.child.nodes if isinstance(n, AgentNode) and n.role == "fixer"]
    assert "edit_file" in fixer.tools
    assert fixer.id in to_networkx(result.child).successors("builder")
    strategy = GuidedStrategy()
    assert strategy.usable(parent, ctx(report=rep))  # wanted where there is none
    assert not strategy.usable(result.child, ctx(report=rep))  # satisfied once it is there
    removal = report(suggestion("node_remove", "remove_idle", "s2") | {"target": fixer.id})
    pruned = apply_suggestion(result.child, removal.mutation_suggestions[0], ctx(), removal)
    assert pruned.child is not None and workflow_hash(pruned.child) == workflow_hash(parent)


def test_a_suggestion_whose_kind_never_paid_off_mostly_gives_way_to_the_neighbourhood() -> None:
    """On a parent holding every structural suggestion, the prompt lesson is the only usable
    one; weights rank suggestions only against each other, so before `kept` it was carried out
    every time however often its kind had failed (the family-2 probe: 24 of 36 children)."""
    has_both = with_gate(with_study())
    failed = CreditTable((CreditRow("prompt_verification", "prompt_mutate", 8, 8, 0, -0.1),))
    paid = CreditTable((CreditRow("prompt_verification", "prompt_mutate", 8, 8, 6, 0.1),))
    strategy = GuidedStrategy(exploration=0.0)

    def modes(credit: CreditTable | None) -> list[str]:
        out = []
        for seed in range(200):
            result = guided_mutate(has_both, strategy, ctx(seed, report=ALL, credit=credit))
            assert result.child is not None and result.guidance is not None
            out.append(result.guidance.mode)
        return out

    assert set(modes(None)) == set(modes(paid)) == {"suggestion"}  # factor >= 1: always
    thinned = modes(failed)  # factor 0.04: carried out about one time in 25
    assert 0 < thinned.count("suggestion") < 0.15 * len(thinned)
    assert thinned.count("fallback") == len(thinned) - thinned.count("suggestion")
