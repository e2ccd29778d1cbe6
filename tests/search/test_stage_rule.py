"""The staging rules (`stage_rule`, docs/evolve.md "Staged evaluation"): `worse` stops a child
clearly worse than its parent on the stage; `better` goes on only with a child better than its
parent on the stage, drawn from the tasks its parent did not solve. Both compare paired runs."""

from __future__ import annotations

import inspect
import random
from pathlib import Path

from loopwright.cli._evolve_options import _PATHS, _run_settings
from loopwright.search import Checkpoint, EvolveConfig
from loopwright.search._checkpoint import load_checkpoint, rng_state
from loopwright.search._progress import Spent, StageFinished, read_progress
from loopwright.search._staging import parent_stage_order, stage_order, stage_verdict
from loopwright.tasks import load_benchmark
from loopwright.workflow import builtin_workflow

from .test_economy import HOLDOUT, TRAIN, _train_runs, config, crippled, engine_at, ind, result

WF = builtin_workflow("builder-only")
RUNS = (("t1", 0), ("t2", 0))


def test_better_stops_a_tie_and_a_worse_child_and_lets_a_better_one_go_on() -> None:
    parent = ind("p", WF, {"t1": 1.0, "t2": 0.5})
    verdicts = {
        name: stage_verdict(ind("c", WF, scores), parent, RUNS, stage=0, margin=0.1, rule="better")
        for name, scores in (("tie", {"t1": 1.0, "t2": 0.5}), ("within", {"t1": 1.0, "t2": 0.45}),
                             ("better", {"t1": 1.0, "t2": 0.55}))
    }  # fmt: skip
    assert verdicts["tie"].stopped and "not above" in verdicts["tie"].reason
    assert verdicts["within"].stopped  # worse by less than the margin: `better` stops it too
    assert not verdicts["better"].stopped
    # `worse` (the default) lets the same tie and the child within the margin go on
    for scores in ({"t1": 1.0, "t2": 0.5}, {"t1": 1.0, "t2": 0.45}):
        assert not stage_verdict(ind("c", WF, scores), parent, RUNS, stage=0, margin=0.1).stopped


def _priced(individual, usd: dict[str, float]):  # type: ignore[no-untyped-def]
    results = tuple(r.model_copy(update={"cost_usd": usd[r.task_id]}) for r in individual.results)
    return individual.model_copy(update={"results": results})


def test_better_under_cost_aware_lets_a_clearly_cheaper_tie_go_on_and_nothing_else() -> None:
    parent = _priced(ind("p", WF, {"t1": 1.0, "t2": 0.5}), {"t1": 0.10, "t2": 0.10})

    def verdict(scores: dict[str, float], usd: dict[str, float], tolerance: float | None = 0.03):
        child = _priced(ind("c", WF, scores), usd)
        return stage_verdict(child, parent, RUNS, stage=0, margin=0.1, rule="better",
                             tolerance=tolerance)  # fmt: skip

    cheap = verdict({"t1": 1.0, "t2": 0.5}, {"t1": 0.04, "t2": 0.05})
    assert not cheap.stopped and "cheaper tie" in cheap.reason
    # within the tolerance (0.49 against 0.5 on t2) and cheap: a tie by the objective
    assert not verdict({"t1": 1.0, "t2": 0.49}, {"t1": 0.04, "t2": 0.05}).stopped
    # cheap but worse than the tolerance allows: stopped
    assert verdict({"t1": 1.0, "t2": 0.4}, {"t1": 0.01, "t2": 0.01}).stopped
    # a tie only a few per cent cheaper (a reworded prompt's noise): stopped
    assert verdict({"t1": 1.0, "t2": 0.5}, {"t1": 0.095, "t2": 0.095}).stopped
    # the dollars are paired: a run only the child has does not make it look cheaper
    assert verdict({"t1": 1.0, "t2": 0.5}, {"t1": 0.10, "t2": 0.10}).stopped
    # without a tolerance (objective holdout) the same cheap tie stops, as before
    assert verdict({"t1": 1.0, "t2": 0.5}, {"t1": 0.04, "t2": 0.05}, None).stopped
    # `worse` is unchanged by cost: a tie goes on either way
    child = _priced(ind("c", WF, {"t1": 1.0, "t2": 0.5}), {"t1": 0.5, "t2": 0.5})
    assert not stage_verdict(child, parent, RUNS, stage=0, margin=0.1, tolerance=0.03).stopped


def test_the_stage_compares_only_runs_valid_for_child_and_parent() -> None:
    parent = ind("p", WF, {"t1": 1.0, "t2": 0.2})
    child = ind("c", WF).model_copy(
        update={"results": (result("t1", 0.0, invalid=True), result("t2", 0.2))}
    )
    for rule in ("worse", "better"):
        v = stage_verdict(child, parent, RUNS, stage=0, margin=0.1, rule=rule)  # type: ignore[arg-type]
        # paired on t2 alone: 0.2 against 0.2 (unpaired, 0.2 against 0.6 stopped it under worse)
        assert (v.child_mean, v.parent_mean) == (0.2, 0.2)
        assert v.stopped == (rule == "better")
    nothing = ind("c", WF).model_copy(update={"results": (result("t1", 0.0, invalid=True),)})
    v = stage_verdict(nothing, parent, (("t1", 0),), stage=0, margin=0.1, rule="better")
    assert not v.stopped and "cannot compare" in v.reason


