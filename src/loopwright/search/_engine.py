"""The evolution engine: the same generation lifecycle every generation, resumable.

Per generation: evaluate every unevaluated individual on the training tasks (with `stages`,
children first on nested minibatches, stopping those clearly worse than their parent); evaluate
the best on holdout (reported, never selected on); update the archive; log a GenerationSummary;
check budgets and convergence; select parents (tournament, or from the per-task Pareto
frontier); mutate or merge; filter novelty; register the children as ephemeral modes and drop
the modes of non-survivors.

Each step is a small strategy (search/strategies/) that takes the one run state (`RunState`:
the checkpoint's data and the run's handles); `run` below reads as the algorithm.

Determinism: evaluation draws nothing from the run RNG (each run's seed comes from the base
seed, task and repetition), so the RNG state saved at a generation boundary stays valid until
that generation's selection. A checkpoint is written after every finished evaluation; a run
killed anywhere and resumed ends identical to an uninterrupted one (durations aside).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path

from loopwright.evaluation import Evaluator
from loopwright.models import label_scope
from loopwright.search._budget import StopReason
from loopwright.search._checkpoint import Checkpoint, load_checkpoint, rng_from_state, rng_state
from loopwright.search._compare import compare_designs
from loopwright.search._components import SearchComponents, default_components
from loopwright.search._config import EvolveConfig
from loopwright.search._individual import Individual, Lineage
from loopwright.search._overfit import OverfitDetector
from loopwright.search._progress import (
    GenerationFinished,
    GenerationStarted,
    GenerationSummary,
    Listener,
    ProgressLog,
    RunFinished,
    RunStarted,
    Spent,
)
from loopwright.search._report import tied_best
from loopwright.search.strategies._acceptance import Acceptance, StagedAcceptance
from loopwright.search.strategies._evaluation import EvaluationRound, planned
from loopwright.search.strategies._proposal import Proposer, SearchProposer
from loopwright.search.strategies._reflection import ReflectionStep
from loopwright.search.strategies._spend import SpendMeter
from loopwright.search.strategies._state import RunState, StateField, individual_id, split_of
from loopwright.search.strategies._stopping import BudgetStopping, Stopping
from loopwright.search.strategies._summary import summarise
from loopwright.search.strategies._survivors import Elitism, Survivors
from loopwright.store import is_simulated
from loopwright.tasks import Benchmark, Task, load_benchmark
from loopwright.workflow import resolve_task_workflow

__all__ = ["EvolutionEngine"]


class EvolutionEngine:
    """Runs (or resumes) one evolutionary run in `run_dir`. Not thread-safe; one per process
    (the CLI holds the run lock, `evolve_run(run_dir).lock()`). Build with `start` (fresh) or `open` (resume); the
    constructor takes a checkpoint and its tasks as they are. The run's state is `self.now`
    (a `RunState`); `state`, `individuals`, `rng`, `config` and `run_dir` read and write it."""

    def __init__(
        self,
        checkpoint: Checkpoint,
        evaluator: Evaluator,
        tasks: dict[str, Task],
        run_dir: Path,
        components: SearchComponents,
        listener: Listener | None = None,
    ) -> None:
        self.evaluator = evaluator
        self.parts = components
        self.now = RunState(
            config=checkpoint.config,
            checkpoint=checkpoint,
            individuals=dict(checkpoint.individuals),
            rng=rng_from_state(checkpoint.rng_state),
            tasks=tasks,
            run_dir=run_dir,
            archive=components.load_archive(checkpoint.archive_json)
            if checkpoint.archive_json
            else components.new_archive(),
            novelty=components.new_novelty(),
            spend=SpendMeter(checkpoint.spent, checkpoint.individuals.values()),
            listener=listener,
        )
        for ind in self.now.individuals.values():  # insertion order = creation order
            self.now.novelty.remember(ind)
        self.overfit = OverfitDetector(checkpoint.config.overfit_gap)
        self.round = EvaluationRound(evaluator)
        self.acceptance: Acceptance = StagedAcceptance()
        self.proposer: Proposer = SearchProposer(components)
        self.survivors: Survivors = Elitism()
        self.stopping: Stopping = BudgetStopping()
        self.reflection = ReflectionStep(components.reflector, components.ledger)
        self.now.count_meta(self.parts.ledger)

    state: StateField[Checkpoint] = StateField("checkpoint")
    individuals: StateField[dict[str, Individual]] = StateField("individuals")
    rng: StateField[random.Random] = StateField("rng")
    config: StateField[EvolveConfig] = StateField("config")
    run_dir: StateField[Path] = StateField("run_dir")
    tasks: StateField[dict[str, Task]] = StateField("tasks")
    log: StateField[ProgressLog] = StateField("log")

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
        benchmark: Benchmark | None = None,
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
        (`reflects_first`): evaluate, reflect, then mutate. `benchmark` is `config.bench`
        when the caller has loaded it (default: loaded here)."""
        seed = resolve_task_workflow(config.seed_workflow)
        tasks = _tasks(config, benchmark)
        train, holdout = split_of(config, split, tasks)
        rng = random.Random(config.seed)
        seed_ind = Individual(
            id=individual_id(config.seed, 0, 0, seed),
            generation=0,
            workflow=seed,
            lineage=Lineage(operator="seed"),
        )
        blank = Checkpoint(
            config=config, train_tasks=train, holdout_tasks=holdout, generation=0,
            population=(seed_ind.id,), individuals={seed_ind.id: seed_ind}, seed_id=seed_ind.id,
            rng_state=rng_state(rng), archive_json=None, spent=Spent(), summaries=(),
        )  # fmt: skip
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
            population = engine.proposer.generation_zero(
                engine.now, seed_ind, engine.reflects_first
            )
        engine.now.count_meta(parts.ledger)
        engine._set_population(population, generation=0)
        return engine

    @classmethod
    def open(
        cls,
        run_dir: Path,
        evaluator: Evaluator,
        *,
        components: SearchComponents | None = None,
        listener: Listener | None = None,
        benchmark: Benchmark | None = None,
        checkpoint: Checkpoint | None = None,
    ) -> EvolutionEngine:
        """The run in `run_dir` where its checkpoint left it (resume with `run()`): the tasks
        are reloaded from the stored config's `bench`, `components` default to
        `default_components` of the stored config. `checkpoint` is the one the caller has just
        read with `load_checkpoint(run_dir)`, so that the run's files are read once; read here
        when None. ConfigError when there is no readable checkpoint or the bench no longer
        resolves. Does not lock the run directory."""
        if checkpoint is None:
            checkpoint = load_checkpoint(run_dir)
        config = checkpoint.config
        tasks = _tasks(config, benchmark)
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
        """Run generations until a budget or convergence rule stops the run, then (with
        `compare_designs`) the hand designs on holdout; return why the search stopped."""
        while not self.finished:
            if self.state.phase == "evaluate":
                self.evaluate_generation()
                if not self.finished:
                    self.reflect()
            else:
                self.advance()
        self.compare_designs()
        return self.state.stop_reason  # type: ignore[return-value]  # set by _finish

    def evaluate_generation(self) -> GenerationSummary | None:
        """Step 1-5 of a generation: the staged minibatches, training, holdout of the best,
        archive, summary. A spending budget that runs out stops the run after the summary;
        the training-run budget lets the holdout of the generation's best run first."""
        now = self.now
        now.log.emit(GenerationStarted(generation=now.checkpoint.generation,
                                       population=list(now.checkpoint.population),
                                       planned=planned(now)))  # fmt: skip
        reason = self.acceptance.screen(now, self.round)
        if reason is None:
            stopped = now.checkpoint.stopped_ids()
            going_on = [i for i in now.checkpoint.population if i not in stopped]
            reason = self.round.evaluate(now, "train", going_on)
        if reason in (None, "max_train_evaluations"):
            reason = self.round.holdout(now) or reason
        reason = reason or self.stopping.after_evaluation(now)
        summary = summarise(now, self.overfit)
        now.update(summaries=(*now.checkpoint.summaries, summary), phase="breed")
        now.save()
        now.log.emit(GenerationFinished(**summary.model_dump()))
        if reason is not None:
            self._finish(reason)
        return summary

    def reflect(self) -> None:
        """Between evaluation and breeding: reflect on the generation's training exhaust
        (`ReflectionStep.reflect`: written once per generation, draws nothing from the RNG)."""
        self.reflection.reflect(self.now)

    def advance(self) -> StopReason | None:
        """After a summary: stop if converged, else select, mutate and move to the next
        generation. Returns the stop reason when the run ended."""
        reason = self.stopping.before_breeding(self.now)
        if reason is not None:
            self._finish(reason)
            return reason
        gen = self.state.generation
        views = self.now.contenders()
        elites = self.survivors.survivors(self.now, views)
        report = self.reflection.guidance(self.now, gen)
        with label_scope(run=self.run_dir.name):
            n = self.config.population - len(elites)
            children = self.proposer.offspring(self.now, views, n, gen + 1, report)
        self.now.count_meta(self.parts.ledger)
        if not children:
            self._finish("no_offspring")
            return "no_offspring"
        survivors = [self.individuals[e.id] for e in elites]
        self._set_population([*survivors, *children], generation=gen + 1)
        return None

    def compare_designs(self) -> None:
        """After the run has stopped, with `compare_designs` on: the built-in hand designs on
        the holdout runs (search/_compare.py; what they already hold is not run again). Does
        nothing when the option is off."""
        if self.config.compare_designs:
            compare_designs(self.now, self.evaluator)

    def tied_best(self) -> tuple[Individual, ...]:
        """The individuals of the current population tied at the best training fitness, best
        first (the first is the winner): see `loopwright.search.tied_best`."""
        return tied_best(self.state.model_copy(update={"individuals": dict(self.individuals)}))

    # -- steps --------------------------------------------------------------------------------

    def _set_population(self, population: list[Individual], *, generation: int) -> None:
        for ind in population:
            self.individuals.setdefault(ind.id, ind)
            self.now.modes.register(ind)
        self.now.modes.cleanup(keep=population)
        self.now.update(generation=generation, population=tuple(i.id for i in population),
                        rng_state=rng_state(self.rng), phase="evaluate")  # fmt: skip
        self.now.save()

    def _finish(self, reason: StopReason) -> None:
        """End the run with its winner (`RunState.winner`: the leader, fully evaluated
        individuals only, or the objective's point on the cost front)."""
        winner = self.now.winner()
        self.now.modes.cleanup(keep=[self.individuals[winner.id]])
        self.now.update(stop_reason=reason, winner_id=winner.id)
        self.now.save()
        self.log.emit(RunFinished(stop_reason=reason, winner_id=winner.id,
                                  generations=len(self.state.summaries)))  # fmt: skip


def _tasks(config: EvolveConfig, benchmark: Benchmark | None) -> dict[str, Task]:
    """The run's tasks by id: `benchmark`'s, else loaded from `config.bench`."""
    return {t.id: t for t in (benchmark or load_benchmark(config.bench)).tasks}
