"""The evolution engine: the same generation lifecycle every generation, resumable.

Per generation: evaluate every unevaluated individual on the training tasks (with `stages`,
children first on nested minibatches, stopping those clearly worse than their parent); evaluate
the best on holdout (reported, never selected on); update the archive; log a GenerationSummary;
check budgets and convergence; select parents (tournament, or from the per-task Pareto
frontier); mutate or merge; filter novelty; register the children as ephemeral modes and drop
the modes of non-survivors.

Determinism: evaluation draws nothing from the run RNG (each run's seed comes from the base
seed, task and repetition), so the RNG state saved at a generation boundary stays valid until
that generation's selection. A checkpoint is written after every finished evaluation; a run
killed anywhere and resumed ends identical to an uninterrupted one (durations aside).
"""

from __future__ import annotations

import hashlib
import random
import time
from collections.abc import Mapping, Sequence
from contextlib import closing
from dataclasses import replace
from fractions import Fraction
from pathlib import Path
from typing import Any

from loopwright.errors import ConfigError
from loopwright.evaluation import (
    EvalJob,
    Evaluator,
    JobResult,
    SerialExecutor,
    in_job_order,
)
from loopwright.models import label_scope, read_ledger, role_kind
from loopwright.reflection import (
    ReflectionReport,
    load_reflection,
    reflection_path,
    write_reflection,
)
from loopwright.search._budget import (
    StopReason,
    budget_exhausted,
    converged,
    train_budget_exhausted,
)
from loopwright.search._checkpoint import (
    Checkpoint,
    load_checkpoint,
    rng_from_state,
    rng_state,
    write_checkpoint,
)
from loopwright.search._components import SearchComponents, default_components
from loopwright.search._config import EvolveConfig
from loopwright.search._credit import CreditTable, credit_table
from loopwright.search._designer import DESIGN_KINDS
from loopwright.search._engine_records import (
    Split,
    child_created,
    evaluation_rows,
    generation_row,
    individual_row,
    mean_durations,
    reflection_event,
    task_result,
)
from loopwright.search._individual import Individual, Lineage, TaskResult
from loopwright.search._modes import EphemeralModeRegistry
from loopwright.search._overfit import OverfitDetector
from loopwright.search._pareto import Frontier, frontier, pareto_pick
from loopwright.search._progress import (
    EvaluationFinished,
    GenerationFinished,
    GenerationStarted,
    GenerationSummary,
    HyperparameterRecord,
    Listener,
    MutationRejected,
    PopulationShort,
    ProgressEvent,
    ProgressLog,
    ReflectionSkipped,
    RunFinished,
    RunStarted,
    Spent,
    StageFinished,
)
from loopwright.search._protocols import MutationContext, MutationResult
from loopwright.search._reflection_inputs import reflection_candidates
from loopwright.search._report import (
    contenders,
    failures_of,
    fully_evaluated,
    leader,
    rank,
    tied_best,
    train_view,
)
from loopwright.search._selection import selection_key
from loopwright.search._staging import StageVerdict, stage_order, stage_runs, stage_verdict
from loopwright.search.mutations._merge import merge_workflows
from loopwright.store import RunIndex, StageRow, is_simulated, refuse_disk_full
from loopwright.tasks import Task, load_benchmark
from loopwright.workflow import Workflow, resolve_task_workflow, workflow_hash

__all__ = ["EvolutionEngine"]

_REFLECTION_OFF = (
    "reflection is off for this run (reflection.enabled false, or unset with the random "
    "strategy, which does not read it)"
)


