"""The evolution engine through executors: the same checkpoint for any worker count and any
completion order, a dollar budget cut at the same place, the run index written as results
arrive, and a second run pointed at the same cache paying for nothing."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from math import fsum
from pathlib import Path
from typing import Any

import pytest

from loopwright.cli import main
from loopwright.evaluation import (
    CachedExecutor,
    EvalJob,
    EvalSettings,
    Evaluator,
    Executor,
    FitnessCache,
    JobStream,
    LocalExecutor,
    SerialExecutor,
)
from loopwright.models import DEFAULT_PRICES, model_factory
from loopwright.records import load_record
from loopwright.sandbox import default_sandbox
from loopwright.search import EvolveConfig, load_checkpoint
from loopwright.search._components import default_components
from loopwright.search._engine import EvolutionEngine
from loopwright.store import RunIndex
from loopwright.tasks import load_benchmark
from loopwright.workflow import AgentNode, Workflow

BENCH = load_benchmark("mini")
TIMING = {"duration_s", "wall_s", "started_at", "t", "started_t", "latency_s", "run_id"}
"""Fields that differ between two runs of the same seed: clocks, and the run's own name.
(Run directories of the same name length keep prompts, and so token counts, equal.)"""


class ReversedExecutor:
    """Runs every job in this process, then hands the results back last first: the worst
    completion order a pool could produce."""

    name = "reversed"
    workers = 1

    def run(self, evaluator: Evaluator, jobs: Sequence[EvalJob]) -> JobStream:
        yield from reversed(list(SerialExecutor().run(evaluator, jobs)))

    def close(self) -> None:
        return None


def small_design(kind: str, seed: Workflow) -> Workflow:
    """A design as cheap to run as the seed: its builder with one more line of guidance."""
    builder = seed.nodes[0]
    assert isinstance(builder, AgentNode)
    hint = {"minimal": "Check every edge case.", "thorough": "Verify the expected output."}[kind]
    node = builder.model_copy(update={"prompt": builder.prompt + f"\n{hint}\n"})
    return seed.model_copy(update={"nodes": (node, *seed.nodes[1:])})


def config(repetitions: int = 1, **budgets: Any) -> EvolveConfig:
    return EvolveConfig.model_validate(
        {
            "seed_workflow": "builder-only",
            "bench": "mini",
            "sandbox": "local",
            "seed": 5,
            "population": 2,
            "elitism": 1,
            "repetitions": repetitions,
            "holdout_repetitions": 1,
            "train_tasks": ["l1-slugify"],
            "holdout_tasks": ["l1-rle-decode"],
            "novelty_threshold": 0.0,
            "strategy": "random",
            "budgets": {"max_generations": 1, **budgets},
        }
    )


def evolve(run_dir: Path, executor: Executor | None, cfg: EvolveConfig) -> Path:
    evaluator = Evaluator(
        model_factory("sim", benchmark=BENCH),
        default_sandbox("local"),
        DEFAULT_PRICES,
        EvalSettings(seed=cfg.seed, sandbox="local"),
        executor=executor,
    )
    run_dir.mkdir(parents=True)
    parts = replace(default_components(cfg), design=small_design)
    engine = EvolutionEngine.start(cfg, run_dir, evaluator, components=parts)
    engine.run()
    return run_dir


def scrub(value: Any) -> Any:
    """`value` without timing fields (and with embedded JSON documents opened)."""
    if isinstance(value, dict):
        return {k: scrub(v) for k, v in value.items() if k not in TIMING}
    if isinstance(value, list):
        return [scrub(v) for v in value]
    if isinstance(value, str) and value.startswith("{"):
        return scrub(json.loads(value))
    return value


def state(run_dir: Path) -> Any:
    return scrub(load_checkpoint(run_dir).model_dump(mode="json"))


def records(run_dir: Path) -> dict[str, Any]:
    """Every result's record.json, without timing and run names (an experiment's id is the
    run's name)."""
    cp = load_checkpoint(run_dir)
    found = {}
    for ind in cp.individuals.values():
        for r in ind.results:
            data = load_record(run_dir / r.record_path).model_dump(mode="json")
            for experiment in data["experiments"]:
                experiment.pop("id")
            found[r.record_path] = scrub(data)
    return found


def test_the_checkpoint_is_the_same_for_any_worker_count_and_completion_order(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # one by one in this process, results handed back last first: the reference
    backwards = evolve(tmp_path / "run-r", ReversedExecutor(), config())
    shared = tmp_path / "shared-cache.db"
    two = evolve(
        tmp_path / "run-2", CachedExecutor(LocalExecutor(2), FitnessCache(shared)), config()
    )

    reference = state(backwards)
    assert len(reference["individuals"]) == 2, "nothing was evaluated"
    assert state(two) == reference
    assert records(two) == records(backwards)

    # the run index was written as results arrived: one row per result, its tests, its costs
    cp = load_checkpoint(two)
    results = [r for ind in cp.individuals.values() for r in ind.results]
    with RunIndex(two / "runs.db") as index:
        rows = index.evaluations(two.name)
        assert len(rows) == len(results) == cp.spent.evaluations
        assert {(r.individual_id, r.split, r.task_id, r.repetition) for r in rows} == {
            (i, r.split, r.task_id, r.repetition)
            for i, ind in cp.individuals.items()
            for r in ind.results
        }
        for row in rows:
            record = load_record(two / row.record_path)
            tests = index.test_outcomes(row.evaluation_id)
            assert record.grade is not None and len(tests) == len(record.grade.tests) > 0
            assert row.executor == "local" and not row.cached and row.attempts == 1
        assert [g.generation for g in index.generations(two.name)] == [0]
        assert {i.individual_id for i in index.individuals(two.name)} == set(cp.population)
        spend = index.spend(two.name)
        assert spend.paid_usd > 0 and spend.saved_usd == 0.0
        assert abs(spend.paid_usd - fsum(r.cost_usd or 0.0 for r in results)) < 1e-12

    # a later run pointed at the same cache pays for nothing and ends the same
    cached = CachedExecutor(LocalExecutor(2), FitnessCache(shared))
    again = evolve(tmp_path / "run-a", cached, config())
    assert cached.misses == 0 and cached.hits == len(results)
    assert state(again) == reference
    with RunIndex(again / "runs.db") as index:
        spend_again = index.spend(again.name)
    assert spend_again.cached == spend_again.evaluations == len(results)
    assert spend_again.paid_usd == 0.0 and spend_again.saved_usd == spend.paid_usd
    assert (again / results[0].record_path / "cache_hit.json").is_file()

    # `outer-loop status` reads what was paid from the index
    assert main(["outer-loop", "status", "--run-dir", str(again)]) == 0
    out = capsys.readouterr().out
    assert (
        f"run index: {len(results)} evaluations ({len(results)} from the cache), paid $0.00" in out
    )


def test_a_dollar_budget_stops_at_the_same_evaluation_whatever_the_completion_order(
    tmp_path: Path,
) -> None:
    cut = config(2, max_usd=0.09)  # a sim run costs about $0.05: a cut after 2 of 4 jobs
    one = load_checkpoint(evolve(tmp_path / "run-1", None, cut))
    # results arriving last first would cut at jobs 4 and 3 if committed as they arrive
    two = load_checkpoint(evolve(tmp_path / "run-2", ReversedExecutor(), cut))
    assert one.stop_reason == two.stop_reason == "max_usd"
    assert one.spent.evaluations == two.spent.evaluations == 2
    assert state(tmp_path / "run-2") == state(tmp_path / "run-1")
    assert two.spent.usd == one.spent.usd
