"""An evolutionary run from Python: `evolve`, `resume`, and the two steps the `outer-loop`
commands drive separately (`start`: calibrate and build generation 0; `open_run`: the engine
of a run directory). The CLI is options and printing over these; docs/api.md shows them."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from loopwright import __version__
from loopwright.errors import ConfigError, UsageError
from loopwright.evaluation import (
    EvalSettings,
    Evaluator,
    Executor,
    ExecutorSettings,
    make_executor,
)
from loopwright.models import DEFAULT_PRICES, model_factory
from loopwright.records import CycleRecord
from loopwright.sandbox import default_sandbox
from loopwright.search._calibrate import calibrate, load_calibration_runs
from loopwright.search._checkpoint import CHECKPOINT_FILE, LOCK_FILE, RunLock, load_checkpoint
from loopwright.search._components import default_components
from loopwright.search._config import EvolveConfig
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
from loopwright.store import INDEX_FILE, META_FILE, RunDir, RunMeta, out_of_space
from loopwright.tasks import Benchmark, load_benchmark
from loopwright.workflow import resolve_task_workflow

__all__ = [
    "Execution",
    "check_inputs",
    "evolve",
    "executor_for",
    "open_run",
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


def evolve(
    config: EvolveConfig,
    run_dir: Path,
    *,
    executor: Executor | Execution | None = None,
    on_event: Listener | None = None,
) -> EvolveResult:
    """Evolve `config.seed_workflow` on `config.bench` in the new directory `run_dir`:
    calibrate (unless both splits are given), then generations until a budget or convergence
    rule stops the run. Returns the result (`result.json` is written too).

    `executor`: an Executor you own (left open), or how to make one (an `Execution`; default:
    a local process pool with the run's fitness cache), closed at the end. `on_event` sees
    every progress event as it happens (the same typed events as `progress.jsonl`). Raises
    UsageError/ConfigError for bad input before anything is written; the run lock is taken
    before the first write, so of two calls on one new directory exactly one runs. A full disk
    raises DiskFullError (free space, then `resume`)."""
    check_inputs(config)
    with (
        faults_named(run_dir),
        _created(config, run_dir) as root,
        executor_for(executor, root) as pool,
    ):
        engine = OuterLoop(lambda: _build(config, root, pool, on_event), root).run()
    return evolve_result(engine.state)


def resume(
    run_dir: Path,
    *,
    executor: Executor | Execution | None = None,
    on_event: Listener | None = None,
) -> EvolveResult:
    """Continue the evolve run in `run_dir` from its checkpoint; finished evaluations are never
    repeated, and the result is the one an uninterrupted run would have reached. A run stopped
    during calibration continues its calibration (the runs it finished are kept)."""
    with RunLock(run_dir), faults_named(run_dir), executor_for(executor, run_dir) as pool:

        def reopen() -> EvolutionEngine:
            if not (run_dir / CHECKPOINT_FILE).is_file():
                config = _calibrating(run_dir)
                ProgressLog(run_dir, on_event).emit(RunResumed(generation=0, model=config.model))
                return _build(config, run_dir, pool, on_event)
            engine = open_run(run_dir, pool, on_event)
            engine.log.emit(
                RunResumed(generation=engine.state.generation, model=engine.config.model)
            )
            return engine

        engine = OuterLoop(reopen, run_dir).run()
    return evolve_result(engine.state)


def start(
    config: EvolveConfig,
    run_dir: Path,
    *,
    executor: Executor | Execution | None = None,
    on_event: Listener | None = None,
) -> EvolutionEngine:
    """Create the run: calibrate (unless both splits are given) and build generation 0 (the
    `outer-loop calibrate` step). The engine returned is not evaluated yet."""
    check_inputs(config)
    with (
        faults_named(run_dir),
        _created(config, run_dir) as root,
        executor_for(executor, root) as pool,
    ):
        return _build(config, root, pool, on_event)


def open_run(
    run_dir: Path, executor: Executor | None = None, on_event: Listener | None = None
) -> EvolutionEngine:
    """The engine of the evolve run in `run_dir`, from its checkpoint (the caller holds the
    run's lock while it changes the run). ConfigError when there is no checkpoint."""
    config = load_checkpoint(run_dir).config
    evaluator = _evaluator(config, load_benchmark(config.bench), executor)
    return EvolutionEngine.open(run_dir, evaluator, listener=on_event)


def check_inputs(config: EvolveConfig) -> None:
    """The seed workflow, the benchmark, the given task ids and the search components resolve
    (each a user error naming the fix otherwise)."""
    resolve_task_workflow(config.seed_workflow)
    _check_ids(load_benchmark(config.bench), config)
    default_components(config)


# -- helpers ----------------------------------------------------------------------------------


@contextmanager
def _created(config: EvolveConfig, run_dir: Path) -> Iterator[Path]:
    """The new run directory, locked before anything is written into it (its config.yaml:
    RunMeta, kind evolve), held while the block runs. Of two processes started together on
    one directory, exactly one gets it: the other is refused by the lock, or, when the first
    has already finished, by what it wrote (`RunDir.create` again under the lock)."""
    root = _claim(run_dir).path
    with RunLock(root):
        run = _claim(root)
        meta = RunMeta.new(
            "evolve",
            model=config.model,
            loopwright_version=__version__,
            benchmark=config.bench,
            benchmark_digest=load_benchmark(config.bench).digest,
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
    return EvolveConfig.model_validate(meta.config)


def _claim(run_dir: Path) -> RunDir:
    return RunDir.create(run_dir, label="evolve", refuse=META_FILE, ignore=(LOCK_FILE,))


@contextmanager
def faults_named(run_dir: Path) -> Iterator[None]:
    """A full disk met in the block: one DiskFullError naming the path and the resume
    command (docs/runs.md), not a traceback."""
    with out_of_space(run_dir, resume=f"loopwright evolve --resume --run-dir {run_dir}"):
        yield


@contextmanager
def executor_for(given: Executor | Execution | None, root: Path) -> Iterator[Executor]:
    """The executor for this call: the caller's own (left open), or one made from an
    Execution (default local) with the fitness cache, closed at the end."""
    if given is not None and not isinstance(given, Execution):
        yield given
        return
    execution = given or Execution()
    cache = (execution.cache or root / INDEX_FILE) if execution.use_cache else None
    executor = make_executor(execution.settings, cache=cache)
    try:
        yield executor
    finally:
        executor.close()


def _build(
    config: EvolveConfig, root: Path, executor: Executor | None, on_event: Listener | None
) -> EvolutionEngine:
    """Calibrate (unless the split is given) and build generation 0 in `root` (locked)."""
    benchmark = load_benchmark(config.bench)
    evaluator = _evaluator(config, benchmark, executor)
    _check_ids(benchmark, config)
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
        result = calibrate(evaluator, seed, tasks, config.calibration, root, on_record=tick)
        log.emit(CalibrationFinished(calibration=result))
        split = (result.train, result.holdout)
    return EvolutionEngine.start(config, root, evaluator, split=split, listener=on_event)


def _evaluator(
    config: EvolveConfig, benchmark: Benchmark, executor: Executor | None = None
) -> Evaluator:
    settings = EvalSettings(
        model=config.model, sandbox=config.sandbox, seed=config.seed, repetitions=1
    )
    make_model = model_factory(config.model, benchmark=benchmark)
    return Evaluator(
        make_model, default_sandbox(config.sandbox), DEFAULT_PRICES, settings, executor=executor
    )


def _check_ids(benchmark: Benchmark, config: EvolveConfig) -> None:
    ids = (config.train_tasks or ()) + (config.holdout_tasks or ())
    known = {t.id for t in benchmark.tasks}
    unknown = [i for i in ids if i not in known]
    if unknown:
        raise UsageError(
            f"unknown task id(s): {', '.join(unknown)}",
            fix=f"choose from: {', '.join(sorted(known))}",
        )
