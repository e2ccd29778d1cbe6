"""An evolutionary run from Python: `evolve`, `resume`, and the two steps the `outer-loop`
commands drive separately (`start`: calibrate and build generation 0; `open_run`: the engine
of a run directory). The CLI is options and printing over these; docs/api.md shows them."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from loopwright._caller import spoken
from loopwright._version import __version__
from loopwright.errors import ConfigError, UsageError
from loopwright.evaluation import Executor, ExecutorSettings, make_executor
from loopwright.records import CycleRecord
from loopwright.runtime import load_engine_settings
from loopwright.search._calibrate import calibrate, load_calibration_runs
from loopwright.search._checkpoint import (
    CHECKPOINT_FILE,
    evolve_run,
    load_checkpoint,
    start_hint,
)
from loopwright.search._config import EvolveConfig, recorded_config
from loopwright.search._engine import EvolutionEngine
from loopwright.search._outer_workflow import OuterLoop, refuse_unstopped, write_final_result
from loopwright.search._progress import (
    CalibrationFinished,
    CalibrationRunFinished,
    Listener,
    ProgressLog,
    RunResumed,
)
from loopwright.search._report import EvolveResult, evolve_result
from loopwright.search._resolve import ResolvedRun, check_ids, resolve_run
from loopwright.search._stop import RunStopped, ShouldStop, StopRequested, stoppable
from loopwright.store import INDEX_FILE, RunDir, RunMeta, check_cache_file
from loopwright.workflow import resolve_task_workflow

__all__ = [
    "Execution",
    "check_inputs",
    "evolve",
    "executor_for",
    "finalize_run",
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
                "a cache file and no cache contradict each other "
                f"({spoken('cache=PATH with use_cache=False', '--cache with --no-cache')})",
                fix=spoken(
                    "pass one: cache=PATH, or use_cache=False", "pass --cache or --no-cache"
                ),
            )

    def check(self) -> None:
        """The cache file can be opened (not a directory, in a writable directory, a SQLite
        file when it exists): a UsageError naming it otherwise. Creates nothing."""
        if self.cache is not None:
            check_cache_file(self.cache, spoken("Execution.cache", "--cache"))


def evolve(
    config: EvolveConfig,
    run_dir: str | os.PathLike[str],
    *,
    executor: Executor | Execution | None = None,
    on_event: Listener | None = None,
    checked: ResolvedRun | None = None,
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

    `checked`: what `check_inputs(config, run_dir, executor)` returned (the run resolved once),
    when the caller has already checked these inputs (the CLI does, before its banner); they
    are not checked again and the benchmark is not read again.

    `should_stop` (a `StopHandle` or any callable returning a bool) is asked after each
    finished evaluation; when it answers True the run stops there, resumable, its lock
    released, and the result so far is returned with `stopped=True` (`RunStopped` is raised
    instead when it stops during calibration, before there is a result)."""
    run_dir = Path(run_dir)
    run = _checked(checked, run_dir) or check_inputs(config, run_dir, executor)
    listener = stoppable(on_event, should_stop)
    try:
        with _created(run) as root, executor_for(executor, root) as pool:
            engine = OuterLoop(lambda: _build(run, pool, listener), root).run()
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
                run = resolve_run(config, run_dir, new=False)
                check_ids(run.benchmark, config)
                return _build(run, pool, on_event)
            engine = open_run(run_dir, pool, on_event)
            engine.log.emit(
                RunResumed(generation=engine.state.generation, model=engine.config.model)
            )
            return engine

        engine = OuterLoop(reopen, run_dir).run()
    return evolve_result(engine.state)


def finalize_run(
    run_dir: str | os.PathLike[str],
    *,
    executor: Executor | Execution | None = None,
    on_event: Listener | None = None,
) -> Path:
    """The `finalize` step of a run driven a step at a time (`loopwright outer-loop finalize`):
    finish it as `evolve` does at its end and return the path of `<run>/result.json`. With
    `compare_designs` on in the run's config, the hand designs first run on holdout what they
    still lack (through `executor`, default local with the run's fitness cache; progress to
    `on_event`); then the result is written from the checkpoint.

    The caller holds the run's lock. UsageError when the run has not stopped yet (naming the
    next step). Idempotent: finished design runs are never repeated, and a second call writes
    the same figures."""
    run_dir = Path(run_dir)
    refuse_unstopped(run_dir)
    if load_checkpoint(run_dir).config.compare_designs:
        if isinstance(executor, Execution):
            executor.check()
        with executor_for(executor, run_dir) as pool:
            open_run(run_dir, pool, on_event).compare_designs()
    return write_final_result(run_dir)


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
    checked: ResolvedRun | None = None,
) -> EvolutionEngine:
    """Create the run: calibrate (unless both splits are given) and build generation 0 (the
    `outer-loop calibrate` step). The engine returned is not evaluated yet. `checked` as for
    `evolve`."""
    run = _checked(checked, Path(run_dir)) or check_inputs(config, run_dir, executor)
    with _created(run) as root, executor_for(executor, root) as pool:
        return _build(run, pool, on_event)


