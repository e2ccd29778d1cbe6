"""Search economy: staged evaluation, Pareto-frontier parents and merge (docs/evolve.md)."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import pytest

from loopwright.errors import ConfigError
from loopwright.evaluation import EvalSettings, Evaluator
from loopwright.models import DEFAULT_PRICES, model_factory
from loopwright.sandbox import default_sandbox
from loopwright.search import (
    Checkpoint,
    EvolutionEngine,
    EvolveConfig,
    Individual,
    Lineage,
    TaskResult,
)
from loopwright.search._checkpoint import load_checkpoint, rng_state
from loopwright.search._pareto import frontier, pareto_pick
from loopwright.search._progress import (
    EvaluationFinished,
    Listener,
    Spent,
    StageFinished,
    read_progress,
)
from loopwright.search._staging import stage_order, stage_runs, stage_verdict
from loopwright.search.mutations._merge import merge_workflows
from loopwright.store import RunIndex
from loopwright.tasks import load_benchmark
from loopwright.workflow import (
    AgentNode,
    Edge,
    GateNode,
    Workflow,
    builtin_workflow,
    workflow_hash,
)

from .test_engine import fake_components

TRAIN = ("l1-slugify", "l1-rle-decode", "l2-fsm-guards")
HOLDOUT = ("l1-roman-numerals",)


def result(task_id: str, score: float, rep: int = 0, *, invalid: bool = False) -> TaskResult:
    return TaskResult(
        task_id=task_id, repetition=rep, split="train", score=score, resolved=score == 1.0,
        invalid=invalid, failure_category="none", cost_usd=0.0, duration_s=1.0, gate_loops=0,
        record_path=f"gen_0/x/{task_id}/rep_{rep}",
    )  # fmt: skip


def with_prompt(wf: Workflow, node_id: str, extra: str) -> Workflow:
    nodes = tuple(
        n.model_copy(update={"prompt": n.prompt + extra})
        if n.id == node_id and isinstance(n, AgentNode)
        else n
        for n in wf.nodes
    )
    return wf.model_copy(update={"nodes": nodes})


def ind(
    ind_id: str,
    wf: Workflow,
    scores: dict[str, float] | None = None,
    *,
    parents: tuple[str, ...] = (),
    generation: int = 0,
) -> Individual:
    return Individual(
        id=ind_id, generation=generation, workflow=wf,
        lineage=Lineage(parents=parents, operator="seed" if not parents else "hint"),
        results=tuple(result(t, s) for t, s in (scores or {}).items()),
    )  # fmt: skip


# -- the minibatch ----------------------------------------------------------------------------


def test_the_stage_order_is_stratified_by_level_at_every_prefix_and_seeded() -> None:
    tasks = [f"a{i}" for i in range(6)] + ["b0", "b1", "b2"]
    levels = {t: 1 if t.startswith("a") else 2 for t in tasks}
    order = stage_order(tasks, levels, seed=7, generation=1)
    assert sorted(order) == sorted(tasks)
    for n in range(1, len(tasks) + 1):
        level2 = sum(levels[t] == 2 for t in order[:n])
        assert abs(level2 - n / 3) < 1, (n, order[:n])  # a third of every prefix is level 2
    assert order == stage_order(tasks, levels, seed=7, generation=1)  # same seed, same order
    others = {stage_order(tasks, levels, seed=s, generation=g) for s in range(4) for g in (1, 2)}
    assert len(others) > 1  # the seed and the generation both reach the draw
    assert stage_runs(order, 3) == tuple((t, 0) for t in order[:3])  # repetition 0 only


def test_a_clearly_worse_child_stops_and_ties_go_on() -> None:
    wf = builtin_workflow("builder-only")
    parent = ind("p", wf, {"t1": 1.0, "t2": 0.5})
    runs = (("t1", 0), ("t2", 0))
    worse = stage_verdict(ind("c", wf, {"t1": 0.5, "t2": 0.5}), parent, runs, stage=0, margin=0.1)
    assert worse.stopped and worse.child_mean == 0.5 and worse.parent_mean == 0.75
    tie = stage_verdict(ind("c", wf, {"t1": 0.5, "t2": 1.0}), parent, runs, stage=0, margin=0.1)
    assert not tie.stopped
    within = stage_verdict(ind("c", wf, {"t1": 1.0, "t2": 0.4}), parent, runs, stage=0, margin=0.1)
    assert not within.stopped  # 0.70 is within the margin of 0.75
    unknown = stage_verdict(ind("c", wf, {"t1": 0.0}), ind("q", wf, {}), (("t1", 0),), stage=0,
                            margin=0.1)  # fmt: skip
    assert not unknown.stopped and "cannot compare" in unknown.reason


@pytest.mark.parametrize(
    "over",
    [
        {"stages": (3, 2)},
        {"stages": (0,)},
        {"stage_margin": 1.5},
        {"merge_rate": 0.5},  # merge without pareto parents
        {"parents": "pareto", "merge_rate": -0.1},
    ],
)
def test_bad_economy_settings_are_refused(over: dict[str, object]) -> None:
    with pytest.raises(ConfigError):
        config(**over)


# -- the Pareto frontier ----------------------------------------------------------------------


def test_the_frontier_of_a_hand_made_score_table() -> None:
    wf = builtin_workflow("builder-only")
    tasks = ("t1", "t2", "t3", "t4")
    table = {
        "a": {"t1": 1.0, "t2": 1.0, "t3": 0.2, "t4": 0.0},  # leads t1, t2
        "b": {"t1": 0.5, "t2": 0.5, "t3": 0.9, "t4": 0.0},  # leads t3
        "c": {"t1": 1.0, "t2": 0.5, "t3": 0.1, "t4": 0.0},  # leads t1 only: dominated by a
        "d": {"t1": 0.0, "t2": 0.0, "t3": 0.9, "t4": 0.0},  # leads t3 (tie with b): kept
        "e": {"t1": 0.1, "t2": 0.1, "t3": 0.1, "t4": 0.0},  # leads nothing
    }
    front = frontier([ind(k, wf, v) for k, v in table.items()], tasks)
    assert {m.id for m in front.members} == {"a", "b", "d"}
    assert front.leads == {"a": {"t1", "t2"}, "b": {"t3"}, "d": {"t3"}}  # t4: 0 everywhere
    rng = random.Random(3)
    drawn = Counter(pareto_pick(front, rng).id for _ in range(4000))
    assert set(drawn) == {"a", "b", "d"}
    assert 0.45 < drawn["a"] / 4000 < 0.55  # weight 2 of 4


def test_an_empty_frontier_cannot_be_drawn_from() -> None:
    front = frontier([ind("z", builtin_workflow("builder-only"), {"t1": 0.0})], ("t1",))
    assert front.members == ()
    with pytest.raises(ValueError, match="empty"):
        pareto_pick(front, random.Random(0))


# -- merge --------------------------------------------------------------------------------------


def gated(wf: Workflow, max_loops: int = 2) -> Workflow:
    gate = GateNode(id="gate_verify", check="visible_tests_pass", reloop_to="builder",
                    max_loops=max_loops)  # fmt: skip
    return wf.model_copy(
        update={"nodes": (*wf.nodes, gate), "edges": (*wf.edges, Edge(source="builder",
                                                                       target="gate_verify"))}
    )  # fmt: skip


def test_merge_takes_what_each_lineage_changed() -> None:
    base = builtin_workflow("builder-only")
    a = with_prompt(base, "builder", "\nCheck every edge case.\n")  # A's lineage: the prompt
    b = gated(base)  # B's lineage: a gate
    out = merge_workflows(a, b, base, prefer_a=True)
    assert out.child is not None, out.reason
    builder = next(n for n in out.child.nodes if n.id == "builder")
    assert isinstance(builder, AgentNode) and "Check every edge case." in builder.prompt
    assert [n.id for n in out.child.nodes] == ["builder", "gate_verify"]
    assert Edge(source="builder", target="gate_verify") in out.child.edges
    assert out.target == "gate_verify"


def test_merge_of_a_component_both_changed_takes_the_fitter_parents() -> None:
    base = gated(builtin_workflow("builder-only"), max_loops=2)
    a = with_prompt(gated(builtin_workflow("builder-only"), max_loops=3), "builder", "\nA.\n")
    b = with_prompt(gated(builtin_workflow("builder-only"), max_loops=1), "builder", "\nB.\n")
    a_wins = merge_workflows(a, b, base, prefer_a=True)
    b_wins = merge_workflows(a, b, base, prefer_a=False)
    assert a_wins.child is None and "identical to its parent" in a_wins.reason  # all A's
    assert b_wins.child is None and "equals parent B" in b_wins.reason  # all B's
    c = with_prompt(gated(builtin_workflow("builder-only"), max_loops=2), "builder", "\nC.\n")
    mixed = merge_workflows(c, b, base, prefer_a=True)  # builder: both changed, C fitter
    assert mixed.child is not None
    gate = next(n for n in mixed.child.nodes if isinstance(n, GateNode))
    builder = next(n for n in mixed.child.nodes if isinstance(n, AgentNode))
    assert gate.max_loops == 1 and builder.prompt.endswith("\nC.\n")


def test_merge_keeps_a_removal_of_one_lineage() -> None:
    base = gated(builtin_workflow("builder-only"))
    a = builtin_workflow("builder-only")  # A's lineage removed the gate
    b = with_prompt(base, "builder", "\nB.\n")  # B's changed the prompt
    out = merge_workflows(a, b, base, prefer_a=True)
    assert out.child is not None
    assert [n.id for n in out.child.nodes] == ["builder"] and out.child.edges == ()
    assert workflow_hash(out.child) != workflow_hash(a)


# -- the engine -------------------------------------------------------------------------------


def config(**over: object) -> EvolveConfig:
    data: dict[str, object] = {
        "seed_workflow": "builder-only", "bench": "mini", "sandbox": "local", "population": 4,
        "elitism": 2, "train_tasks": TRAIN, "holdout_tasks": HOLDOUT, "holdout_repetitions": 1,
        "budgets": {"max_generations": 3}, "strategy": "random",
    }  # fmt: skip
    data.update(over)
    return EvolveConfig.model_validate(data)


def crippled(wf: Workflow) -> Workflow:
    nodes = tuple(n.model_copy(update={"max_turns": 1}) for n in wf.nodes)
    return wf.model_copy(update={"nodes": nodes})


def staged_checkpoint(cfg: EvolveConfig) -> Checkpoint:
    """Generation 1 with two evaluated parents (made-up training scores) and one child each:
    `high`'s child cannot finish a task in one turn (clearly worse than 1.0 everywhere);
    `low`'s child cannot be worse than 0.0."""
    seed = builtin_workflow("builder-only")
    high = ind("high00000000", seed, dict.fromkeys(TRAIN, 1.0))
    low = ind("low000000000", with_prompt(seed, "builder", "\nBe brief.\n"),
              dict.fromkeys(TRAIN, 0.0))  # fmt: skip
    bad = ind("bad000000000", crippled(seed), parents=(high.id,), generation=1)
    good = ind("good00000000", with_prompt(seed, "builder", "\nCheck edge cases.\n"),
               parents=(low.id,), generation=1)  # fmt: skip
    inds = {i.id: i for i in (high, low, bad, good)}
    return Checkpoint(
        config=cfg, train_tasks=TRAIN, holdout_tasks=HOLDOUT, generation=1,
        population=tuple(inds), individuals=inds, seed_id=high.id,
        rng_state=rng_state(random.Random(0)), archive_json=None, spent=Spent(), summaries=(),
    )  # fmt: skip