class EvolutionEngine:
    """Runs (or resumes) one evolutionary run in `run_dir`. Not thread-safe; one per process
    (the CLI holds a `RunLock`). Build with `start` (fresh) or `open` (resume); the
    constructor takes a checkpoint and its tasks as they are."""

    def __init__(
        self,
        checkpoint: Checkpoint,
        evaluator: Evaluator,
        tasks: dict[str, Task],
        run_dir: Path,
        components: SearchComponents,
        listener: Listener | None = None,
    ) -> None:
        self.config = checkpoint.config
        self.evaluator = evaluator
        self.tasks = tasks
        self.run_dir = run_dir
        self.parts = components
        self.index = RunIndex.of_run(run_dir)  # runs.db: written as results arrive
        self.log = ProgressLog(run_dir, _tee(listener, self._to_index))
        self.modes = EphemeralModeRegistry(run_dir)
        self.overfit = OverfitDetector(self.config.overfit_gap)
        self.state = checkpoint
        self.individuals = dict(checkpoint.individuals)
        self.rng = rng_from_state(checkpoint.rng_state)
        self.archive = (
            components.load_archive(checkpoint.archive_json)
            if checkpoint.archive_json
            else components.new_archive()
        )
        self.novelty = components.new_novelty()
        for ind in self.individuals.values():  # insertion order = creation order
            self.novelty.remember(ind)
        self._wall_base = checkpoint.spent.wall_s
        self._clock = time.monotonic()
        # The exact sum of every result's cost: the same whatever order results arrived in.
        self._usd = sum(
            (Fraction(r.cost_usd or 0.0) for i in self.individuals.values() for r in i.results),
            Fraction(0),
        )
        self._meta = Fraction(checkpoint.spent.meta_usd)
        self._count_meta()

    # -- construction -------------------------------------------------------------------------

    @classmethod
    def start(
        cls,
        config: EvolveConfig,
        run_dir: Path,
        evaluator: Evaluator,
        *,
        split: tuple[Sequence[str], Sequence[str]] | None = None,
        components: SearchComponents | None = None,
        listener: Listener | None = None,
    ) -> EvolutionEngine:
        """A fresh run in `run_dir` (created if missing): build generation 0, register its
        modes and write the first checkpoint. Draws from `random.Random(config.seed)`.

        The seed workflow and the tasks come from `config.seed_workflow` and `config.bench`
        only (their one source). The (training, holdout) task ids come from `split` (what
        calibration chose) or from the config's `train_tasks`/`holdout_tasks`: exactly one of
        the two. `components` default to `default_components(config)`. Raises ConfigError for
        a seed or bench that does not resolve, both or neither split, or an id the bench
        lacks (UsageError for the outer loop's own graph as a seed).

        Generation 0 is the seed, the designs (`config.designs`) and blind mutations of the
        seed. A guided run with a reflector makes no blind mutations unless `first_children`
        is `blind`: its first children wait for the reflection on the seed's exhaust
        (`reflects_first`): evaluate, reflect, then mutate."""
        seed = resolve_task_workflow(config.seed_workflow)
        tasks = {t.id: t for t in load_benchmark(config.bench).tasks}
        train, holdout = _split_of(config, split, tasks)
        rng = random.Random(config.seed)
        seed_ind = Individual(
            id=_individual_id(config.seed, 0, 0, seed),
            generation=0,
            workflow=seed,
            lineage=Lineage(operator="seed"),
        )
        blank = Checkpoint(
            config=config,
            train_tasks=train,
            holdout_tasks=holdout,
            generation=0,
            population=(seed_ind.id,),
            individuals={seed_ind.id: seed_ind},
            seed_id=seed_ind.id,
            rng_state=rng_state(rng),
            archive_json=None,
            spent=Spent(),
            summaries=(),
        )
        run_dir.mkdir(parents=True, exist_ok=True)
        parts = components if components is not None else default_components(config)
        engine = cls(blank, evaluator, tasks, run_dir, parts, listener)
        engine.log.emit(
            RunStarted(
                config=config.model_dump(mode="json"), seed_id=seed_ind.id, model=config.model,
                simulated=is_simulated(config.model),
            )
        )  # fmt: skip
        with label_scope(run=run_dir.name):
            population = engine._generation_zero(seed_ind)
        engine._count_meta()
        engine._set_population(population, generation=0)
        return engine

    def _generation_zero(self, seed: Individual) -> list[Individual]:
        """The seed, the designs, then blind mutations of the seed until every slot is full:
        `population` slots, or with `reflects_first` one per design (its children wait for the
        reflection), so a design the novelty filter turned away (the minimal design of a seed
        that is already minimal) gives its slot to a mutation. `_offspring` bounds the tries;
        a generation still short says so (`PopulationShort`)."""
        wanted = self.config.population
        if self.reflects_first:
            wanted = min(wanted, 1 + len(self.config.designs))
        population = [seed, *self._designs(seed)][:wanted]
        tries = 4 * (wanted - len(population)) + 4 if len(population) < wanted else 0
        population += self._offspring([seed], wanted - len(population), 0)
        if len(population) < wanted:
            self.log.emit(
                PopulationShort(
                    generation=0, held=len(population), wanted=wanted, tries=tries,
                    reason="the designs and the mutations tried were not novel or made no "
                    "child; see the mutation_rejected events",
                )
            )  # fmt: skip
        return population

    @classmethod
    def open(
        cls,
        run_dir: Path,
        evaluator: Evaluator,
        *,
        components: SearchComponents | None = None,
        listener: Listener | None = None,
    ) -> EvolutionEngine:
        """The run in `run_dir` where its checkpoint left it (resume with `run()`): the tasks
        are reloaded from the stored config's `bench`, `components` default to
        `default_components` of the stored config. ConfigError when there is no readable
        checkpoint or the bench no longer resolves. Does not lock the run directory."""
        checkpoint = load_checkpoint(run_dir)
        config = checkpoint.config
        tasks = {t.id: t for t in load_benchmark(config.bench).tasks}
        parts = components if components is not None else default_components(config)
        return cls(checkpoint, evaluator, tasks, run_dir, parts, listener)

    # -- the run ------------------------------------------------------------------------------

    @property
    def reflects_first(self) -> bool:
        """True when the first children come from the reflection on generation 0 (guided
        strategy, a reflector, `first_children: reflected`): generation 0 holds no blind
        mutations."""
        return (
            self.config.strategy == "guided"
            and self.config.first_children == "reflected"
            and self.parts.reflector is not None
        )

    @property
    def finished(self) -> bool:
        return self.state.stop_reason is not None

    def run(self) -> StopReason:
        """Run generations until a budget or convergence rule stops the run; return why."""
        while not self.finished:
            if self.state.phase == "evaluate":
                self.evaluate_generation()
                if not self.finished:
                    self.reflect()
            else:
                self.advance()
        return self.state.stop_reason  # type: ignore[return-value]  # set by _finish

    def evaluate_generation(self) -> GenerationSummary | None:
        """Step 1-5 of a generation: training, holdout of the best, archive, summary.

        A spending budget that runs out stops the run after the summary; the training-run
        budget lets the holdout of the generation's best run first."""
        gen = self.state.generation
        self.log.emit(GenerationStarted(generation=gen, population=list(self.state.population)))
        reason = self._run_stages()
        if reason is None:
            reason = self._evaluate_split("train", self._going_on())
        if reason in (None, "max_train_evaluations"):
            reason = self._evaluate_holdout() or reason
        reason = reason or train_budget_exhausted(self.config.budgets, self._train_runs())
        summary = self._summarise()
        self.state = self.state.model_copy(
            update={"summaries": (*self.state.summaries, summary), "phase": "breed"}
        )
        self._checkpoint()
        self.log.emit(GenerationFinished(**summary.model_dump()))
        if reason is not None:
            self._finish(reason)
        return summary

    def reflect(self) -> None:
        """Between evaluation and breeding: reflect on the generation's training exhaust.

        Writes `<run>/reflection_gen{N}.json` (docs/reflection.md) and records the generation
        in the checkpoint, so a second call (a resumed run, the `reflect` node after
        `outer-loop reflect`) does nothing. Without a reflector it logs `reflection_skipped`.
        Draws nothing from the run RNG, so a resumed run still ends identical."""
        gen = self.state.generation
        reflector = self.parts.reflector
        if reflector is None:
            why = "no reflector configured" if self.config.reflects else _REFLECTION_OFF
            self.log.emit(ReflectionSkipped(generation=gen, reason=why))
            return
        if gen in self.state.reflected and reflection_path(self.run_dir, gen).is_file():
            return
        candidates, unreadable = reflection_candidates(self._population(), self.run_dir)
        with label_scope(run=self.run_dir.name, role="meta:reflector"):
            report = reflector.reflect(gen, candidates)
        path = write_reflection(self.run_dir, report)
        reflected = (*(g for g in self.state.reflected if g != gen), gen)
        self.state = self.state.model_copy(update={"reflected": reflected})
        self._count_meta()
        self._checkpoint()
        self.log.emit(reflection_event(report, path.name, unreadable))

    def advance(self) -> StopReason | None:
        """After a summary: stop if converged, else select, mutate and move to the next
        generation. Returns the stop reason when the run ended."""
        reason = converged(self.config.budgets, self.state.summaries)
        if reason is not None:
            self._finish(reason)
            return reason
        gen = self.state.generation
        views = self._contenders()
        elites = _top(views, self.config.elitism)
        report = self._guidance(gen)
        with label_scope(run=self.run_dir.name):
            children = self._offspring(views, self.config.population - len(elites), gen + 1, report)
        self._count_meta()
        if not children:
            self._finish("no_offspring")
            return "no_offspring"
        survivors = [self.individuals[e.id] for e in elites]
        self._set_population([*survivors, *children], generation=gen + 1)
        return None

    # -- evaluation ---------------------------------------------------------------------------

    def _run_stages(self) -> StopReason | None:
        """Staged evaluation of this generation's children (search/_staging.py): each stage's
        runs for the children still going on, then a verdict on each against its parent.
        Verdicts are recorded once (a resumed run recomputes the same ones and skips them)."""
        staged = [i for i in self.state.population if self._stageable(i)]
        if not staged:
            return None
        gen = self.state.generation
        levels = {t: self.tasks[t].spec.level for t in self.state.train_tasks}
        order = stage_order(self.state.train_tasks, levels, self.config.seed, gen)
        for stage, size in enumerate(self.config.stages):
            if size >= len(order):
                break
            runs = stage_runs(order, size)
            stopped = self.state.stopped_ids()
            alive = [i for i in staged if i not in stopped]
            reason = self._evaluate_split("train", alive, runs=runs)
            if reason is not None:
                return reason
            for ind_id in alive:
                self._judge(ind_id, stage, runs)
        return None

    def _stageable(self, ind_id: str) -> bool:
        """A child of this generation (not generation 0) whose parent is fully evaluated and
        which still lacks the full training evaluation."""
        ind = self.individuals[ind_id]
        parents = ind.lineage.parents
        return (
            bool(self.config.stages)
            and ind.generation == self.state.generation > 0
            and bool(parents)
            and parents[0] in self.individuals
            and self._complete(self.individuals[parents[0]])
            and not self._complete(ind)
        )

    def _complete(self, ind: Individual) -> bool:
        return fully_evaluated(ind, self.state.train_tasks, self.config.repetitions)

    def _judge(self, ind_id: str, stage: int, runs: tuple[tuple[str, int], ...]) -> None:
        if any(v.individual_id == ind_id and v.stage == stage for v in self.state.stage_verdicts):
            return
        child = self.individuals[ind_id]
        parent = self.individuals.get(child.lineage.parents[0])
        verdict = stage_verdict(child, parent, runs, stage=stage, margin=self.config.stage_margin)
        self.state = self.state.model_copy(
            update={"stage_verdicts": (*self.state.stage_verdicts, verdict)}
        )
        self._checkpoint()
        self.index.add_stage_verdict(
            StageRow(run_id=self.run_dir.name, generation=self.state.generation,
                     **_verdict_fields(verdict))
        )  # fmt: skip
        fields = {**_verdict_fields(verdict), "tasks": list(verdict.tasks)}
        self.log.emit(StageFinished(generation=self.state.generation, **fields))

    def _going_on(self) -> list[str]:
        """The population without the children a stage stopped."""
        stopped = self.state.stopped_ids()
        return [i for i in self.state.population if i not in stopped]

    def _evaluate_split(
        self, split: Split, ids: list[str], *, runs: tuple[tuple[str, int], ...] | None = None
    ) -> StopReason | None:
        """Evaluate what `ids` still lack on the split's tasks, through the evaluator's executor
        (several at once when it has workers). Each result is committed as it arrives, with a
        checkpoint. Budgets act as if the jobs ran one by one in order: the evaluation budget
        caps the jobs started, and under a dollar budget results are committed in job order,
        so where the run stops does not depend on the number of workers. `runs` restricts the
        (task, repetition) pairs (a stage's); by default every one of the split."""
        pending = self._pending(split, ids, runs)
        if not pending:
            return None
        reason = self._exhausted(split)
        if reason is not None:
            return reason
        room = self._room(split, len(pending))
        expected = mean_durations(self.individuals.values())
        jobs = [
            self._job(ind_id, task_id, rep, expected) for ind_id, task_id, rep in pending[:room]
        ]
        stream = (self.evaluator.executor or SerialExecutor()).run(self.evaluator, jobs)
        if self.config.budgets.max_usd is not None:
            stream = in_job_order(stream)
        with closing(stream):
            for count, done in enumerate(stream, start=1):
                self._commit(pending[done.index][0], done, split)
                reason = self._exhausted(split)
                if reason is not None and count < len(jobs):
                    return reason  # closing the stream cancels the jobs still running
        return self._exhausted(split) if room < len(pending) else None

    def _exhausted(self, split: Split) -> StopReason | None:
        """The budget that forbids another run of `split`, if any (the training-run budget
        binds training runs only)."""
        reason = budget_exhausted(self.config.budgets, self._spent())
        if reason is None and split == "train":
            reason = train_budget_exhausted(self.config.budgets, self._train_runs())
        return reason

    def _train_runs(self) -> int:
        """Training runs committed so far, every individual ever made (the checkpoint keeps
        them all, so this is the same after a resume)."""
        return sum(r.split == "train" for i in self.individuals.values() for r in i.results)

    def _pending(
        self, split: Split, ids: list[str], runs: tuple[tuple[str, int], ...] | None = None
    ) -> list[tuple[str, str, int]]:
        """(individual, task, repetition) not evaluated yet, in canonical order (`runs`' order
        when given)."""
        if runs is None:
            task_ids = self.state.train_tasks if split == "train" else self.state.holdout_tasks
            reps = range(self._repetitions(split))
            runs = tuple((task_id, rep) for task_id in task_ids for rep in reps)
        pending = []
        for ind_id in ids:
            done = {(r.task_id, r.repetition) for r in self.individuals[ind_id].results}
            pending += [(ind_id, task, rep) for task, rep in runs if (task, rep) not in done]
        return pending

    def _room(self, split: Split, wanted: int) -> int:
        """How many of `wanted` runs the evaluation budgets leave room for."""
        budgets = self.config.budgets
        room = wanted
        if budgets.max_evaluations is not None:
            room = min(room, budgets.max_evaluations - self._spent().evaluations)
        if split == "train" and budgets.max_train_evaluations is not None:
            room = min(room, budgets.max_train_evaluations - self._train_runs())
        return max(room, 0)

    def _repetitions(self, split: Split) -> int:
        if split == "holdout" and self.config.holdout_repetitions is not None:
            return self.config.holdout_repetitions
        return self.config.repetitions

    def _evaluate_holdout(self) -> StopReason | None:
        ids = [self._leader().id]
        if self.state.generation == 0 and self.state.seed_id not in ids:
            ids.insert(0, self.state.seed_id)  # the baseline of the holdout gain
        return self._evaluate_split("holdout", ids)

    def _job(self, ind_id: str, task_id: str, rep: int, expected: dict[str, float]) -> EvalJob:
        ind = self.individuals[ind_id]
        root = self.run_dir / f"gen_{self.state.generation}" / ind.id
        # A run directory a kill cut off is cleared when its job runs again (Evaluator.run_job),
        # unless the fitness cache already holds that run, finished: then it is kept.
        return EvalJob(
            workflow=ind.workflow,
            task=self.tasks[task_id],
            repetition=rep,
            root=root,
            run_id=self.run_dir.name,
            expected_s=expected.get(task_id),
        )

    def _commit(self, ind_id: str, done: JobResult, split: Split) -> None:
        """Add a finished evaluation to its individual (results kept in canonical order, so the
        checkpoint does not depend on completion order), checkpoint, index and log it."""
        refuse_disk_full(done.record.run_error, done.job.run_dir)  # stop; resume reruns it
        ind = self.individuals[ind_id]
        rel = done.job.run_dir.relative_to(self.run_dir)
        result = task_result(done.record, split, rel)
        results = tuple(sorted((*ind.results, result), key=self._result_order))
        self.individuals[ind_id] = ind.model_copy(update={"results": results})
        self._usd += Fraction(result.cost_usd or 0.0)
        spent = self._spent()
        spent = Spent(
            evaluations=spent.evaluations + 1, usd=float(self._usd + self._meta),
            wall_s=spent.wall_s, meta_usd=float(self._meta),
        )  # fmt: skip
        self.state = self.state.model_copy(update={"spent": spent})
        self._index_evaluation(ind_id, done, split, rel)  # first: a resume rewrites the row
        self._checkpoint()
        self.log.emit(
            EvaluationFinished(
                generation=self.state.generation,
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
            )
        )

    def _result_order(self, r: TaskResult) -> tuple[int, int, str, int]:
        """Training before holdout, tasks in split order, then repetition: the order in which
        one-by-one evaluation appends them."""
        splits = (self.state.train_tasks, self.state.holdout_tasks)
        rank_ = ("train", "holdout").index(r.split) if r.split in ("train", "holdout") else 2
        tasks = splits[rank_] if rank_ < 2 else ()
        position = tasks.index(r.task_id) if r.task_id in tasks else len(tasks)
        return rank_, position, r.task_id, r.repetition

    def _index_evaluation(self, ind_id: str, done: JobResult, split: Split, rel: Path) -> None:
        row, failed = evaluation_rows(
            done, self.run_dir, individual_id=ind_id, generation=self.state.generation,
            split=split, rel=rel,
        )  # fmt: skip
        self.index.add_evaluation(row, done.record, failed)

    def _to_index(self, event: ProgressEvent) -> None:
        """Progress events that the run index mirrors: the population evaluated in each
        generation, and each generation's summary."""
        run_id = self.run_dir.name
        if isinstance(event, GenerationStarted):
            self.index.add_individuals(individual_row(run_id, i) for i in self._population())
        elif isinstance(event, GenerationFinished) and self.state.summaries:
            self.index.add_generation(generation_row(run_id, self.state.summaries[-1]))

    # -- breeding -----------------------------------------------------------------------------

    def _designs(self, seed: Individual) -> list[Individual]:
        """The designer's workflows of generation 0 that `config.designs` asks for (each keeps
        its slot, so the ids do not depend on which others are made)."""
        out = []
        for slot, kind in enumerate(DESIGN_KINDS, start=1):
            if kind not in self.config.designs:
                continue
            workflow = self.parts.design(kind, seed.workflow)
            verdict = self.novelty.check(workflow)
            if not verdict.accepted:
                self.log.emit(MutationRejected(generation=0, operator=f"design:{kind}",
                                               stage="novelty", reason=verdict.reason))  # fmt: skip
                continue
            ind = Individual(
                id=_individual_id(self.config.seed, 0, slot, workflow),
                generation=0,
                workflow=workflow,
                lineage=Lineage(parents=(seed.id,), operator=f"design:{kind}"),
            )
            self.novelty.remember(ind)
            out.append(ind)
        return out

    def _guidance(self, gen: int) -> ReflectionReport | None:
        """The reflection on generation `gen` that guides its breeding (reflecting first if a
        resumed run stopped before it did); None without a reflector or with nothing found."""
        if self.parts.reflector is None:
            return None
        self.reflect()
        report = load_reflection(reflection_path(self.run_dir, gen))
        return None if report.source == "empty" else report

    def _offspring(
        self, parents: list[Individual], n: int, gen: int, report: ReflectionReport | None = None
    ) -> list[Individual]:
        """Up to `n` novel children of tournament-selected parents; rejected tries are logged
        and replaced, up to a cap of 4n + 4 tries. `report` (the reflection on the parents'
        generation) and the credit table reach the strategy through the MutationContext."""
        children: list[Individual] = []
        tries = 0
        credit = credit_table(self.individuals.values()) if report is not None else None
        front = self._frontier()
        while len(children) < n and tries < 4 * n + 4:
            tries += 1
            merged = self._maybe_merge(front)
            if merged is not None:
                self._adopt(*merged, gen, children)
                continue
            parent = self._select(parents, front)
            failures = failures_of(self.individuals[parent.id], self.run_dir)
            ctx = _context(self.rng, failures, report=report, credit=credit, mates=tuple(parents))
            ctx = replace(ctx, novel=lambda wf: self.novelty.check(wf).accepted)
            self._adopt(parent, self.parts.mutate(parent.workflow, ctx), gen, children)
        return children

    def _adopt(
        self, parent: Individual, result: MutationResult, gen: int, children: list[Individual]
    ) -> None:
        """Append `result`'s child to `children` when there is one and the novelty filter lets it
        in; otherwise log why not."""
        verdict = None if result.child is None else self.novelty.check(result.child)
        if result.child is None or verdict is None or not verdict.accepted:
            self.log.emit(
                MutationRejected(
                    generation=gen,
                    parent_id=parent.id,
                    operator=result.operator,
                    stage="mutation" if result.child is None else "novelty",
                    reason=result.reason if verdict is None else verdict.reason,
                )
            )
            return
        child = Individual(
            id=_individual_id(self.config.seed, gen, 100 + len(children), result.child),
            generation=gen,
            workflow=result.child,
            lineage=Lineage(
                parents=(parent.id, *result.parents),
                operator=result.operator,
                target=result.target,
                reason=result.reason,
                guidance=result.guidance,
            ),
        )
        self.novelty.remember(child)
        children.append(child)
        self.log.emit(child_created(child))

    # -- parents: tournament or the Pareto frontier, and merge --------------------------------

    def _frontier(self) -> Frontier | None:
        """With `parents: pareto`, the frontier of every fully evaluated individual so far
        (None otherwise, or when nobody leads a task yet: then the tournament chooses)."""
        if self.config.parents != "pareto":
            return None
        done = [train_view(i) for i in self.individuals.values() if self._complete(i)]
        front = frontier(done, self.state.train_tasks)
        return front if front.members else None

    def _select(self, parents: list[Individual], front: Frontier | None) -> Individual:
        if front is None:
            return self.parts.tournament(parents, self.config.tournament_k, self.rng)
        return pareto_pick(front, self.rng)

    def _maybe_merge(self, front: Frontier | None) -> tuple[Individual, MutationResult] | None:
        """With probability `merge_rate` (one draw, only when merging is on and there is a
        frontier), a merge of two frontier members that lead on different tasks, over their
        nearest common ancestor: (base parent, result). None when no merge is tried this time
        or no pair qualifies (then a mutation is made instead)."""
        if front is None or self.config.merge_rate <= 0:
            return None
        if self.rng.random() >= self.config.merge_rate:
            return None
        a = pareto_pick(front, self.rng)
        mates = [
            m for m in front.members
            if front.leads[m.id] - front.leads[a.id] and front.leads[a.id] - front.leads[m.id]
        ]  # fmt: skip
        if not mates:
            return None
        b = pareto_pick(Frontier(tuple(mates), front.leads), self.rng)
        ancestor = _common_ancestor(a.id, b.id, self.individuals)
        if ancestor is None:
            return None
        result = merge_workflows(
            a.workflow,
            b.workflow,
            self.individuals[ancestor].workflow,
            prefer_a=selection_key(a) <= selection_key(b),
        )
        return a, replace(result, parents=(b.id,))

    def _set_population(self, population: list[Individual], *, generation: int) -> None:
        for ind in population:
            self.individuals.setdefault(ind.id, ind)
            self.modes.register(ind)
        self.modes.cleanup(keep=population)
        self.state = self.state.model_copy(
            update={
                "generation": generation,
                "population": tuple(i.id for i in population),
                "rng_state": rng_state(self.rng),
                "phase": "evaluate",
            }
        )
        self._checkpoint()

    # -- bookkeeping --------------------------------------------------------------------------

    def _population(self) -> list[Individual]:
        return [self.individuals[i] for i in self.state.population]

    def _contenders(self) -> list[Individual]:
        """Training views of the fully evaluated individuals of the population, best first."""
        return contenders(self._population(), self.state.train_tasks, self.config.repetitions)

    def _leader(self) -> Individual:
        seed = self.individuals[self.state.seed_id]
        return leader(self._population(), seed, self.state.train_tasks, self.config.repetitions)

    def tied_best(self) -> tuple[Individual, ...]:
        """The individuals of the current population tied at the best training fitness, best
        first (the first is the winner): see `loopwright.search.tied_best`."""
        return tied_best(self.state.model_copy(update={"individuals": dict(self.individuals)}))

    def _summarise(self) -> GenerationSummary:
        """The generation's summary; the archive takes its fully evaluated individuals. Best
        and mean are over fully evaluated individuals only (a budget may stop a generation
        part-way): the best is the `leader`."""
        pop = self._population()
        complete = {v.id for v in self._contenders()}
        # In population order: among equals the archive keeps the first, and the mean sums
        # in a fixed order.
        views = [train_view(i) for i in pop if i.id in complete]
        for view in views:
            self.archive.add(view)
        best = self.individuals[self._leader().id]
        fits = [v.fitness for v in views if v.fitness is not None]
        holdout = best.mean_score("holdout")
        return GenerationSummary(
            generation=self.state.generation,
            best_id=best.id,
            best_hash=best.hash,
            train_best=best.fitness,
            train_mean=sum(fits) / len(fits) if fits else None,
            holdout_best=holdout,
            overfit=self.overfit.check(best.fitness, holdout),
            diversity=len({i.hash for i in pop}),
            population_size=len(pop),
            stopped=len(self.state.stopped_ids() & {i.id for i in pop}),
            archive_coverage=self.archive.coverage(),
            evaluations=sum(len(i.results) for i in pop),
            spent=self._spent(),
            hyperparameters=_hyperparameters(self.config),
        )

    def _count_meta(self) -> None:
        """Take the meta roles' spend from the run ledger (every `meta:` call so far, also
        those made after the last checkpoint) into `spent`."""
        ledger = self.parts.ledger
        if ledger is None or ledger.path is None or not ledger.path.is_file():
            return
        records = read_ledger(ledger.path, torn_tail=True)
        meta = [r.cost_usd or 0.0 for r in records if role_kind(r.labels.role) == "meta"]
        self._meta = sum((Fraction(c) for c in meta), Fraction(0))
        spent = self.state.spent.model_copy(
            update={"usd": float(self._usd + self._meta), "meta_usd": float(self._meta)}
        )
        self.state = self.state.model_copy(update={"spent": spent})

    def _spent(self) -> Spent:
        spent = self.state.spent
        wall = self._wall_base + (time.monotonic() - self._clock)
        return spent.model_copy(update={"wall_s": wall})

    def _checkpoint(self) -> None:
        self.state = self.state.model_copy(
            update={
                "individuals": dict(self.individuals),
                "archive_json": self.archive.to_json(),
                "spent": self._spent(),
            }
        )
        write_checkpoint(self.run_dir, self.state)

    def _finish(self, reason: StopReason) -> None:
        """End the run: the winner is the `leader` (fully evaluated individuals only; the seed
        when a budget stopped generation 0 before any individual finished training)."""
        winner = self._leader()
        self.modes.cleanup(keep=[self.individuals[winner.id]])
        self.state = self.state.model_copy(update={"stop_reason": reason, "winner_id": winner.id})
        self._checkpoint()
        self.log.emit(RunFinished(stop_reason=reason, winner_id=winner.id,
                                  generations=len(self.state.summaries)))  # fmt: skip


