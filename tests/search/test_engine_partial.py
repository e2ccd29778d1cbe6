"""A budget that stops a run mid-generation: only fully evaluated individuals are ranked."""

from __future__ import annotations

import random
from pathlib import Path

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
from loopwright.search._checkpoint import rng_state
from loopwright.search._components import default_components
from loopwright.search._progress import Spent
from loopwright.search._report import evolve_result
from loopwright.tasks import load_benchmark
from loopwright.workflow import AgentNode, Workflow, builtin_workflow

TRAIN = ("l1-slugify", "l1-rle-decode", "l1-roman-numerals")
HOLDOUT = ("l1-semver-compare",)


def config(**over: object) -> EvolveConfig:
    data: dict[str, object] = {
        "seed_workflow": "builder-only", "bench": "mini", "sandbox": "local",
        "population": 3, "elitism": 1, "train_tasks": TRAIN, "holdout_tasks": HOLDOUT,
        "budgets": {"max_generations": 3, "max_evaluations": 4}, "strategy": "random",
    }  # fmt: skip
    data.update(over)
    return EvolveConfig.model_validate(data)


def variant(hint: str) -> Workflow:
    seed = builtin_workflow("builder-only")
    node = seed.nodes[0]
    assert isinstance(node, AgentNode)
    return seed.model_copy(
        update={"nodes": (node.model_copy(update={"prompt": node.prompt + hint}),)}
    )


def result(task_id: str, score: float) -> TaskResult:
    return TaskResult(
        task_id=task_id, repetition=0, split="train", score=score, resolved=score == 1.0,
        invalid=False, failure_category="none", cost_usd=0.0, duration_s=1.0, gate_loops=0,
        record_path=f"gen_0/x/{task_id}/rep_0",
    )  # fmt: skip


def individual(ind_id: str, workflow: Workflow, scores: dict[str, float]) -> Individual:
    return Individual(
        id=ind_id, generation=0, workflow=workflow, lineage=Lineage(operator="seed"),
        results=tuple(result(t, s) for t, s in scores.items()),
    )  # fmt: skip


def cut_checkpoint(cfg: EvolveConfig) -> Checkpoint:
    """Generation 0 stopped by the evaluation budget after 4 runs: the seed and `partial`
    have 3 and 1 of 3 training tasks; `partial` scored 1.0 on its one task."""
    seed = individual("seed00000000", builtin_workflow("builder-only"),
                      dict.fromkeys(TRAIN, 0.5))  # fmt: skip
    partial = individual("partial00000", variant("\nBe careful.\n"), {TRAIN[0]: 1.0})
    untouched = individual("untouched000", variant("\nBe brief.\n"), {})
    inds = {i.id: i for i in (seed, partial, untouched)}
    return Checkpoint(
        config=cfg, train_tasks=TRAIN, holdout_tasks=HOLDOUT, generation=0,
        population=tuple(inds), individuals=inds, seed_id=seed.id,
        rng_state=rng_state(random.Random(0)), archive_json=None,
        spent=Spent(evaluations=4), summaries=(),
    )  # fmt: skip


def engine_at(cp: Checkpoint, run_dir: Path) -> EvolutionEngine:
    bench = load_benchmark("mini")
    evaluator = Evaluator(
        model_factory("sim", benchmark=bench), default_sandbox("local"), DEFAULT_PRICES,
        EvalSettings(seed=0, sandbox="local"),
    )  # fmt: skip
    run_dir.mkdir(parents=True, exist_ok=True)
    tasks = {t.id: t for t in bench.tasks}
    return EvolutionEngine(cp, evaluator, tasks, run_dir, default_components(cp.config))


def test_a_budget_stop_mid_generation_crowns_only_a_fully_evaluated_individual(
    tmp_path: Path,
) -> None:
    engine = engine_at(cut_checkpoint(config()), tmp_path / "run")
    engine.evaluate_generation()  # the budget is spent: nothing runs, the run stops
    assert engine.state.stop_reason == "max_evaluations"
    assert engine.state.winner_id == "seed00000000"
    assert engine.state.summaries[-1].best_id == "seed00000000"
    assert engine.state.summaries[-1].train_best == 0.5


def test_the_result_of_a_cut_checkpoint_ranks_only_fully_evaluated_individuals() -> None:
    assert evolve_result(cut_checkpoint(config())).winner.id == "seed00000000"