def engine_at(cp: Checkpoint, run_dir: Path, listener: Listener | None = None) -> EvolutionEngine:
    bench = load_benchmark("mini")
    evaluator = Evaluator(
        model_factory("sim", benchmark=bench), default_sandbox("local"), DEFAULT_PRICES,
        EvalSettings(seed=0, sandbox="local"),
    )  # fmt: skip
    run_dir.mkdir(parents=True, exist_ok=True)
    tasks = {t.id: t for t in bench.tasks}
    return EvolutionEngine(cp, evaluator, tasks, run_dir, fake_components(), listener)


def _train_runs(events: Sequence[object], ind_id: str) -> list[tuple[str, int]]:
    return [
        (e.task_id, e.repetition)
        for e in events
        if isinstance(e, EvaluationFinished) and e.individual_id == ind_id and e.split == "train"
    ]


def test_a_clearly_worse_child_stops_after_its_minibatch_and_a_good_one_reuses_its_runs(
    tmp_path: Path,
) -> None:
    run = tmp_path / "run"
    engine = engine_at(staged_checkpoint(config(stages=(1,))), run)
    summary = engine.evaluate_generation()
    assert summary is not None and summary.stopped == 1
    events = read_progress(run)
    verdicts = {e.individual_id: e for e in events if isinstance(e, StageFinished)}
    assert verdicts["bad000000000"].stopped and not verdicts["good00000000"].stopped
    stage_task = verdicts["bad000000000"].tasks
    assert len(stage_task) == 1 and verdicts["good00000000"].tasks == stage_task
    # the stopped child ran its minibatch only; the other ran each training task once
    assert _train_runs(events, "bad000000000") == [(stage_task[0], 0)]
    good_runs = _train_runs(events, "good00000000")
    assert sorted(good_runs) == sorted((t, 0) for t in TRAIN) and good_runs[0] == (
        stage_task[0],
        0,
    )
    cp = load_checkpoint(run)
    assert cp.stopped_ids() == {"bad000000000"}
    assert cp.spent.evaluations == 1 + 3 + 1  # every run counts: minibatch, full, holdout
    assert summary.best_id != "bad000000000"
    rows = RunIndex.of_run(run).stage_verdicts(run.name)
    assert [(r.individual_id, r.stopped) for r in rows] == [
        ("bad000000000", True),
        ("good00000000", False),
    ]


