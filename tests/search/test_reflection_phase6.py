"""Seed 000, phase 6, on `mini` with `sim`: two instances (level 1 and level 2), one generation of
population 3 (the bare builder, NODE_INSERT of a study node, a RELOOP gate with max 2), then
reflection and the next generation's guided mutations.

Everything here is SIMULATED: the sim model stands in for an LLM (docs/sim-model.md).
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from loopwright.evaluation import EvalSettings, Evaluator
from loopwright.models import DEFAULT_PRICES, model_factory
from loopwright.records import load_record
from loopwright.reflection import load_reflection, reflection_path
from loopwright.sandbox import default_sandbox
from loopwright.search import EvolutionEngine, EvolveConfig, Individual, load_checkpoint
from loopwright.search._components import SearchComponents, default_components
from loopwright.search._progress import read_progress
from loopwright.search._protocols import MutationContext, MutationResult
from loopwright.search.mutations._guided_ops import AddGate, InsertAgent
from loopwright.tasks import load_benchmark
from loopwright.workflow import GateNode, Workflow

LEVEL1, LEVEL2 = "l1-slugify", "l2-fsm-guards"
# An actual exception in a message ("AssertionError: ...", "fsm.errors.GuardRejected: ...").
EXCEPTION = re.compile(r"\b(?:[a-z_]\w*\.)*[A-Z]\w*: ")


def config(strategy: str) -> EvolveConfig:
    return EvolveConfig.model_validate(
        {
            "seed_workflow": "builder-only", "bench": "mini", "sandbox": "local", "seed": 0,
            "population": 3, "elitism": 1, "train_tasks": (LEVEL1, LEVEL2),
            "holdout_tasks": ("l1-roman-numerals",), "holdout_repetitions": 1,
            "strategy": strategy, "first_children": "blind", "budgets": {"max_generations": 2},
        }
    )  # fmt: skip


def phase6_population() -> SearchComponents:
    """Generation 0 as phase 6 prescribes it: the seed, +study (NODE_INSERT), +RELOOP gate."""
    queue = [InsertAgent("researcher", "builder"), AddGate("builder", max_loops=2)]

    def scripted(parent: Workflow, ctx: MutationContext) -> MutationResult:
        return queue.pop(0).apply(parent, ctx)

    def no_design(kind: str, seed: Workflow) -> Workflow:
        return seed  # a duplicate of the seed: the novelty filter drops it

    return replace(default_components(config("guided")), mutate=scripted, design=no_design)


def evaluator() -> Evaluator:
    bench = load_benchmark("mini")
    return Evaluator(
        model_factory("sim", benchmark=bench),
        default_sandbox("local"),
        DEFAULT_PRICES,
        EvalSettings(seed=0, sandbox="local"),
    )


@pytest.fixture(scope="module")
def generation0(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run evaluated and reflected on through generation 0 (phase `breed`)."""
    run_dir = tmp_path_factory.mktemp("phase6") / "run"
    engine = EvolutionEngine.start(
        config("guided"), run_dir, evaluator(), components=phase6_population()
    )
    engine.evaluate_generation()
    engine.reflect()
    return run_dir


def by_operator(run_dir: Path) -> dict[str, Individual]:
    cp = load_checkpoint(run_dir)
    return {cp.individuals[i].lineage.operator: cp.individuals[i] for i in cp.population}


def score(ind: Individual, task_id: str) -> float:
    return next(r.score for r in ind.results if r.task_id == task_id and r.split == "train")


def test_generation0_is_the_seed_a_study_node_and_a_reloop_gate(generation0: Path) -> None:
    pop = by_operator(generation0)
    assert set(pop) == {"seed", "node_insert", "gate_add"}
    assert [n.role for n in pop["node_insert"].workflow.nodes] == ["researcher", "builder"]
    gate = next(n for n in pop["gate_add"].workflow.nodes if isinstance(n, GateNode))
    assert (gate.reloop_to, gate.max_loops) == ("builder", 2)


def test_records_hold_steps_and_the_actual_error_messages(generation0: Path) -> None:
    pop = by_operator(generation0)
    seed_l2 = next(r for r in pop["seed"].results if r.task_id == LEVEL2)
    record = load_record(generation0 / seed_l2.record_path)
    assert record.steps and all(s.role and s.turns > 0 and s.input_tokens > 0 for s in record.steps)
    assert record.node_trace["builder"].fired >= 1
    failing = [t.message for t in (record.grade.tests if record.grade else []) if not t.passed]
    assert failing and all(EXCEPTION.search(m) for m in failing), failing
    gate_l2 = next(r for r in pop["gate_add"].results if r.task_id == LEVEL2)
    gate_record = load_record(generation0 / gate_l2.record_path)
    reasons = [d.reason for d in gate_record.node_trace["gate_verify"].decisions]
    # pytest's "E   <exception>: <message>" lines: the gate hands the failing output back
    assert any(re.search(r"^E {3,}\S", r, re.MULTILINE) for r in reasons), reasons


