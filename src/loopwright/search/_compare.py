"""The winner against the hand designs (`compare_designs`): after the search, every built-in
task workflow runs on the run's holdout tasks with the run's holdout repetitions, through the
run's evaluator (its executor and fitness cache), so the winner, the seed and each design are
scored on the same (task, repetition) runs and the gains are paired.

The designs' runs are monitoring, like holdout: they never reach selection, the archive or the
objective, and the search's budgets do not stop them (they run after the search has stopped).
They are counted apart from the search's spend (`DesignScore.runs`, `cached`; the costs are in
each result). Each result is committed with a checkpoint as it arrives, so a run killed during
the comparison resumes it without running a finished one again."""

from __future__ import annotations

from contextlib import closing
from pathlib import Path

from loopwright.evaluation import EvalJob, Evaluator, SerialExecutor
from loopwright.search._engine_records import task_result
from loopwright.search._hand_designs import DesignHoldout, hand_designs
from loopwright.search._progress import DesignEvaluated
from loopwright.search.strategies._state import RunState
from loopwright.store import refuse_disk_full
from loopwright.workflow import Workflow, workflow_hash

__all__ = ["DESIGNS_DIR", "compare_designs"]

DESIGNS_DIR = "designs"  # <run>/designs/<name>/<task id>/rep_<k>: the designs' runs


def compare_designs(state: RunState, evaluator: Evaluator) -> None:
    """Evaluate what each hand design still lacks of the run's holdout runs, design by design
    in registry order (the designs already complete are skipped), committing each result with
    a checkpoint and emitting `DesignEvaluated` when a design is complete. Deterministic: the
    runs' seeds come from the evaluator's base seed, the task and the repetition, as every
    evaluation's do."""
    designs = hand_designs()
    kept = {d.name: d for d in state.checkpoint.hand_designs}
    for done, (name, workflow) in enumerate(designs.items(), start=1):
        design = kept.get(name) or DesignHoldout(name=name, hash=workflow_hash(workflow))
        design = _evaluate(state, evaluator, design, workflow)
        valid = [r.score for r in design.results if not r.invalid]
        state.log.emit(
            DesignEvaluated(
                name=name, holdout=sum(valid) / len(valid) if valid else None,
                runs=len(design.results), cached=design.cached, done=done, total=len(designs),
            )
        )  # fmt: skip


def _evaluate(
    state: RunState, evaluator: Evaluator, design: DesignHoldout, workflow: Workflow
) -> DesignHoldout:
    cp = state.checkpoint
    reps = cp.config.holdout_repetitions or cp.config.repetitions
    have = {(r.task_id, r.repetition) for r in design.results}
    runs = [(t, k) for t in cp.holdout_tasks for k in range(reps)]
    root = state.run_dir / DESIGNS_DIR / design.name
    jobs = [
        EvalJob(workflow=workflow, task=state.tasks[t], repetition=k, root=root,
                run_id=state.run_dir.name)
        for t, k in runs if (t, k) not in have
    ]  # fmt: skip
    if not jobs:
        return design
    order = {run: i for i, run in enumerate(runs)}
    stream = (evaluator.executor or SerialExecutor()).run(evaluator, jobs)
    with closing(stream):
        for finished in stream:
            refuse_disk_full(finished.record.run_error, finished.job.run_dir)
            rel = Path(finished.job.run_dir).relative_to(state.run_dir)
            result = task_result(finished.record, "holdout", rel)
            results = sorted((*design.results, result),
                             key=lambda r: order[(r.task_id, r.repetition)])  # fmt: skip
            design = design.model_copy(
                update={"results": tuple(results), "cached": design.cached + finished.cached}
            )
            _store(state, design)
    return design


def _store(state: RunState, design: DesignHoldout) -> None:
    """Put `design` in the checkpoint (in place, or after the designs before it: they are
    evaluated in registry order) and write the checkpoint."""
    kept = list(state.checkpoint.hand_designs)
    names = [d.name for d in kept]
    if design.name in names:
        kept[names.index(design.name)] = design
    else:
        kept.append(design)
    state.update(hand_designs=tuple(kept))
    state.save()
