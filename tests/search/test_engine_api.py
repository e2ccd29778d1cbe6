"""What a library user drives from Python: the designer switch, the training-run budget,
reflection only when it is read, one source for the seed, tasks and split, reopening a run,
failures from in-memory records and the individuals tied at the best."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

import pytest

from loopwright.errors import ConfigError
from loopwright.evaluation import EvalSettings, Evaluator
from loopwright.models import DEFAULT_PRICES, model_factory
from loopwright.records import write_record
from loopwright.reflection import reflection_path
from loopwright.sandbox import default_sandbox
from loopwright.search import (
    Checkpoint,
    EvolutionEngine,
    EvolveConfig,
    Individual,
    Lineage,
    MutationContext,
    MutationResult,
    TaskResult,
    evolve_result,
    failures_in,
    failures_of,
    load_checkpoint,
    tied_best,
)
from loopwright.search._checkpoint import rng_state
from loopwright.search._components import default_components
from loopwright.search._progress import (
    MutationRejected,
    PopulationShort,
    ReflectionSkipped,
    Spent,
    read_progress,
)
from loopwright.tasks import load_benchmark
from loopwright.workflow import Workflow, builtin_workflow
from tests.reflection.records import record, step
from tests.search.test_engine import HOLDOUT, TRAIN, fake_components, make_config

BENCH = load_benchmark("mini")


def evaluator() -> Evaluator:
    return Evaluator(
        model_factory("sim", benchmark=BENCH), default_sandbox("local"), DEFAULT_PRICES,
        EvalSettings(seed=0, sandbox="local"),
    )  # fmt: skip


def start(run_dir: Path, config: EvolveConfig) -> EvolutionEngine:
    return EvolutionEngine.start(config, run_dir, evaluator(), components=fake_components())


def operators(engine: EvolutionEngine) -> list[str]:
    return [engine.individuals[i].lineage.operator for i in engine.state.population]


# -- the designer --------------------------------------------------------------------------


def test_designs_choose_what_the_designer_adds_to_generation_0(tmp_path: Path) -> None:
    def tried(run_dir: Path) -> set[str]:
        """Designs made or rejected (builder-only's minimal design is the seed itself)."""
        rejected = {e.operator for e in read_progress(run_dir)
                    if isinstance(e, MutationRejected)}  # fmt: skip
        return {o for o in (*rejected, *operators(engines[run_dir])) if o.startswith("design:")}

    engines = {
        tmp_path / name: start(tmp_path / name, make_config(population=4, designs=designs))
        for name, designs in (("full", ("minimal", "thorough")), ("off", ()),
                              ("one", ("thorough",)))
    }  # fmt: skip
    assert tried(tmp_path / "full") == {"design:minimal", "design:thorough"}
    assert tried(tmp_path / "off") == set()
    off = engines[tmp_path / "off"]
    assert operators(off)[0] == "seed" and len(off.state.population) == 4  # mutations fill up
    assert tried(tmp_path / "one") == {"design:thorough"}
    full, one = engines[tmp_path / "full"], engines[tmp_path / "one"]
    assert operators(one)[:2] == ["seed", "design:thorough"]
    assert one.state.population[1] == full.state.population[1]  # the same id either way


def test_generation_0_fills_the_slot_of_a_design_that_was_not_novel(tmp_path: Path) -> None:
    """builder-only's minimal design is the seed itself: a reflects-first run of population 3
    (seed, minimal, thorough) gives the rejected design's slot to a mutation of the seed."""
    config = make_config(population=3, strategy="guided")
    parts = replace(fake_components(), reflector=default_components(config).reflector)
    engine = EvolutionEngine.start(config, tmp_path / "run", evaluator(), components=parts)
    assert engine.reflects_first
    rejected = [e.operator for e in read_progress(tmp_path / "run")
                if isinstance(e, MutationRejected)]  # fmt: skip
    assert "design:minimal" in rejected
    assert len(engine.state.population) == 3
    assert operators(engine)[:2] == ["seed", "design:thorough"]
    assert not operators(engine)[2].startswith(("seed", "design:"))


def test_a_generation_0_that_cannot_fill_says_so(tmp_path: Path) -> None:
    def barren(workflow: Workflow, ctx: MutationContext) -> MutationResult:
        return MutationResult("barren", None, "makes nothing")

    parts = replace(fake_components(), mutate=barren)
    engine = EvolutionEngine.start(make_config(population=4), tmp_path / "run", evaluator(),
                                   components=parts)  # fmt: skip
    short = [e for e in read_progress(tmp_path / "run") if isinstance(e, PopulationShort)]
    assert len(engine.state.population) == 2  # the seed and the thorough design
    assert [(e.held, e.wanted) for e in short] == [(2, 4)] and short[0].tries == 12


def test_an_unknown_design_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="unknown designs") as err:
        make_config(designs=("baroque",))
    assert "minimal" in (err.value.fix or "")


# -- reflection -----------------------------------------------------------------------------


def test_reflection_runs_only_when_the_strategy_reads_it_unless_asked() -> None:
    assert default_components(make_config(strategy="guided")).reflector is not None
    assert default_components(make_config(strategy="random")).reflector is None
    on = make_config(strategy="random", reflection={"enabled": True})
    assert default_components(on).reflector is not None
    off = make_config(strategy="guided", reflection={"enabled": False})
    assert default_components(off).reflector is None


def test_a_random_run_does_not_reflect(tmp_path: Path) -> None:
    config = make_config(strategy="random")
    engine = EvolutionEngine.start(
        config, tmp_path, evaluator(), components=default_components(config)
    )
    engine.reflect()
    assert not reflection_path(tmp_path, 0).exists()
    skipped = [e for e in read_progress(tmp_path) if isinstance(e, ReflectionSkipped)]
    assert "reflection is off" in skipped[-1].reason


