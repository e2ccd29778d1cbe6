"""An evolutionary run from Python: `evolve`, `resume`, and the two steps the `outer-loop`
commands drive separately (`start`: calibrate and build generation 0; `open_run`: the engine
of a run directory). The CLI is options and printing over these; docs/api.md shows them."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from loopwright._version import __version__
from loopwright.errors import ConfigError, UsageError
from loopwright.evaluation import (
    EvalSettings,
    Evaluator,
    Executor,
    ExecutorSettings,
    make_executor,
)
from loopwright.models import LEDGER_FILE, CostLedger, require_prices, routed_factory
from loopwright.records import CycleRecord
from loopwright.runtime import EngineSettings, load_engine_settings
from loopwright.sandbox import default_sandbox
from loopwright.search._calibrate import calibrate, load_calibration_runs
from loopwright.search._checkpoint import CHECKPOINT_FILE, evolve_run, load_checkpoint
from loopwright.search._components import SearchComponents, default_components
from loopwright.search._config import EvolveConfig, recorded_config
from loopwright.search._engine import EvolutionEngine
from loopwright.search._outer_workflow import OuterLoop
from loopwright.search._progress import (
    CalibrationFinished,
    CalibrationRunFinished,
    Listener,
    ProgressLog,
    RunResumed,
)
from loopwright.search._report import EvolveResult, evolve_result
from loopwright.search._stop import RunStopped, ShouldStop, StopRequested, stoppable
from loopwright.store import INDEX_FILE, RunDir, RunMeta, check_cache_file
from loopwright.tasks import Benchmark, load_benchmark
from loopwright.workflow import resolve_task_workflow

__all__ = [
    "Execution",
    "check_inputs",
    "evolve",
    "executor_for",
    "open_run",
    "require_run",
    "resume",
    "start",
]


@dataclass(frozen=True, slots=True)
class Execution:
    """How evaluations run (never part of a run's config: a run may be resumed with other
    workers, or on a cluster). `cache` is the fitness cache file (default: the run's own
    `runs.db`, so a resumed run takes finished evaluations from it); `use_cache=False` runs
    every evaluation again."""

    settings: ExecutorSettings = field(default_factory=ExecutorSettings)
    cache: Path | None = None
    use_cache: bool = True

    def __post_init__(self) -> None:
        if not self.use_cache and self.cache is not None:
            raise UsageError(
                "a cache file and no cache contradict each other (--cache with --no-cache)",
                fix="pass one: cache=PATH, or use_cache=False",
            )

    def check(self) -> None:
        """The cache file can be opened (not a directory, in a writable directory, a SQLite
        file when it exists): a UsageError naming it otherwise. Creates nothing."""
        if self.cache is not None:
            check_cache_file(self.cache)


def evolve(
    config: EvolveConfig,
    run_dir: str | os.PathLike[str],
    *,
    executor: Executor | Execution | None = None,
    on_event: Listener | None = None,
    checked: Benchmark | None = None,
    should_stop: ShouldStop | None = None,
) -> EvolveResult:
    """Evolve `config.seed_workflow` on `config.bench` in the new directory `run_dir`:
    calibrate (unless both splits are given), then generations until a budget or convergence
    rule stops the run. Returns the result (`result.json` is written too).

    `executor`: an Executor you own (left open), or how to make one (an `Execution`; default:
    a local process pool with the run's fitness cache), closed at the end. `on_event` sees
    every progress event as it happens (the same typed events as `progress.jsonl`). Raises
    UsageError/ConfigError for bad input before anything is written; the run lock is taken
    before the first write, so of two calls on one new directory exactly one runs. A full disk
    raises DiskFullError (free space, then `resume`).

    Every gateway call (agents, reflector, mutator, crossover, judge gates) is written to
    `run_dir/ledger.jsonl` with its role, and `config.budgets.max_usd` bounds it: once the
    ledger reaches it no further model call is made (docs/models.md).

    `checked`: what `check_inputs(config, run_dir, executor)` returned, when the caller has
    already checked these inputs (the CLI does, before its banner); they are not checked again
    and the benchmark is not read again.

    `should_stop` (a `StopHandle` or any callable returning a bool) is asked after each
    finished evaluation; when it answers True the run stops there, resumable, its lock
    released, and the result so far is returned with `stopped=True` (`RunStopped` is raised
    instead when it stops during calibration, before there is a result)."""
    run_dir = Path(run_dir)
    config = with_engine(config)
    benchmark = checked or check_inputs(config, run_dir, executor)
    listener = stoppable(on_event, should_stop)
    try:
        with _created(config, run_dir, benchmark) as root, executor_for(executor, root) as pool:
            engine = OuterLoop(lambda: _build(config, root, pool, listener, benchmark), root).run()
    except StopRequested:
        return _stopped(run_dir)
    return evolve_result(engine.state)


def resume(
    run_dir: str | os.PathLike[str],
    *,
    executor: Executor | Execution | None = None,
    on_event: Listener | None = None,
    should_stop: ShouldStop | None = None,
) -> EvolveResult:
    """Continue the evolve run in `run_dir` from its checkpoint; finished evaluations are never
    repeated, and the result is the one an uninterrupted run would have reached. A run stopped
    during calibration continues its calibration (the runs it finished are kept). UsageError
    (creating nothing) when `run_dir` holds no evolve run or the cache cannot be opened.
    `should_stop` as for `evolve`."""
    run_dir = Path(run_dir)
    require_run(run_dir)
    if isinstance(executor, Execution):
        executor.check()
    try:
        return _resume(run_dir, executor, stoppable(on_event, should_stop))
    except StopRequested:
        return _stopped(run_dir)


def _stopped(run_dir: Path) -> EvolveResult:
    """The result so far of a run `should_stop` stopped (its checkpoint as it was left),
    marked `stopped`; RunStopped when it had no checkpoint yet (stopped in calibration)."""
    if not (run_dir / CHECKPOINT_FILE).is_file():
        raise RunStopped(run_dir)
    return replace(evolve_result(load_checkpoint(run_dir)), stopped=True)


def _resume(
    run_dir: Path, executor: Executor | Execution | None, on_event: Listener | None
) -> EvolveResult:
    with evolve_run(run_dir).reopen(), executor_for(executor, run_dir) as pool:

        def reopen() -> EvolutionEngine:
            if not (run_dir / CHECKPOINT_FILE).is_file():
                _require_calibrating(run_dir)
                config = _calibrating(run_dir)
                ProgressLog(run_dir, on_event).emit(RunResumed(generation=0, model=config.model))
                benchmark = load_benchmark(config.bench)
                _check_ids(benchmark, config)
                return _build(config, run_dir, pool, on_event, benchmark)
            engine = open_run(run_dir, pool, on_event)
            engine.log.emit(
                RunResumed(generation=engine.state.generation, model=engine.config.model)
            )
            return engine

        engine = OuterLoop(reopen, run_dir).run()
    return evolve_result(engine.state)


def _require_calibrating(run_dir: Path) -> None:
    """A run without a checkpoint was stopped during calibration; one that evaluated a
    generation (or finished) has lost its checkpoint, and rebuilding it from calibration would
    silently start the search again: ConfigError."""
    evaluated = sorted(p.name for p in run_dir.glob("gen_*") if p.is_dir())
    if evaluated or (run_dir / "result.json").is_file():
        raise ConfigError(
            "the evolve checkpoint is missing from a run that is past calibration",
            got=f"no {run_dir / CHECKPOINT_FILE}, but "
            + (f"{', '.join(evaluated)} evaluated" if evaluated else "result.json written"),
            fix="restore checkpoint.json from a copy (resume needs it to continue without "
            "repeating work), or start a new run in another directory",
        )


def start(
    config: EvolveConfig,
    run_dir: Path,
    *,
    executor: Executor | Execution | None = None,
    on_event: Listener | None = None,
    checked: Benchmark | None = None,
) -> EvolutionEngine:
    """Create the run: calibrate (unless both splits are given) and build generation 0 (the
    `outer-loop calibrate` step). The engine returned is not evaluated yet. `checked` as for
    `evolve`."""
    config = with_engine(config)
    benchmark = checked or check_inputs(config, run_dir, executor)
    with _created(config, run_dir, benchmark) as root, executor_for(executor, root) as pool:
        return _build(config, root, pool, on_event, benchmark)


def open_run(
    run_dir: Path, executor: Executor | None = None, on_event: Listener | None = None
) -> EvolutionEngine:
    """The engine of the evolve run in `run_dir`, from its checkpoint (the caller holds the
    run's lock while it changes the run). ConfigError when there is no checkpoint."""
    config = load_checkpoint(run_dir).config
    ledger = run_ledger(config, run_dir)
    benchmark = load_benchmark(config.bench)
    evaluator = _evaluator(config, benchmark, ledger, executor)
    return EvolutionEngine.open(
        run_dir, evaluator, components=_components(config, ledger), listener=on_event,
        benchmark=benchmark,
    )  # fmt: skip


def with_engine(config: EvolveConfig) -> EvolveConfig:
    """`config` with its engine settings resolved: as given, else the user's settings file
    (what `loopwright ab apply` writes; docs/ab.md). ConfigError for a broken file."""
    if config.engine is not None:
        return config
    return config.model_copy(update={"engine": load_engine_settings()})


def run_ledger(config: EvolveConfig, run_dir: Path) -> CostLedger:
    """The run's cost ledger, `run_dir/ledger.jsonl`, with the run's dollar budget."""
    return CostLedger(run_dir / LEDGER_FILE, max_usd=config.budgets.max_usd)


def check_inputs(
    config: EvolveConfig,
    run_dir: Path | None = None,
    executor: Executor | Execution | None = None,
) -> Benchmark:
    """The seed workflow, the benchmark, the given task ids, the model, the sandbox and the
    search components resolve; when given, `run_dir` can be created and the Execution's cache
    opened. Each a user error naming the fix otherwise; nothing is created (docs/bad-inputs.md).
    Returns the benchmark it loaded (pass it on as `evolve(..., checked=)`: read once).
    """
    resolve_task_workflow(config.seed_workflow)
    benchmark = load_benchmark(config.bench)
    _check_ids(benchmark, config)
    routed_factory(config.model, config.models, benchmark=benchmark, api_base=config.api_base)
    _check_priced(config)
    default_components(config)
    default_sandbox(config.sandbox)
    if run_dir is not None:
        evolve_run(run_dir).check_new()
    if isinstance(executor, Execution):
        executor.check()
    return benchmark


def require_run(run_dir: Path) -> None:
    """`run_dir` holds an evolve run (its checkpoint, config.yaml or lock): a UsageError
    otherwise, made before anything (the run lock, the cache) would be created there."""
    run = evolve_run(run_dir)
    RunDir.open(run_dir)
    if run.state() == "new" and not any(
        p.exists() for p in (run.lock_path, run_dir / CHECKPOINT_FILE)
    ):
        load_checkpoint(run_dir)  # raises its ConfigError: no evolve checkpoint, the fix


# -- helpers ----------------------------------------------------------------------------------


@contextmanager
def _created(config: EvolveConfig, run_dir: Path, benchmark: Benchmark) -> Iterator[Path]:
    """The new run directory, claimed through the run lifecycle (`EVOLVE_RUN.create`: locked
    before anything is written into it, its config.yaml: RunMeta, kind evolve), held while the
    block runs. Of two processes started together on one directory, exactly one gets it: the
    other is refused by the lock, or, when the first has already finished, by what it wrote."""
    with evolve_run(run_dir).create() as run:
        meta = RunMeta.new(
            "evolve",
            model=config.model,
            loopwright_version=__version__,
            benchmark=config.bench,
            benchmark_digest=benchmark.digest,
            seed=config.seed,
            config=config.model_dump(mode="json"),
        )
        run.write_meta(meta)
        yield run.path


def _calibrating(run_dir: Path) -> EvolveConfig:
    """The config of an evolve run stopped before its first checkpoint (during calibration),
    from its config.yaml. ConfigError (no checkpoint) when the directory holds no such run."""
    meta = RunDir.open(run_dir).meta()
    if meta is None or meta.kind != "evolve":
        raise ConfigError(
            f"no evolve checkpoint in {run_dir}",
            got=str(run_dir / CHECKPOINT_FILE),
            fix="start a run there first (loopwright evolve --run-dir DIR), or check the path",
        )
    return EvolveConfig.model_validate(recorded_config(meta.config))


@contextmanager
def executor_for(given: Executor | Execution | None, root: Path) -> Iterator[Executor]:
    """The executor for this call: the caller's own (left open), or one made from an
    Execution (default local) with the fitness cache, closed at the end."""
    if given is not None and not isinstance(given, Execution):
        yield given
        return
    execution = given or Execution()
    cache = (execution.cache or root / INDEX_FILE) if execution.use_cache else None
    executor = make_executor(execution.settings, cache=cache, log_dir=root)
    try:
        yield executor
    finally:
        executor.close()


def _build(
    config: EvolveConfig,
    root: Path,
    executor: Executor | None,
    on_event: Listener | None,
    benchmark: Benchmark,
) -> EvolutionEngine:
    """Calibrate (unless the split is given) and build generation 0 in `root` (locked), on
    `benchmark` (`config.bench`, loaded and its task ids checked by the caller)."""
    ledger = run_ledger(config, root)
    ledger.touch()
    evaluator = _evaluator(config, benchmark, ledger, executor)
    split = None
    if config.calibrated:
        log = ProgressLog(root, on_event)
        wanted = config.calibration.tasks
        tasks = [t for t in benchmark.tasks if wanted is None or t.id in wanted]
        total = len(tasks) * config.calibration.repetitions
        done = [len(load_calibration_runs(root))]  # a resumed calibration counts on

        def tick(record: CycleRecord) -> None:
            done[0] += 1
            log.emit(CalibrationRunFinished(task_id=record.task_id, repetition=record.repetition,
                                            done=done[0], total=total, score=record.score_end))  # fmt: skip

        seed = resolve_task_workflow(config.seed_workflow)
        result = calibrate(
            evaluator, seed, tasks, config.calibration, root, on_record=tick,
            holdout_repetitions=config.holdout_repetitions or config.repetitions,
        )  # fmt: skip
        log.emit(CalibrationFinished(calibration=result))
        split = (result.train, result.holdout)
    return EvolutionEngine.start(
        config, root, evaluator, split=split, components=_components(config, ledger),
        listener=on_event, benchmark=benchmark,
    )  # fmt: skip


def _components(config: EvolveConfig, ledger: CostLedger) -> SearchComponents:
    return default_components(config, ledger=ledger)


def _evaluator(
    config: EvolveConfig,
    benchmark: Benchmark,
    ledger: CostLedger | None,
    executor: Executor | None = None,
) -> Evaluator:
    """The run's evaluator: its models routed by tier and role, every gateway call in
    `ledger`, its engine settings, models and api_base part of the fitness-cache key."""
    config.choice.preload()  # before workers fork: one litellm import, not one per job
    models = config.models if (config.models.tiers or config.models.roles) else None
    settings = EvalSettings(
        model=config.model, sandbox=config.sandbox, seed=config.seed, repetitions=1,
        engine=config.engine or EngineSettings(), models=models, api_base=config.api_base,
    )  # fmt: skip
    prices = config.models.price_table()
    make_model = routed_factory(
        config.model, config.models, benchmark=benchmark, api_base=config.api_base,
        ledger=ledger, prices=prices,
    )  # fmt: skip
    return Evaluator(
        make_model, default_sandbox(config.sandbox), prices, settings, executor=executor
    )


def _check_priced(config: EvolveConfig) -> None:
    """A dollar budget needs a price for every LiteLLM model the run calls (the reflection's
    meta model included); see `models.require_prices`."""
    if config.budgets.max_usd is not None:
        meta = config.reflection.meta_model
        require_prices(config.choice, [meta] if meta else [], option="--max-usd")


def _check_ids(benchmark: Benchmark, config: EvolveConfig) -> None:
    ids = (*(config.train_tasks or ()), *(config.holdout_tasks or ()))
    known = {t.id for t in benchmark.tasks}
    unknown = [i for i in ids if i not in known]
    if unknown:
        raise UsageError(
            f"unknown task id(s): {', '.join(unknown)}",
            fix=f"choose from: {', '.join(sorted(known))}",
        )