def test_partial_credit_is_parsed_from_pytest(generation0: Path) -> None:
    seed = by_operator(generation0)["seed"]
    result = next(r for r in seed.results if r.task_id == LEVEL2)
    grade = load_record(generation0 / result.record_path).grade
    assert grade is not None and grade.f2p_total > 0
    assert 0.0 < result.score < 1.0
    assert result.score == pytest.approx(grade.f2p_passed / grade.f2p_total)


def test_the_reflection_report_has_patterns_that_cite_evidence(generation0: Path) -> None:
    report = load_reflection(reflection_path(generation0, 0))
    ids = set(load_checkpoint(generation0).population)
    assert report.source == "offline_rules" and report.simulated
    assert report.failure_patterns and report.success_patterns
    for pattern in [*report.failure_patterns, *report.success_patterns]:
        ev = pattern.evidence
        assert ev.count >= 1 and (ev.candidates or ev.tasks)
        assert set(ev.candidates) <= ids and set(ev.tasks) <= {LEVEL1, LEVEL2}
    assert any(EXCEPTION.search(p.description) for p in report.failure_patterns)
    # the RELOOP gate fixed what the seed got wrong; the study node did not help on slugify
    operators = {s.operator for s in report.mutation_suggestions}
    assert "gate_add" in operators
    events = [e.event for e in read_progress(generation0)]
    assert "reflection_finished" in events


def test_the_reloop_variant_beats_the_seed_on_the_level2_task(generation0: Path) -> None:
    pop = by_operator(generation0)
    assert score(pop["gate_add"], LEVEL2) > score(pop["seed"], LEVEL2)


def breed(run_dir: Path, strategy: str) -> list[Individual]:
    tasks = {t.id: t for t in load_benchmark("mini").tasks}
    cp = load_checkpoint(run_dir)
    cp = cp.model_copy(update={"config": config(strategy)})
    engine = EvolutionEngine(cp, evaluator(), tasks, run_dir, default_components(config(strategy)))
    assert engine.advance() is None
    return [
        engine.individuals[i]
        for i in engine.state.population
        if engine.individuals[i].generation == 1
    ]


def test_generation1_mutations_follow_reflection_not_the_random_draw(
    generation0: Path, tmp_path: Path
) -> None:
    shutil.copytree(generation0, tmp_path / "guided")
    shutil.copytree(generation0, tmp_path / "random")
    guided = breed(tmp_path / "guided", "guided")
    random_ = breed(tmp_path / "random", "random")
    assert guided and random_
    assert {c.hash for c in guided} != {c.hash for c in random_}
    report = load_reflection(reflection_path(generation0, 0))
    suggestion_ids = {s.id for s in report.mutation_suggestions}
    followed = [c for c in guided if c.lineage.guidance and c.lineage.guidance.mode == "suggestion"]
    assert followed, "at least one child comes from a reflection suggestion"
    for child in followed:
        assert child.lineage.guidance is not None
        assert child.lineage.guidance.suggestion_id in suggestion_ids
    assert all(c.lineage.guidance is None for c in random_)


def test_reflecting_again_changes_nothing(generation0: Path, tmp_path: Path) -> None:
    run_dir = tmp_path / "again"
    shutil.copytree(generation0, run_dir)
    before = (reflection_path(run_dir, 0).read_bytes(), len(read_progress(run_dir)))
    tasks = {t.id: t for t in load_benchmark("mini").tasks}
    cp = load_checkpoint(run_dir)
    assert cp.reflected == (0,)
    engine = EvolutionEngine(cp, evaluator(), tasks, run_dir, default_components(config("guided")))
    engine.reflect()
    assert (reflection_path(run_dir, 0).read_bytes(), len(read_progress(run_dir))) == before


def test_an_unevaluated_generation_is_recorded_without_a_reflection(tmp_path: Path) -> None:
    run_dir = tmp_path / "empty"
    engine = EvolutionEngine.start(
        config("guided"), run_dir, evaluator(), components=phase6_population()
    )
    engine.reflect()
    report = load_reflection(reflection_path(run_dir, 0))
    assert report.source == "empty" and not report.mutation_suggestions
    skipped = [e for e in read_progress(run_dir) if e.event == "reflection_skipped"]
    assert skipped and "nothing to reflect on" in skipped[-1].reason


def test_a_checkpoint_from_before_reflection_still_loads_as_random(
    generation0: Path, tmp_path: Path
) -> None:
    data = json.loads((generation0 / "checkpoint.json").read_text())
    del data["reflected"]
    for key in ("strategy", "exploration", "first_children", "reflection"):
        del data["config"][key]
    for ind in data["individuals"].values():
        del ind["lineage"]["guidance"]
    for summary in data["summaries"]:
        del summary["hyperparameters"]["strategy"], summary["hyperparameters"]["exploration"]
    (tmp_path / "checkpoint.json").write_text(json.dumps(data))
    old = load_checkpoint(tmp_path)
    assert old.reflected == () and old.config.strategy == "random"
    # reflection unset: a random run, which never read reports, does not reflect
    assert old.config.reflection.enabled is None and not old.config.reflects
