"""The evaluation round: run what a set of individuals still lacks on a split, commit each
result as it arrives (with a checkpoint), and stop where a budget says, the same whatever the
number of workers. The engine never runs a task itself; the evaluator's executor does."""

from __future__ import annotations

from contextlib import closing
from pathlib import Path

from loopwright.evaluation import EvalJob, Evaluator, JobResult, SerialExecutor, in_job_order
from loopwright.search._budget import StopReason, budget_exhausted, train_budget_exhausted
from loopwright.search._engine_records import Split, evaluation_rows, mean_durations, task_result
from loopwright.search._individual import TaskResult
from loopwright.search._progress import EvaluationFinished
from loopwright.search.strategies._state import RunState
from loopwright.store import refuse_disk_full

__all__ = ["EvaluationRound", "Runs", "exhausted", "planned", "room"]

Runs = tuple[tuple[str, int], ...]  # (task id, repetition) pairs


class EvaluationRound:
    """Evaluates individuals of the run through `evaluator` (several at once when its executor
    has workers)."""

    def __init__(self, evaluator: Evaluator) -> None:
        self.evaluator = evaluator

    def evaluate(
        self, state: RunState, split: Split, ids: list[str], *, runs: Runs | None = None
    ) -> StopReason | None:
        """Evaluate what `ids` still lack on the split's tasks. Each result is committed as it
        arrives, with a checkpoint. Budgets act as if the jobs ran one by one in order: the
        evaluation budget caps the jobs started, and under a dollar budget results are
        committed in job order, so where the run stops does not depend on the number of
        workers. `runs` restricts the (task, repetition) pairs (a stage's); by default every
        one of the split."""
        pending = _pending(state, split, ids, runs)
        if not pending:
            return None
        reason = exhausted(state, split)
        if reason is not None:
            return reason
        allowed = room(state, split, len(pending))
        expected = mean_durations(state.individuals.values())
        jobs = [_job(state, i, task, rep, expected) for i, task, rep in pending[:allowed]]
        stream = (self.evaluator.executor or SerialExecutor()).run(self.evaluator, jobs)
        if state.config.budgets.max_usd is not None:
            stream = in_job_order(stream)
        with closing(stream):
            for count, done in enumerate(stream, start=1):
                _commit(state, pending[done.index][0], done, split)
                reason = exhausted(state, split)
                if reason is not None and count < len(jobs):
                    return reason  # closing the stream cancels the jobs still running
        return exhausted(state, split) if allowed < len(pending) else None

    def holdout(self, state: RunState) -> StopReason | None:
        """The generation's leader on holdout (reported, never selected on); under
        `objective: cost-aware` also the best on training by fitness alone when that is
        another (the leader is then the cheapest near-best, and the final choice needs the
        front's high point too); in generation 0 the seed too, the baseline of the holdout
        gain."""
        ids = [state.leader().id]
        fittest = state.leader(by_cost=False).id
        if fittest not in ids:
            ids.append(fittest)
        if state.checkpoint.generation == 0 and state.checkpoint.seed_id not in ids:
            ids.insert(0, state.checkpoint.seed_id)
        return self.evaluate(state, "holdout", ids)


def planned(state: RunState) -> int:
    """The most evaluations the current generation can still run: the training runs its
    population lacks, plus the holdout runs its leader may lack (the most any member lacks;
    the leader is known only after training; twice that under cost-aware, which also
    measures the fittest), plus the seed's in generation 0. Staged
    evaluation and budgets may run fewer."""
    cp = state.checkpoint
    train = len(_pending(state, "train", list(cp.population), None))
    holdout = max((len(_pending(state, "holdout", [i], None)) for i in cp.population), default=0)
    if state.config.selection_tolerance is not None:
        holdout *= 2  # the cost-aware leader and the fittest may be two
    seed = len(_pending(state, "holdout", [cp.seed_id], None)) if cp.generation == 0 else 0
    return train + holdout + seed


def _pending(
    state: RunState, split: Split, ids: list[str], runs: Runs | None
) -> list[tuple[str, str, int]]:
    """(individual, task, repetition) not evaluated yet, in canonical order (`runs`' order when
    given)."""
    if runs is None:
        cp = state.checkpoint
        task_ids = cp.train_tasks if split == "train" else cp.holdout_tasks
        reps = range(_repetitions(state, split))
        runs = tuple((task_id, rep) for task_id in task_ids for rep in reps)
    pending = []
    for ind_id in ids:
        done = {(r.task_id, r.repetition) for r in state.individuals[ind_id].results}
        pending += [(ind_id, task, rep) for task, rep in runs if (task, rep) not in done]
    return pending