def test_better_stages_the_tasks_the_parent_did_not_solve_first_and_worse_keeps_the_order() -> None:
    order = ("a", "b", "c", "d")
    parent = ind("p", WF, {"a": 1.0, "b": 0.3, "c": 1.0, "d": 0.0})
    assert parent_stage_order(order, parent, "better") == ("b", "d", "a", "c")
    assert parent_stage_order(order, parent, "worse") == order
    solved = ind("q", WF, dict.fromkeys(order, 1.0))
    assert parent_stage_order(order, solved, "better") == order  # nothing open: the order


def _checkpoint(cfg: EvolveConfig) -> Checkpoint:
    """Generation 1: a parent that solved the first task of the stage order only (made-up
    scores), with two children: `same` cannot finish a task in one turn (it scores what the
    parent scored on the tasks the parent did not solve: nothing), `good` is the seed."""
    levels = {t.id: t.spec.level for t in load_benchmark("mini").tasks}
    first = stage_order(TRAIN, levels, cfg.seed, 1)[0]
    parent = ind("par000000000", builtin_workflow("research-build-verify"),
                 {t: 1.0 if t == first else 0.0 for t in TRAIN})  # fmt: skip
    same = ind("same00000000", crippled(WF), parents=(parent.id,), generation=1)
    good = ind("good00000000", WF, parents=(parent.id,), generation=1)
    inds = {i.id: i for i in (parent, same, good)}
    return Checkpoint(
        config=cfg, train_tasks=TRAIN, holdout_tasks=HOLDOUT, generation=1,
        population=tuple(inds), individuals=inds, seed_id=parent.id,
        rng_state=rng_state(random.Random(0)), archive_json=None, spent=Spent(), summaries=(),
    )  # fmt: skip


def test_under_better_a_child_no_better_on_the_parents_open_tasks_stops_there(
    tmp_path: Path,
) -> None:
    cfg = config(stages=(2,), stage_rule="better")
    run = tmp_path / "run"
    summary = engine_at(_checkpoint(cfg), run).evaluate_generation()
    events = read_progress(run)
    verdicts = {e.individual_id: e for e in events if isinstance(e, StageFinished)}
    levels = {t.id: t.spec.level for t in load_benchmark("mini").tasks}
    solved = stage_order(TRAIN, levels, cfg.seed, 1)[0]
    stage = list(verdicts["same00000000"].tasks)
    assert set(stage) == set(TRAIN) - {solved}  # the parent's open tasks, not the solved one
    assert list(verdicts["good00000000"].tasks) == stage
    assert verdicts["same00000000"].stopped and verdicts["same00000000"].child_mean == 0.0
    assert not verdicts["good00000000"].stopped and verdicts["good00000000"].child_mean > 0.0
    # the stopped child never ran the rest; the one that went on ran each task once
    assert _train_runs(events, "same00000000") == [(t, 0) for t in stage]
    assert sorted(_train_runs(events, "good00000000")) == sorted((t, 0) for t in TRAIN)
    cp = load_checkpoint(run)
    assert summary is not None and summary.stopped == 1 and cp.stopped_ids() == {"same00000000"}
    assert cp.spent.evaluations == 2 + 3 + 1  # the stopped child's third run was saved
    # the same seed makes the same run
    again = tmp_path / "again"
    engine_at(_checkpoint(cfg), again).evaluate_generation()
    other = load_checkpoint(again)
    assert other.stage_verdicts == cp.stage_verdicts
    assert {k: [(r.task_id, r.score) for r in v.results] for k, v in cp.individuals.items()} == {
        k: [(r.task_id, r.score) for r in v.results] for k, v in other.individuals.items()
    }


def test_under_worse_every_child_is_staged_on_the_generations_first_tasks(tmp_path: Path) -> None:
    cfg = config(stages=(2,))
    engine_at(_checkpoint(cfg), tmp_path / "run").evaluate_generation()
    events = read_progress(tmp_path / "run")
    levels = {t.id: t.spec.level for t in load_benchmark("mini").tasks}
    first = list(stage_order(TRAIN, levels, cfg.seed, 1)[:2])
    verdicts = [e for e in events if isinstance(e, StageFinished)]
    assert len(verdicts) == 2 and all(list(v.tasks) == first for v in verdicts)


def test_the_default_rule_is_worse_in_the_library_and_on_the_command_line() -> None:
    cli_default = inspect.signature(_run_settings).parameters["stage_rule"].default
    assert EvolveConfig(seed_workflow="builder-only", bench="mini").stage_rule == "worse"
    assert cli_default == "worse" and _PATHS["stage_rule"] == (("stage_rule",),)