def test_a_staged_generation_resumed_after_a_kill_ends_as_an_uninterrupted_one(
    tmp_path: Path,
) -> None:
    cfg = config(stages=(1,))
    whole = engine_at(staged_checkpoint(cfg), tmp_path / "whole")
    whole.evaluate_generation()

    class Killed(Exception):
        pass

    def kill_after_first(event: object) -> None:
        if isinstance(event, EvaluationFinished):
            raise Killed

    cut = engine_at(staged_checkpoint(cfg), tmp_path / "cut", kill_after_first)
    with pytest.raises(Killed):
        cut.evaluate_generation()
    resumed = EvolutionEngine.open(tmp_path / "cut", whole.evaluator,
                                   components=fake_components())  # fmt: skip
    resumed.evaluate_generation()
    a, b = load_checkpoint(tmp_path / "whole"), load_checkpoint(tmp_path / "cut")
    assert a.stage_verdicts == b.stage_verdicts
    assert a.spent.evaluations == b.spent.evaluations
    assert {k: [(r.task_id, r.score) for r in v.results] for k, v in a.individuals.items()} == {
        k: [(r.task_id, r.score) for r in v.results] for k, v in b.individuals.items()
    }


def pareto_checkpoint(cfg: EvolveConfig) -> Checkpoint:
    """Generation 0, bred next: `x` leads two tasks, `y` the third, `z` is dominated by `x`;
    `x` and `y` are children of the seed changed in different places."""
    seed_wf = builtin_workflow("builder-only")
    seed = ind("seed00000000", seed_wf, dict.fromkeys(TRAIN, 0.2))
    x = ind("x00000000000", with_prompt(seed_wf, "builder", "\nCheck edge cases.\n"),
            {TRAIN[0]: 1.0, TRAIN[1]: 1.0, TRAIN[2]: 0.0}, parents=(seed.id,))  # fmt: skip
    y = ind("y00000000000", gated(seed_wf), {TRAIN[0]: 0.5, TRAIN[1]: 0.5, TRAIN[2]: 0.8},
            parents=(seed.id,))  # fmt: skip
    z = ind("z00000000000", with_prompt(seed_wf, "builder", "\nBe brief.\n"),
            {TRAIN[0]: 1.0, TRAIN[1]: 0.5, TRAIN[2]: 0.0}, parents=(seed.id,))  # fmt: skip
    inds = {i.id: i for i in (seed, x, y, z)}
    return Checkpoint(
        config=cfg, train_tasks=TRAIN, holdout_tasks=HOLDOUT, generation=0,
        population=tuple(inds), individuals=inds, seed_id=seed.id,
        rng_state=rng_state(random.Random(0)), archive_json=None, spent=Spent(), summaries=(),
        phase="breed",
    )  # fmt: skip


def test_pareto_parents_come_from_the_frontier_only(tmp_path: Path) -> None:
    engine = engine_at(pareto_checkpoint(config(parents="pareto")), tmp_path / "run")
    engine.advance()
    children = [engine.individuals[i] for i in engine.state.population[2:]]
    assert children and all(c.lineage.parents[0] in {"x00000000000", "y00000000000"}
                            for c in children)  # fmt: skip


def test_merge_children_combine_two_frontier_parents(tmp_path: Path) -> None:
    engine = engine_at(pareto_checkpoint(config(parents="pareto", merge_rate=1.0)),
                       tmp_path / "run")  # fmt: skip
    engine.advance()
    children = [engine.individuals[i] for i in engine.state.population[2:]]
    merged = [c for c in children if c.lineage.operator == "merge"]
    assert merged, [c.lineage for c in children]
    child = merged[0]
    assert set(child.lineage.parents) == {"x00000000000", "y00000000000"}
    builder = next(n for n in child.workflow.nodes if isinstance(n, AgentNode))
    assert "Check edge cases." in builder.prompt  # from x's lineage
    assert any(isinstance(n, GateNode) for n in child.workflow.nodes)  # from y's