def _repetitions(state: RunState, split: Split) -> int:
    if split == "holdout" and state.config.holdout_repetitions is not None:
        return state.config.holdout_repetitions
    return state.config.repetitions


def _job(
    state: RunState, ind_id: str, task_id: str, rep: int, expected: dict[str, float]
) -> EvalJob:
    ind = state.individuals[ind_id]
    root = state.run_dir / f"gen_{state.checkpoint.generation}" / ind.id
    # A run directory a kill cut off is cleared when its job runs again (Evaluator.run_job),
    # unless the fitness cache already holds that run, finished: then it is kept.
    return EvalJob(
        workflow=ind.workflow,
        task=state.tasks[task_id],
        repetition=rep,
        root=root,
        run_id=state.run_dir.name,
        expected_s=expected.get(task_id),
    )


def _commit(state: RunState, ind_id: str, done: JobResult, split: Split) -> None:
    """Add a finished evaluation to its individual (results kept in canonical order, so the
    checkpoint does not depend on completion order), checkpoint, index and log it."""
    refuse_disk_full(done.record.run_error, done.job.run_dir)  # stop; resume reruns it
    ind = state.individuals[ind_id]
    rel = done.job.run_dir.relative_to(state.run_dir)
    result = task_result(done.record, split, rel)
    order = _result_order(state)
    state.individuals[ind_id] = ind.model_copy(
        update={"results": tuple(sorted((*ind.results, result), key=order))}
    )
    state.update(spent=state.spend.add_result(result, state.checkpoint.spent))
    _index_evaluation(state, ind_id, done, split, rel)  # first: a resume rewrites the row
    state.save()
    state.log.emit(
        EvaluationFinished(
            generation=state.checkpoint.generation,
            individual_id=ind_id,
            task_id=result.task_id,
            repetition=result.repetition,
            split=split,
            score=result.score,
            resolved=result.resolved,
            invalid=result.invalid,
            cost_usd=result.cost_usd,
            status=done.status,
            attempts=done.attempts,
            cached=done.cached,
            spent=state.checkpoint.spent,
        )
    )


def _result_order(state: RunState) -> _ResultOrder:
    return _ResultOrder((state.checkpoint.train_tasks, state.checkpoint.holdout_tasks))


class _ResultOrder:
    """Training before holdout, tasks in split order, then repetition: the order in which
    one-by-one evaluation appends them."""

    def __init__(self, splits: tuple[tuple[str, ...], tuple[str, ...]]) -> None:
        self.splits = splits

    def __call__(self, r: TaskResult) -> tuple[int, int, str, int]:
        rank_ = ("train", "holdout").index(r.split) if r.split in ("train", "holdout") else 2
        tasks = self.splits[rank_] if rank_ < 2 else ()
        position = tasks.index(r.task_id) if r.task_id in tasks else len(tasks)
        return rank_, position, r.task_id, r.repetition


def _index_evaluation(
    state: RunState, ind_id: str, done: JobResult, split: Split, rel: Path
) -> None:
    row, failed = evaluation_rows(
        done, state.run_dir, individual_id=ind_id, generation=state.checkpoint.generation,
        split=split, rel=rel,
    )  # fmt: skip
    state.index.add_evaluation(row, done.record, failed)


def exhausted(state: RunState, split: Split) -> StopReason | None:
    """The budget that forbids another run of `split`, if any (the training-run budget binds
    training runs only)."""
    reason = budget_exhausted(state.config.budgets, state.spend.spent(state.checkpoint.spent))
    if reason is None and split == "train":
        reason = train_budget_exhausted(state.config.budgets, state.train_runs())
    return reason


def room(state: RunState, split: Split, wanted: int) -> int:
    """How many of `wanted` runs the evaluation budgets leave room for."""
    budgets = state.config.budgets
    left = wanted
    if budgets.max_evaluations is not None:
        spent = state.spend.spent(state.checkpoint.spent)
        left = min(left, budgets.max_evaluations - spent.evaluations)
    if split == "train" and budgets.max_train_evaluations is not None:
        left = min(left, budgets.max_train_evaluations - state.train_runs())
    return max(left, 0)
