"""The winner against the hand designs (`compare_designs`, docs/evolve.md): every built-in task
workflow on the run's holdout runs, paired with the winner and the seed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from loopwright.evaluation import EvalJob, EvalSettings, Evaluator
from loopwright.models import DEFAULT_PRICES, model_factory
from loopwright.records import CycleRecord
from loopwright.report import write_report
from loopwright.sandbox import default_sandbox
from loopwright.search import (
    Checkpoint,
    EvolutionEngine,
    evolve_result,
    hand_designs,
    load_checkpoint,
    write_checkpoint,
)
from loopwright.search._hand_designs import DesignHoldout, DesignScore, best_design
from loopwright.search._individual import Individual, Lineage, TaskResult
from loopwright.search._outer_workflow import write_result
from loopwright.search._progress import DesignEvaluated, read_progress
from loopwright.stats import paired_bootstrap
from loopwright.tasks import load_benchmark
from loopwright.workflow import resolve_task_workflow, workflow_hash

from .test_engine import fake_components, make_config, make_engine

HOLDOUT = ("l1-roman-numerals", "l2-fsm-guards")
REPS = 2


@pytest.fixture(scope="module")
def compared_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One small run on mini with sim: designer off, one generation, the comparison on."""
    run_dir = tmp_path_factory.mktemp("compare") / "run"
    config = make_config(designs=[], compare_designs=True, holdout_tasks=HOLDOUT,
                         holdout_repetitions=REPS, budgets={"max_generations": 1})  # fmt: skip
    make_engine(run_dir, config).run()
    return run_dir


@pytest.fixture
def compared(compared_dir: Path) -> Checkpoint:
    return load_checkpoint(compared_dir)


def runs_of(results: tuple[TaskResult, ...]) -> list[tuple[str, int]]:
    return [(r.task_id, r.repetition) for r in results]


def test_every_hand_design_runs_on_the_same_holdout_runs_as_the_seed(compared: Checkpoint) -> None:
    assert [d.name for d in compared.hand_designs] == list(hand_designs())
    assert "outer-loop" not in hand_designs()
    seed = compared.individuals[compared.seed_id]
    seed_runs = runs_of(tuple(r for r in seed.results if r.split == "holdout"))
    assert seed_runs == [(t, k) for t in HOLDOUT for k in range(REPS)]
    for design in compared.hand_designs:
        assert runs_of(design.results) == seed_runs, design.name
        assert all(r.split == "holdout" for r in design.results)
        assert design.hash == workflow_hash(resolve_task_workflow(design.name))


def test_the_seeds_own_design_scores_what_the_seed_scored(compared: Checkpoint) -> None:
    """builder-only is the seed: the same runs score the same (each run's seed comes from the
    base seed, the task and the repetition; this engine has no fitness cache, so they ran
    again)."""
    seed = compared.individuals[compared.seed_id]
    same = next(d for d in compared.hand_designs if d.name == "builder-only")
    assert [r.score for r in same.results] == [r.score for r in seed.results
                                                if r.split == "holdout"]  # fmt: skip
    assert same.cached == 0


def test_the_winner_is_paired_with_each_design_and_the_best_is_named(
    compared: Checkpoint,
) -> None:
    result = evolve_result(compared)
    winner = result.winner
    mine: dict[str, list[float]] = {}
    for r in winner.split_results("holdout"):
        mine.setdefault(r.task_id, []).append(r.score)
    for score, design in zip(result.designs, compared.hand_designs, strict=True):
        theirs: dict[str, list[float]] = {}
        for r in design.results:
            theirs.setdefault(r.task_id, []).append(r.score)
        assert score.winner_gain == paired_bootstrap(theirs, mine, seed=compared.config.seed)
        assert score.runs == len(HOLDOUT) * REPS
    best = result.best_design
    assert best is not None
    assert best.holdout == max(d.holdout or 0.0 for d in result.designs)
    assert result.design_gain == best.winner_gain


def test_designs_are_never_individuals_of_the_search(compared: Checkpoint) -> None:
    """Monitoring only: the designs are not in the population, the archive or the front."""
    hashes = {d.hash for d in compared.hand_designs} - {compared.individuals[compared.seed_id].hash}
    assert not any(i.hash in hashes for i in compared.individuals.values())
    assert compared.spent.evaluations == sum(len(i.results) for i in compared.individuals.values())


def test_progress_reports_each_design(compared_dir: Path) -> None:
    events = [e for e in read_progress(compared_dir) if isinstance(e, DesignEvaluated)]
    assert [(e.name, e.done, e.total) for e in events] == [
        (name, i, len(hand_designs())) for i, name in enumerate(hand_designs(), start=1)
    ]