def _tee(first: Listener | None, second: Listener) -> Listener:
    def both(event: ProgressEvent) -> None:
        second(event)
        if first is not None:
            first(event)

    return both


def _top(views: list[Individual], n: int) -> list[Individual]:
    return rank(views)[:n]


def _context(
    rng: random.Random,
    failures: dict[str, list[str]],
    *,
    report: ReflectionReport | None = None,
    credit: CreditTable | None = None,
    mates: tuple[Individual, ...] = (),
) -> MutationContext:
    return MutationContext(rng=rng, failures=failures, report=report, credit=credit, mates=mates)


def _split_of(
    config: EvolveConfig,
    split: tuple[Sequence[str], Sequence[str]] | None,
    tasks: Mapping[str, Task],
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The run's (training, holdout) ids from exactly one source, each a task of `tasks`."""
    if (split is None) == config.calibrated:
        raise ConfigError(
            "the task split must come from one place",
            got="both split= and the config's train_tasks/holdout_tasks"
            if split is not None
            else "neither split= nor the config's train_tasks/holdout_tasks",
            fix="pass split=(train, holdout) from calibration, or set train_tasks and "
            "holdout_tasks in the config, not both",
        )
    train, holdout = split if split is not None else (config.train_tasks, config.holdout_tasks)
    ids = (tuple(train or ()), tuple(holdout or ()))
    unknown = [i for i in (*ids[0], *ids[1]) if i not in tasks]
    if unknown:
        raise ConfigError(
            f"unknown task id(s) in the split: {', '.join(unknown)}",
            got=f"bench {config.bench}",
            fix=f"choose from: {', '.join(sorted(tasks))}",
        )
    return ids


def _verdict_fields(verdict: StageVerdict) -> dict[str, Any]:
    return {name: getattr(verdict, name) for name in StageVerdict.model_fields}


def _common_ancestor(a: str, b: str, individuals: Mapping[str, Individual]) -> str | None:
    """The nearest common ancestor of `a` and `b` through lineage parents (an individual is its
    own ancestor at distance 0): the smallest summed distance, then the smaller id."""
    da, db = _ancestors(a, individuals), _ancestors(b, individuals)
    common = set(da) & set(db)
    return min(common, key=lambda i: (da[i] + db[i], i)) if common else None


def _ancestors(start: str, individuals: Mapping[str, Individual]) -> dict[str, int]:
    dist = {start: 0}
    frontier_ = [start]
    while frontier_:
        nxt = []
        for ind_id in frontier_:
            ind = individuals.get(ind_id)
            for p in ind.lineage.parents if ind is not None else ():
                if p not in dist and p in individuals:
                    dist[p] = dist[ind_id] + 1
                    nxt.append(p)
        frontier_ = nxt
    return dist


def _individual_id(base_seed: int, generation: int, slot: int, workflow: Workflow) -> str:
    """Deterministic: the same run makes the same ids, whatever was interrupted."""
    text = f"{base_seed}:{generation}:{slot}:{workflow_hash(workflow)}"
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def _hyperparameters(config: EvolveConfig) -> HyperparameterRecord:
    return HyperparameterRecord(
        population=config.population,
        tournament_k=config.tournament_k,
        elitism=config.elitism,
        repetitions=config.repetitions,
        novelty_threshold=config.novelty_threshold,
        mutation_max_tries=config.mutation_max_tries,
        operators=config.operators,
        strategy=config.strategy,
        exploration=config.exploration if config.strategy == "guided" else None,
        parents=config.parents,
        stages=config.stages,
        merge_rate=config.merge_rate,
    )
