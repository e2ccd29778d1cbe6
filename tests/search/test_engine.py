"""The evolution engine on the sim model: lifecycle, holdout policy, budgets, resume."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from loopwright.evaluation import EvalSettings, Evaluator
from loopwright.models import DEFAULT_PRICES, model_factory
from loopwright.sandbox import default_sandbox
from loopwright.search._archive import MapElitesArchive, default_descriptors
from loopwright.search._checkpoint import load_checkpoint
from loopwright.search._components import SearchComponents
from loopwright.search._config import EvolveConfig
from loopwright.search._designer import design
from loopwright.search._engine import EvolutionEngine
from loopwright.search._novelty import NoveltyFilter
from loopwright.search._progress import read_progress
from loopwright.search._protocols import MutationContext, MutationResult
from loopwright.search._report import evolve_result
from loopwright.search._selection import tournament
from loopwright.tasks import load_benchmark
from loopwright.workflow import AgentNode, Workflow

TRAIN = ("l1-slugify", "l1-rle-decode")
HOLDOUT = ("l1-roman-numerals",)
HINTS = (
    "Check every edge case and boundary.",
    "Keep the exact name and signature.",
    "Implement every part of the feature, complete.",
    "Keep existing behaviour.",
    "Check imports and module names.",
)


def fake_mutate(parent: Workflow, ctx: MutationContext) -> MutationResult:
    """Appends a random hint to the first agent's prompt (draws only from ctx.rng)."""
    hint = ctx.rng.choice(HINTS)
    nodes = list(parent.nodes)
    for i, node in enumerate(nodes):
        if isinstance(node, AgentNode):
            if hint in node.prompt:
                return MutationResult("hint", None, "hint already there", node.id)
            nodes[i] = node.model_copy(update={"prompt": node.prompt + "\n" + hint + "\n"})
            child = parent.model_copy(update={"nodes": tuple(nodes)})
            return MutationResult("hint", child, f"added {hint!r}", node.id)
    return MutationResult("hint", None, "no agent node", None)


def fake_components(threshold: float = 0.0) -> SearchComponents:
    descriptors = default_descriptors()
    return SearchComponents(
        mutate=fake_mutate,
        design=design,
        tournament=tournament,
        new_archive=lambda: MapElitesArchive(descriptors),
        load_archive=lambda text: MapElitesArchive.from_json(text, descriptors),
        new_novelty=lambda: NoveltyFilter(threshold),
    )


def make_config(**over: object) -> EvolveConfig:
    data: dict[str, object] = {
        "seed_workflow": "builder-only",
        "bench": "mini",
        "sandbox": "local",
        "population": 3,
        "elitism": 1,
        "train_tasks": TRAIN,
        "holdout_tasks": HOLDOUT,
        "budgets": {"max_generations": 2},
        "strategy": "random",  # what these tests were written against (the old default)
    }
    data.update(over)
    return EvolveConfig.model_validate(data)


def make_engine(run_dir: Path, config: EvolveConfig) -> EvolutionEngine:
    bench = load_benchmark("mini")
    evaluator = Evaluator(
        model_factory("sim", benchmark=bench),
        default_sandbox("local"),
        DEFAULT_PRICES,
        EvalSettings(seed=config.seed, sandbox="local"),
    )
    return EvolutionEngine.start(config, run_dir, evaluator, components=fake_components())


def scores(run_dir: Path) -> list[tuple[object, ...]]:
    cp = load_checkpoint(run_dir)
    return [(s.best_id, s.train_best, s.train_mean, s.holdout_best) for s in cp.summaries]


def test_tiny_run_logs_a_summary_with_holdout_every_generation(tmp_path: Path) -> None:
    engine = make_engine(tmp_path / "run", make_config())
    assert engine.run() == "max_generations"
    cp = load_checkpoint(tmp_path / "run")
    assert [s.generation for s in cp.summaries] == [0, 1]
    assert all(s.holdout_best is not None for s in cp.summaries)
    assert all(s.hyperparameters.population == 3 for s in cp.summaries)
    events = [e.event for e in read_progress(tmp_path / "run")]
    assert events[0] == "run_started" and events[-1] == "run_finished"
    assert events.count("generation_finished") == 2
    # the seed and the best are scored on holdout; every result is per task and repetition
    seed = cp.individuals[cp.seed_id]
    assert {r.task_id for r in seed.results if r.split == "holdout"} == set(HOLDOUT)
    # only the winner's mode survives the run
    modes = sorted(p.stem for p in (tmp_path / "run" / "modes").glob("*.json"))
    assert modes == [cp.individuals[cp.winner_id or ""].mode]
    result = evolve_result(cp)
    assert result.gain is not None and result.gain.n_tasks == 1


@pytest.mark.slow
def test_same_seed_same_run(tmp_path: Path) -> None:
    make_engine(tmp_path / "a", make_config()).run()
    make_engine(tmp_path / "b", make_config()).run()
    assert scores(tmp_path / "a") == scores(tmp_path / "b")