def test_result_json_holds_the_designs_and_the_gain_over_the_best(
    compared_dir: Path, tmp_path: Path
) -> None:
    cp = load_checkpoint(compared_dir)
    result = evolve_result(cp)
    data = json.loads(write_result(tmp_path, result, "sim").read_text())
    assert data["schema_version"] == 3
    best = result.best_design
    assert best is not None and data["hand_designs"]["best"] == best.name
    gain = data["hand_designs"]["gain_over_best"]
    assert result.design_gain is not None and gain["mean"] == result.design_gain.gain
    assert [d["name"] for d in data["hand_designs"]["designs"]] == list(hand_designs())
    assert data["made_by_search"] == result.made_by_search


def test_the_comparison_is_off_by_default_and_runs_nothing(tmp_path: Path) -> None:
    make_engine(tmp_path / "run", make_config(budgets={"max_generations": 1})).run()
    cp = load_checkpoint(tmp_path / "run")
    assert cp.hand_designs == ()
    assert not (tmp_path / "run" / "designs").exists()
    assert evolve_result(cp).designs == () and evolve_result(cp).best_design is None
    page = write_report(tmp_path / "run", tmp_path / "report.html").path.read_text("utf-8")
    assert 'id="designs"' not in page


def test_a_resumed_comparison_runs_only_what_is_missing(
    compared_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run killed during the comparison (the first design done, the second after one run)
    finishes it when the engine is opened again, without running a kept result again, and ends
    with the same results as the uninterrupted run."""
    run_dir = tmp_path / "run"
    shutil.copytree(compared_dir, run_dir)
    full = load_checkpoint(run_dir).hand_designs
    cut = (full[0], full[1].model_copy(update={"results": full[1].results[:1], "cached": 0}))
    write_checkpoint(run_dir, load_checkpoint(run_dir).model_copy(update={"hand_designs": cut}))
    ran: list[tuple[str, str, int]] = []
    real = Evaluator.run_job

    def counting(self: Evaluator, job: EvalJob) -> CycleRecord:
        ran.append((job.workflow.name, job.task.id, job.repetition))
        return real(self, job)

    monkeypatch.setattr(Evaluator, "run_job", counting)
    make_engine_at(run_dir).compare_designs()
    after = load_checkpoint(run_dir).hand_designs
    assert [[(r.task_id, r.repetition, r.score) for r in d.results] for d in after] == [
        [(r.task_id, r.repetition, r.score) for r in d.results] for d in full
    ]
    names = [n for n, *_ in ran]
    assert len(ran) == (len(full[1].results) - 1) + len(full[2].results), ran
    assert full[0].name not in names and (full[1].name, *runs_of(full[1].results)[0]) not in ran


def make_engine_at(run_dir: Path) -> EvolutionEngine:
    """The engine of the run in `run_dir` as a resume opens it (sim on mini, no cache)."""
    evaluator = Evaluator(
        model_factory("sim", benchmark=load_benchmark("mini")), default_sandbox("local"),
        DEFAULT_PRICES, EvalSettings(seed=load_checkpoint(run_dir).config.seed, sandbox="local"),
    )  # fmt: skip
    return EvolutionEngine.open(run_dir, evaluator, components=fake_components())


def _score(name: str, holdout: float | None, usd: float | None) -> DesignScore:
    return DesignScore(name, holdout, usd, runs=4, cached=0, winner_gain=None)


def test_best_design_takes_the_highest_holdout_then_the_cheaper() -> None:
    scores = [_score("a", 0.8, 0.1), _score("b", 0.9, 0.5), _score("c", 0.9, 0.3),
              _score("d", None, 0.0), _score("e", 0.9, None)]  # fmt: skip
    best = best_design(scores)
    assert best is not None and best.name == "c"
    assert best_design([_score("d", None, 0.0)]) is None


def test_made_by_search_is_false_for_the_seed_and_generation_zero_designs(
    compared: Checkpoint,
) -> None:
    result = evolve_result(compared)
    seed = compared.individuals[compared.seed_id]
    as_seed = result.__class__(**{**result.__dict__, "winner": seed})
    assert not as_seed.made_by_search
    designed = seed.model_copy(update={"lineage": Lineage(operator="design:thorough")})
    assert not result.__class__(**{**result.__dict__, "winner": designed}).made_by_search
    child = seed.model_copy(update={"lineage": Lineage(parents=(seed.id,), operator="add_gate")})
    assert result.__class__(**{**result.__dict__, "winner": child}).made_by_search
    assert isinstance(seed, Individual) and isinstance(compared.hand_designs[0], DesignHoldout)


def test_the_report_shows_the_winner_against_the_seed_and_the_best_design(
    compared_dir: Path, tmp_path: Path
) -> None:
    page = write_report(compared_dir, tmp_path / "report.html").path.read_text(encoding="utf-8")
    assert 'id="designs"' in page and "Winner against the hand designs" in page
    best = evolve_result(load_checkpoint(compared_dir)).best_design
    assert best is not None and f"the best hand design ({best.name})" in page
    assert "SIMULATED" in page[page.index('id="designs"') :]
