"""The Evaluator: one workflow on a list of tasks x repetitions, and the InnerLoop (a workflow
on one task as a model-like object: each step runs it once more)."""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Callable, Sequence
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path

from loopwright._fs import atomic_write
from loopwright.evaluation._aggregate import Aggregate, aggregate
from loopwright.evaluation._executor import EvalJob, Executor
from loopwright.evaluation._health import ModelHealth
from loopwright.evaluation._settings import EvalSettings, run_seed
from loopwright.evaluation._task_run import TaskRunSpec, run_task
from loopwright.models import ChatModel, PriceTable, label_scope
from loopwright.records import (
    DEFAULT_PLATEAU_AFTER,
    VERDICT_FILE,
    CycleRecord,
    CycleVerdict,
    judge_cycle,
    write_record,
)
from loopwright.sandbox import EnvironmentCache, Sandbox
from loopwright.scoring import Grader
from loopwright.tasks import Task
from loopwright.workflow import Workflow

__all__ = ["Evaluation", "Evaluator", "InnerLoop", "ModelFactory", "task_run_dir"]

ModelFactory = Callable[[int], ChatModel]
"""Makes the model for one run from that run's seed (a fresh instance per run)."""


def task_run_dir(root: Path, task_id: str, repetition: int) -> Path:
    """Where one (task, repetition) run of a candidate lives under its evaluation root."""
    return root / task_id / f"rep_{repetition}"


@dataclass(frozen=True)
class Evaluation:
    """The records of one workflow's evaluation, in (task, repetition) order, and their summary."""

    workflow: Workflow
    records: tuple[CycleRecord, ...]
    summary: Aggregate

    def by_task(self) -> dict[str, list[CycleRecord]]:
        grouped: dict[str, list[CycleRecord]] = {}
        for record in self.records:
            grouped.setdefault(record.task_id, []).append(record)
        return grouped


@dataclass
class Evaluator:
    """Runs a workflow on tasks x repetitions, each in a fresh workspace.

    Every run goes through `run_task` (one Runner, one Grader). `grader` is the grader kind
    (None: `PytestGrader`, the tasks' hidden tests). `executor` decides where and how many at
    once (docs/parallel.md); None runs them one after another in this process.
    `on_record` is called after each run finishes, in completion order (progress display,
    checkpointing). Failures of a run are in its record.
    """

    make_model: ModelFactory
    sandbox: Sandbox
    prices: PriceTable
    settings: EvalSettings = field(default_factory=EvalSettings)
    executor: Executor | None = None
    grader: Grader | None = None
    health: ModelHealth = field(default_factory=ModelHealth, repr=False, compare=False)

    def evaluate(
        self,
        workflow: Workflow,
        tasks: Sequence[Task],
        root: Path,
        *,
        run_id: str,
        on_record: Callable[[CycleRecord], None] | None = None,
    ) -> Evaluation:
        """Evaluate `workflow` on every task for `settings.repetitions`, writing under `root`.

        With an executor the runs go through it (in parallel when it has several workers); the
        records are returned in (task, repetition) order whatever order they finished in.
        """
        runs = [(task, rep) for task in tasks for rep in range(self.settings.repetitions)]
        records = self.evaluate_runs(workflow, runs, root, run_id=run_id, on_record=on_record)
        return Evaluation(workflow, records, aggregate(records))

    def evaluate_runs(
        self,
        workflow: Workflow,
        runs: Sequence[tuple[Task, int]],
        root: Path,
        *,
        run_id: str,
        on_record: Callable[[CycleRecord], None] | None = None,
    ) -> tuple[CycleRecord, ...]:
        """Run `workflow` on the chosen (task, repetition) pairs only, under `root`, and
        return their records in the order of `runs`, whatever order they finished in.

        Each run is the one `evaluate` would make for that pair (same seed, same run
        directory `root/<task>/rep_<k>`), through the executor when there is one (its
        workers, timeouts, retries and cache) and else one after another in this process
        (`run_one`). `on_record` is called as each finishes, in completion order.

        Raises ModelUnavailableError when the model has not answered a single call (`health`,
        evaluation/_health.py): the runs in flight are stopped, the finished ones are kept.
        """

        def seen(record: CycleRecord) -> None:
            if on_record is not None:
                on_record(record)
            self.health.see(record)

        if self.executor is None:
            records = []
            for task, rep in runs:
                record = self.run_one(workflow, task, rep, root, run_id=run_id)
                records.append(record)
                seen(record)
            self.health.check_finished()
            return tuple(records)
        jobs = [EvalJob(workflow, task, rep, root, run_id) for task, rep in runs]
        found: dict[int, CycleRecord] = {}
        with closing(self.executor.run(self, jobs)) as results:
            for result in results:
                found[result.index] = result.record
                seen(result.record)
        self.health.check_finished()
        return tuple(found[i] for i in range(len(jobs)))

    def run_job(self, job: EvalJob) -> CycleRecord:
        """Run one executor job in this process (what every executor's worker calls). The run
        directory is the job's own: what an earlier, cut-off attempt left there is removed.
        Every gateway call of the run is labelled with the run id and the workflow's name
        (the candidate) in the cost ledger."""
        if job.run_dir.exists():
            shutil.rmtree(job.run_dir)
        with label_scope(run=job.run_id, candidate=job.workflow.name):
            return self.run_one(
                job.workflow,
                job.task,
                job.repetition,
                job.root,
                run_id=job.run_id,
                directives=job.directives,
            )

    def job_seed(self, job: EvalJob) -> int:
        """The seed of `job`'s run: from the base seed, task and repetition only."""
        return run_seed(self.settings.seed, job.task.id, job.repetition)

    def detached(self) -> Evaluator:
        """This evaluator without its executor: what is shipped to an executor's workers."""
        return dataclasses.replace(self, executor=None)

    def run_one(
        self,
        workflow: Workflow,
        task: Task,
        repetition: int,
        root: Path,
        *,
        run_id: str,
        directives: str = "",
    ) -> CycleRecord:
        """One run of `workflow` on `task`, repetition `repetition`, under `root`, in this
        process whatever the executor (`evaluate_runs` goes through the executor).

        `directives` (outer-loop steering) reach every agent through the `{rules}` placeholder.
        """
        seed = run_seed(self.settings.seed, task.id, repetition)
        spec = TaskRunSpec(
            workflow=workflow,
            task=task,
            model=self.make_model(seed),
            sandbox=self.sandbox,
            prices=self.prices,
            run_dir=task_run_dir(root, task.id, repetition),
            run_id=run_id,
            seed=seed,
            repetition=repetition,
            run_timeout_s=self.settings.run_timeout_s,
            directives=directives,
            engine=self.settings.engine,
            grader=self.grader,
            environments=EnvironmentCache(
                Path(self.settings.env_cache) if self.settings.env_cache else None
            ),
        )
        return run_task(spec)