def test_holdout_results_never_change_the_parents(tmp_path: Path) -> None:
    engine = make_engine(tmp_path / "run", make_config())
    engine.evaluate_generation()
    state = engine.state
    rng_before = random.Random()
    rng_before.setstate(engine.rng.getstate())
    engine.advance()
    parents_a = engine.state.population
    # same state, but every holdout score flipped: the next population must not change
    flipped = {
        i: ind.model_copy(
            update={
                "results": tuple(
                    r.model_copy(update={"score": 1.0 - r.score}) if r.split == "holdout" else r
                    for r in ind.results
                )
            }
        )
        for i, ind in state.individuals.items()
    }
    other = make_engine(tmp_path / "run2", make_config())
    other.individuals = dict(flipped)
    other.state = state.model_copy(update={"individuals": flipped})
    other.rng = rng_before
    other.run_dir = tmp_path / "run2"
    other.advance()
    assert other.state.population == parents_a


@pytest.mark.slow
@pytest.mark.parametrize(
    ("budgets", "reason"),
    [
        ({"max_generations": 3, "max_evaluations": 4}, "max_evaluations"),
        ({"max_generations": 3, "max_usd": 0.01}, "max_usd"),
        ({"max_generations": 1}, "max_generations"),
        ({"max_generations": 5, "target_score": 0.01}, "target_score"),
        ({"max_generations": 6, "plateau_generations": 1, "target_score": 1.0}, "plateau"),
    ],
)
def test_every_budget_stop_names_its_reason(
    tmp_path: Path, budgets: dict[str, object], reason: str
) -> None:
    engine = make_engine(tmp_path / "run", make_config(budgets=budgets))
    assert engine.run() == reason
    cp = load_checkpoint(tmp_path / "run")
    assert cp.stop_reason == reason
    finished = [e for e in read_progress(tmp_path / "run") if e.event == "run_finished"]
    assert finished[-1].stop_reason == reason
    if reason == "max_evaluations":
        assert cp.spent.evaluations == 4


@pytest.mark.slow
def test_resume_after_a_stop_mid_generation_equals_an_uninterrupted_run(tmp_path: Path) -> None:
    make_engine(tmp_path / "full", make_config()).run()
    # cut the run short by a budget after 5 evaluations, then resume with the budget lifted
    engine = make_engine(tmp_path / "cut", make_config())
    original = engine.config
    engine.config = original.model_copy(
        update={"budgets": original.budgets.model_copy(update={"max_evaluations": 5})}
    )
    engine.evaluate_generation()
    cp = load_checkpoint(tmp_path / "cut").model_copy(
        update={"config": original, "stop_reason": None, "phase": "evaluate", "summaries": ()}
    )
    resumed = EvolutionEngine(
        cp,
        engine.evaluator,
        engine.tasks,
        tmp_path / "cut",
        fake_components(),
    )
    resumed.run()
    assert scores(tmp_path / "cut") == scores(tmp_path / "full")
    done = [
        (e.individual_id, e.task_id, e.repetition, e.split)
        for e in read_progress(tmp_path / "cut")
        if e.event == "evaluation_finished"
    ]
    assert len(done) == len(set(done))


def test_checkpoint_is_json_with_schema_version(tmp_path: Path) -> None:
    make_engine(tmp_path / "run", make_config(budgets={"max_generations": 1})).run()
    data = json.loads((tmp_path / "run" / "checkpoint.json").read_text())
    assert data["schema_version"] == 1 and data["loopwright_version"]
    assert isinstance(data["rng_state"][1], list) and len(data["rng_state"][1]) == 625


@pytest.mark.parametrize("first", ["reflected", "blind"])
def test_a_guided_run_breeds_its_first_children_from_the_reflection_on_the_seed(
    tmp_path: Path, first: str
) -> None:
    from loopwright.search._components import default_components

    config = make_config(strategy="guided", first_children=first, train_tasks=TRAIN[:1], designs=())
    bench = load_benchmark("mini")
    evaluator = Evaluator(
        model_factory("sim", benchmark=bench),
        default_sandbox("local"),
        DEFAULT_PRICES,
        EvalSettings(seed=0, sandbox="local"),
    )
    engine = EvolutionEngine.start(
        config, tmp_path, evaluator, components=default_components(config)
    )
    gen0 = [engine.individuals[i] for i in engine.state.population]
    if first == "blind":  # mutations of the seed, drawn before any reflection
        assert len(gen0) == 3 and all(i.lineage.guidance is None for i in gen0)
        return
    assert [i.lineage.operator for i in gen0] == ["seed"]
    engine.evaluate_generation()
    assert engine.advance() is None
    children = [engine.individuals[i] for i in engine.state.population[1:]]
    assert len(children) == 2
    assert all(c.lineage.guidance and c.lineage.guidance.report_generation == 0 for c in children)