# -- the training-run budget ----------------------------------------------------------------


@pytest.mark.parametrize("limit", [5, 6])
def test_the_training_run_budget_counts_training_runs_only(tmp_path: Path, limit: int) -> None:
    """Population 3 on 2 training tasks: 6 training runs a generation. 5 stops generation 0
    part-way, 6 at its end; the holdout of the best runs either way and does not count."""
    config = make_config(
        holdout_repetitions=1, budgets={"max_generations": 3, "max_train_evaluations": limit}
    )
    engine = start(tmp_path, config)
    assert engine.run() == "max_train_evaluations"
    cp = load_checkpoint(tmp_path)
    results = [r for i in cp.individuals.values() for r in i.results]
    assert sum(r.split == "train" for r in results) == limit
    assert [r.task_id for r in cp.individuals[cp.winner_id or ""].results
            if r.split == "holdout"] == list(HOLDOUT)  # fmt: skip
    assert cp.spent.evaluations > limit  # holdout runs are evaluations, not training runs
    assert len(cp.summaries) == 1


def test_a_training_run_budget_must_be_positive() -> None:
    with pytest.raises(ConfigError, match="max_train_evaluations must be positive"):
        make_config(budgets={"max_train_evaluations": 0})


# -- one source for the seed, the tasks and the split ---------------------------------------


def test_start_takes_the_split_from_exactly_one_place(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="one place") as both:
        EvolutionEngine.start(make_config(), tmp_path, evaluator(), split=(TRAIN, HOLDOUT))
    assert "both" in (both.value.got or "")
    calibrated = make_config(train_tasks=None, holdout_tasks=None)
    with pytest.raises(ConfigError, match="one place") as neither:
        EvolutionEngine.start(calibrated, tmp_path, evaluator())
    assert "neither" in (neither.value.got or "")
    with pytest.raises(ConfigError, match="unknown task id"):
        EvolutionEngine.start(calibrated, tmp_path, evaluator(), split=(("l9-nope",), HOLDOUT))
    assert not (tmp_path / "checkpoint.json").exists()


def test_start_resolves_the_seed_and_open_reloads_the_tasks(tmp_path: Path) -> None:
    config = make_config(train_tasks=None, holdout_tasks=None)
    engine = EvolutionEngine.start(config, tmp_path, evaluator(), split=(TRAIN, HOLDOUT))
    seed = engine.individuals[engine.state.seed_id]
    assert seed.workflow == builtin_workflow("builder-only")
    assert (engine.state.train_tasks, engine.state.holdout_tasks) == (TRAIN, HOLDOUT)
    again = EvolutionEngine.open(tmp_path, evaluator())
    assert again.state.population == engine.state.population
    assert set(again.tasks) == {t.id for t in BENCH.tasks}


# -- failures and ties ----------------------------------------------------------------------


def test_failures_come_from_in_memory_records_as_from_files(tmp_path: Path) -> None:
    failed = record("t1", 0.5, steps=[step("study", "researcher", error="boom"), step()])
    solved = record("t2", 1.0, steps=[step(error="ignored: the run resolved")])
    assert failures_in([failed, solved]) == {
        "study": ["t1: boom"],
        "builder": ["t1: tests_failing"],
    }
    for rec in (failed, solved):
        (tmp_path / rec.task_id).mkdir()
        write_record(rec, tmp_path / rec.task_id)
    ind = Individual(
        id="i", generation=0, workflow=builtin_workflow("builder-only"),
        lineage=Lineage(operator="seed"),
        results=(result("t1", 0.5, path="t1"), result("t2", 1.0, path="t2")),
    )  # fmt: skip
    assert failures_of(ind, tmp_path) == failures_in([failed, solved])


def result(task_id: str, score: float, *, cost: float = 0.0, path: str = "x") -> TaskResult:
    return TaskResult(
        task_id=task_id, repetition=0, split="train", score=score, resolved=score == 1.0,
        invalid=False, failure_category="none", cost_usd=cost, duration_s=1.0, gate_loops=0,
        record_path=path,
    )  # fmt: skip


def test_tied_best_lists_the_fully_evaluated_individuals_at_the_best(tmp_path: Path) -> None:
    wf = builtin_workflow("builder-only")

    def ind(ind_id: str, *results: TaskResult) -> Individual:
        return Individual(id=ind_id, generation=0, workflow=wf,
                          lineage=Lineage(operator="seed"), results=results)  # fmt: skip

    a, b = TRAIN
    inds = [
        ind("dear", result(a, 1.0, cost=2.0), result(b, 0.5)),
        ind("cheap", result(a, 0.5, cost=1.0), result(b, 1.0)),  # the same mean, cheaper
        ind("worse", result(a, 0.5), result(b, 0.5)),
        ind("partial", result(a, 1.0)),  # better, but on 1 of 2 tasks
    ]
    cp = Checkpoint(
        config=make_config(), train_tasks=TRAIN, holdout_tasks=HOLDOUT, generation=0,
        population=tuple(i.id for i in inds), individuals={i.id: i for i in inds},
        seed_id="worse", rng_state=rng_state(random.Random(0)), archive_json=None,
        spent=Spent(), summaries=(),
    )  # fmt: skip
    assert [i.id for i in tied_best(cp)] == ["cheap", "dear"]
    result_ = evolve_result(cp)
    assert result_.winner.id == "cheap" and [i.id for i in result_.tied] == ["cheap", "dear"]
    none_done = cp.model_copy(update={"population": ("partial",)})
    assert [i.id for i in tied_best(none_done)] == ["worse"]  # the seed leads