def open_run(
    run_dir: Path, executor: Executor | None = None, on_event: Listener | None = None
) -> EvolutionEngine:
    """The engine of the evolve run in `run_dir`, from its checkpoint (the caller holds the
    run's lock while it changes the run). ConfigError when there is no checkpoint."""
    checkpoint = load_checkpoint(run_dir)  # read once: the engine opens from this one
    run = resolve_run(checkpoint.config, run_dir, new=False)
    return EvolutionEngine.open(
        run_dir, run.evaluator(executor), components=run.components, listener=on_event,
        benchmark=run.benchmark, checkpoint=checkpoint,
    )  # fmt: skip


def with_engine(config: EvolveConfig) -> EvolveConfig:
    """`config` with its engine settings resolved: as given, else the user's settings file
    (what `loopwright ab apply` writes; docs/ab.md). ConfigError for a broken file."""
    if config.engine is not None:
        return config
    return config.model_copy(update={"engine": load_engine_settings()})


def check_inputs(
    config: EvolveConfig,
    run_dir: str | os.PathLike[str],
    executor: Executor | Execution | None = None,
) -> ResolvedRun:
    """The run resolved once (`resolve_run`): the seed workflow, the benchmark, the given task
    ids, the model, the sandbox and the search components resolve, `run_dir` can be created
    and the Execution's cache opened. Each a user error naming the fix otherwise; nothing is
    created (docs/bad-inputs.md). Its engine settings are resolved too (`with_engine`).
    Pass the result on as `evolve(..., checked=)`: checked once, the benchmark read once."""
    run = resolve_run(with_engine(config), Path(run_dir))
    if isinstance(executor, Execution):
        executor.check()
    return run


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


def _checked(checked: ResolvedRun | None, run_dir: Path) -> ResolvedRun | None:
    """`checked` when it was resolved for `run_dir` (a UsageError otherwise: it would run in
    the directory it was checked for, not the one asked for)."""
    if checked is not None and checked.run_dir != run_dir:
        raise UsageError(
            f"checked= was resolved for {checked.run_dir}, not for {run_dir}",
            fix="pass what check_inputs(config, run_dir, executor) returned for this run_dir",
        )
    return checked


@contextmanager
def _created(run: ResolvedRun) -> Iterator[Path]:
    """The new run directory, claimed through the run lifecycle (`EVOLVE_RUN.create`: locked
    before anything is written into it, its config.yaml: RunMeta, kind evolve), held while the
    block runs. Of two processes started together on one directory, exactly one gets it: the
    other is refused by the lock, or, when the first has already finished, by what it wrote."""
    config = run.config
    with evolve_run(run.run_dir).create() as claimed:
        meta = RunMeta.new(
            "evolve",
            model=config.model,
            loopwright_version=__version__,
            benchmark=config.bench,
            benchmark_digest=run.benchmark.digest,
            seed=config.seed,
            config=config.model_dump(mode="json"),
        )
        claimed.write_meta(meta)
        yield claimed.path


def _calibrating(run_dir: Path) -> EvolveConfig:
    """The config of an evolve run stopped before its first checkpoint (during calibration),
    from its config.yaml. ConfigError (no checkpoint) when the directory holds no such run."""
    meta = RunDir.open(run_dir).meta()
    if meta is None or meta.kind != "evolve":
        raise ConfigError(
            f"no evolve checkpoint in {run_dir}",
            got=str(run_dir / CHECKPOINT_FILE),
            fix=f"start a run there first ({start_hint()}), or check the path",
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
    run: ResolvedRun, executor: Executor | None, on_event: Listener | None
) -> EvolutionEngine:
    """Calibrate (unless the split is given) and build generation 0 in `run.run_dir` (locked),
    on the run's benchmark and components (resolved and checked by the caller)."""
    config, root, benchmark = run.config, run.run_dir, run.benchmark
    run.ledger.touch()
    evaluator = run.evaluator(executor)
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
        config, root, evaluator, split=split, components=run.components, listener=on_event,
        benchmark=benchmark,
    )  # fmt: skip