class InnerLoop:
    """A workflow on one task as a model-like object: each `step()` runs the workflow once more on the task.

    `history()` keeps every CycleRecord; `score_trajectory()` their scores; `mutable_nodes()`
    the node ids the outer loop may change (all but the workflow's frozen ones). Directives
    (outer-loop steering text) reach every agent prompt through `{rules}` and are kept beside
    the run as directives.md. Each step is judged against the steps before it (`judge_cycle`:
    its record's experiment kept or reverted; a plateau after `plateau_after` steps in a row
    not kept): `verdicts()` and the run's verdict.json hold the CycleVerdict.
    """

    def __init__(
        self,
        evaluator: Evaluator,
        workflow: Workflow,
        task: Task,
        root: Path,
        *,
        plateau_after: int = DEFAULT_PLATEAU_AFTER,
    ) -> None:
        self.evaluator = evaluator
        self.workflow = workflow
        self.task = task
        self.root = root
        self.plateau_after = plateau_after
        self._history: list[CycleRecord] = []
        self._verdicts: list[CycleVerdict] = []

    def step(self, directives: str | None = None) -> CycleRecord:
        """Run once more (repetition = number of steps so far) and return the new record."""
        repetition = len(self._history)
        if directives:
            run_dir = task_run_dir(self.root, self.task.id, repetition)
            run_dir.mkdir(parents=True, exist_ok=True)
            atomic_write(run_dir / "directives.md", directives)
        record = self.evaluator.run_one(
            self.workflow,
            self.task,
            repetition,
            self.root,
            run_id=self.root.name,
            directives=directives or "",
        )
        record, verdict = judge_cycle(record, self._verdicts, plateau_after=self.plateau_after)
        run_dir = task_run_dir(self.root, self.task.id, repetition)
        write_record(record, run_dir)
        atomic_write(run_dir / VERDICT_FILE, verdict.model_dump_json(indent=2) + "\n")
        self._history.append(record)
        self._verdicts.append(verdict)
        return record

    def verdicts(self) -> list[CycleVerdict]:
        """Each step's keep/revert verdict and stall signals, oldest first."""
        return list(self._verdicts)

    def history(self) -> list[CycleRecord]:
        return list(self._history)

    def score_trajectory(self) -> list[float]:
        return [r.score_end for r in self._history]

    def mutable_nodes(self) -> set[str]:
        return {n.id for n in self.workflow.nodes if n.id not in self.workflow.frozen}

    def is_mutable(self, node_id: str) -> bool:
        return node_id in self.mutable_nodes()
