"""`loopwright evolve` (a whole run) and `loopwright outer-loop <step>` (one step at a time)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
import yaml
from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from loopwright import __version__
from loopwright.cli._app import app
from loopwright.cli.report import report_at_end
from loopwright.errors import UsageError
from loopwright.evaluation import (
    EvalSettings,
    Evaluator,
    Executor,
    ExecutorSettings,
    executor_settings,
    make_executor,
)
from loopwright.models import DEFAULT_PRICES, model_factory
from loopwright.reflection import describe_report, load_reflection
from loopwright.report import source_commit
from loopwright.sandbox import default_sandbox
from loopwright.search._calibrate import Calibration, calibrate
from loopwright.search._checkpoint import CHECKPOINT_FILE, RunLock, load_checkpoint
from loopwright.search._components import default_components
from loopwright.search._config import EvolveConfig, parse_config
from loopwright.search._credit import CreditRow, credit_table
from loopwright.search._engine import EvolutionEngine
from loopwright.search._modes import EphemeralModeRegistry
from loopwright.search._outer_workflow import OuterLoop
from loopwright.search._reflect_step import reflect_generation
from loopwright.search._report import EvolveResult, evolve_result
from loopwright.store import INDEX_FILE, RunIndex
from loopwright.tasks import Benchmark, load_benchmark
from loopwright.workflow import resolve_task_workflow, to_mermaid

console = Console(highlight=False, width=None if sys.stdout.isatty() else 160)
err_console = Console(stderr=True, highlight=False)

outer = typer.Typer(help="The outer loop one step at a time, on a run directory.")
app.add_typer(outer, name="outer-loop")

__all__ = ["evolve", "outer"]

_SIM_BANNER = (
    "[bold yellow]SIMULATED[/] results: the offline `sim` model stands in for an LLM "
    "(docs/sim-model.md). Scores show how workflows fare against the simulator, not a real model."
)

RunDir = Annotated[Path, typer.Option("--run-dir", help="The run directory.")]
ExecutorKind = Annotated[
    str, typer.Option("--executor", help="Where evaluations run: local (process pool) or ray.")
]
Workers = Annotated[
    int | None,
    typer.Option("--workers", help="Evaluations at once (default: cores; Ray: cluster CPUs)."),
]
RayAddress = Annotated[
    str | None,
    typer.Option("--ray-address", help="HOST:PORT of a Ray cluster (default: a local Ray)."),
]
CachePath = Annotated[
    Path | None, typer.Option("--cache", help="Fitness cache file (default: RUN_DIR/runs.db).")
]
NoCache = Annotated[bool, typer.Option("--no-cache", help="Run every evaluation again.")]
JobTimeout = Annotated[
    float | None,
    typer.Option("--job-timeout", help="Seconds per evaluation (default: task timeouts + 60)."),
]
Strategy = Annotated[
    str, typer.Option("--strategy", help="guided (reflection + credit) or random mutations.")
]
Exploration = Annotated[
    float, typer.Option("--exploration", help="Share of random mutations under guided.")
]
FirstChildren = Annotated[
    str,
    typer.Option(
        "--first-children",
        help="guided: breed the first children from the reflection on generation 0 (reflected)"
        " or put blind mutations of the seed in generation 0 (blind).",
    ),
]


@app.command("evolve")
def evolve(
    bench: Annotated[str | None, typer.Option("--bench", help="Benchmark name or folder.")] = None,
    seed_workflow: Annotated[
        str | None, typer.Option("--seed-workflow", help="Built-in name or YAML/JSON file.")
    ] = None,
    model: Annotated[str, typer.Option("--model", help="sim or scripted:FILE.")] = "sim",
    generations: Annotated[int, typer.Option("--generations", help="Max generations.")] = 4,
    population: Annotated[int, typer.Option("--population", help="Population size.")] = 6,
    seed: Annotated[int, typer.Option("--seed", help="Fixes every random choice.")] = 0,
    run_dir: Annotated[Path | None, typer.Option("--run-dir", help="Default: runs/<id>.")] = None,
    resume: Annotated[
        bool, typer.Option("--resume", help="Continue the run in --run-dir.")
    ] = False,
    reps: Annotated[int, typer.Option("--reps", help="Repetitions per training task.")] = 1,
    holdout_reps: Annotated[
        int, typer.Option("--holdout-reps", help="Repetitions per holdout task.")
    ] = 3,
    tournament_k: Annotated[int, typer.Option("--tournament-k")] = 3,
    elitism: Annotated[int, typer.Option("--elitism", help="Survivors per generation.")] = 2,
    train: Annotated[str | None, typer.Option("--train", help="Training task ids.")] = None,
    holdout: Annotated[str | None, typer.Option("--holdout", help="Holdout task ids.")] = None,
    band: Annotated[str, typer.Option("--band", help="Calibration pass-rate band.")] = "0.3,0.7",
    calibration_reps: Annotated[int, typer.Option("--calibration-reps")] = 3,
    max_evaluations: Annotated[int | None, typer.Option("--max-evaluations")] = None,
    max_train_evaluations: Annotated[
        int | None, typer.Option("--max-train-evaluations", help="Training runs only.")
    ] = None,
    max_usd: Annotated[float | None, typer.Option("--max-usd")] = None,
    max_wall_s: Annotated[float | None, typer.Option("--max-wall-s")] = None,
    target_score: Annotated[float | None, typer.Option("--target-score")] = None,
    plateau: Annotated[
        int | None, typer.Option("--plateau", help="Stop after P flat gens.")
    ] = None,
    overfit_gap: Annotated[float, typer.Option("--overfit-gap")] = 0.2,
    sandbox: Annotated[str, typer.Option("--sandbox", help="auto, bubblewrap, local.")] = "auto",
    no_report: Annotated[
        bool, typer.Option("--no-report", help="Do not write RUN_DIR/report.html at the end.")
    ] = False,
    executor: ExecutorKind = "local",
    workers: Workers = None,
    ray_address: RayAddress = None,
    cache: CachePath = None,
    no_cache: NoCache = False,
    job_timeout: JobTimeout = None,
    strategy: Strategy = "guided",
    exploration: Exploration = 0.25,
    first_children: FirstChildren = "reflected",
) -> None:
    """Evolve workflows: calibrate, then generations of train/holdout/select/mutate."""
    run = _RunOptions(executor_settings(executor, workers=workers, job_timeout_s=job_timeout,
                                        ray_address=ray_address), cache, no_cache)  # fmt: skip
    if resume:
        if run_dir is None:
            raise UsageError("--resume needs --run-dir", fix="pass the run directory to resume")
        _resume(run_dir, run, report=not no_report)
        return
    if bench is None or seed_workflow is None:
        raise UsageError("evolve needs --bench and --seed-workflow", fix="pass both")
    low, high = _floats(band, "--band")
    config = parse_config(
        {
            "seed_workflow": seed_workflow, "bench": bench, "model": model, "sandbox": sandbox,
            "seed": seed, "population": population, "tournament_k": tournament_k,
            "elitism": min(elitism, max(population - 1, 1)), "repetitions": reps,
            "holdout_repetitions": holdout_reps, "train_tasks": _ids(train), "holdout_tasks": _ids(holdout),
            "overfit_gap": overfit_gap, "strategy": strategy, "exploration": exploration,
            "first_children": first_children,
            "calibration": {"band_low": low, "band_high": high, "repetitions": calibration_reps},
            "budgets": {
                "max_generations": generations, "max_evaluations": max_evaluations,
                "max_train_evaluations": max_train_evaluations,
                "max_usd": max_usd, "max_wall_s": max_wall_s, "target_score": target_score,
                "plateau_generations": plateau,
            },
        }
    )  # fmt: skip
    _check_inputs(config)  # before anything is written: a bad input leaves no run dir
    root = _new_run_dir(run_dir, config)
    with RunLock(root), _executor(run, root) as pool:
        _drive(lambda: _build(config, root, pool), root, report=not no_report)


@outer.command("calibrate")
def outer_calibrate(
    run_dir: RunDir,
    bench: Annotated[str, typer.Option("--bench")],
    seed_workflow: Annotated[str, typer.Option("--seed-workflow")],
    model: Annotated[str, typer.Option("--model")] = "sim",
    population: Annotated[int, typer.Option("--population")] = 6,
    generations: Annotated[int, typer.Option("--generations")] = 4,
    seed: Annotated[int, typer.Option("--seed")] = 0,
    band: Annotated[str, typer.Option("--band")] = "0.3,0.7",
    train: Annotated[str | None, typer.Option("--train", help="Training task ids.")] = None,
    holdout: Annotated[str | None, typer.Option("--holdout", help="Holdout task ids.")] = None,
    holdout_reps: Annotated[int, typer.Option("--holdout-reps")] = 3,
    sandbox: Annotated[str, typer.Option("--sandbox", help="auto, bubblewrap, local.")] = "auto",
    executor: ExecutorKind = "local",
    workers: Workers = None,
    ray_address: RayAddress = None,
    cache: CachePath = None,
    no_cache: NoCache = False,
    job_timeout: JobTimeout = None,
    strategy: Strategy = "guided",
    exploration: Exploration = 0.25,
    first_children: FirstChildren = "reflected",
) -> None:
    """Create the run: calibrate the seed, choose the split, build generation 0.

    With both --train and --holdout the split is taken as given and nothing is calibrated."""
    low, high = _floats(band, "--band")
    config = parse_config(
        {
            "seed_workflow": seed_workflow, "bench": bench, "model": model, "seed": seed,
            "population": population, "elitism": min(2, population - 1), "sandbox": sandbox,
            "train_tasks": _ids(train), "holdout_tasks": _ids(holdout),
            "holdout_repetitions": holdout_reps, "strategy": strategy, "exploration": exploration,
            "first_children": first_children,
            "calibration": {"band_low": low, "band_high": high},
            "budgets": {"max_generations": generations},
        }
    )  # fmt: skip
    run = _RunOptions(executor_settings(executor, workers=workers, job_timeout_s=job_timeout,
                                        ray_address=ray_address), cache, no_cache)  # fmt: skip
    engine, lock = _start(config, run_dir, run)
    with lock:
        console.print(f"generation 0 ready: {len(engine.state.population)} individuals")


@outer.command("evaluate")
def outer_evaluate(
    run_dir: RunDir,
    executor: ExecutorKind = "local",
    workers: Workers = None,
    ray_address: RayAddress = None,
    cache: CachePath = None,
    no_cache: NoCache = False,
    job_timeout: JobTimeout = None,
) -> None:
    """Evaluate the current generation (training, holdout of the best) and log its summary."""
    run = _RunOptions(executor_settings(executor, workers=workers, job_timeout_s=job_timeout,
                                        ray_address=ray_address), cache, no_cache)  # fmt: skip
    with RunLock(run_dir), _executor(run, run_dir) as pool:
        engine, benchmark = _open(run_dir, pool)
        if engine.finished or engine.state.phase != "evaluate":
            raise UsageError("this generation is already evaluated", fix="run outer-loop evolve")
        _with_progress(engine.evaluate_generation)
        console.print(_generation_table(evolve_result(engine.state), benchmark))


@outer.command("evolve")
def outer_evolve(run_dir: RunDir) -> None:
    """Check convergence; select parents, mutate and move to the next generation."""
    engine, _ = _open(run_dir)
    with RunLock(run_dir):
        if engine.finished or engine.state.phase != "breed":
            raise UsageError("evaluate the current generation first", fix="outer-loop evaluate")
        reason = engine.advance()
        if reason:
            console.print(f"run finished: {reason}")
        else:
            console.print(f"generation {engine.state.generation} ready")


@outer.command("reflect")
def outer_reflect(
    run_dir: RunDir,
    generation: Annotated[
        int | None, typer.Option("--generation", help="Default: the current generation.")
    ] = None,
) -> None:
    """Reflect on an evaluated generation's exhaust; write and print reflection_gen{N}.json."""
    with RunLock(run_dir):
        engine, _ = _open(run_dir)
        path = reflect_generation(engine, generation)
    console.print(describe_report(load_reflection(path)), markup=False)
    console.print(f"written to {path}")


@outer.command("status")
def outer_status(
    run_dir: RunDir,
    reflection: Annotated[
        bool, typer.Option("--reflection", help="Also print the latest reflection report.")
    ] = False,
) -> None:
    """Print the generation table, the best workflow, spend, the overfit signal and the credit
    table (which suggestion kinds and operators made children that beat their parents)."""
    checkpoint = load_checkpoint(run_dir)
    result = evolve_result(checkpoint)
    _report(result, simulated=_simulated(checkpoint.config.model))
    console.print(_index_line(run_dir))
    rows = credit_table(checkpoint.individuals.values()).rows
    if rows:
        console.print(_credit_table(rows))
    if reflection:
        found = sorted(run_dir.glob("reflection_gen*.json"), key=_generation_of)
        if not found:
            console.print("no reflection yet: run `loopwright outer-loop reflect`")
        else:
            console.print(describe_report(load_reflection(found[-1])), markup=False)


@outer.command("promote")
def outer_promote(
    run_dir: RunDir,
    name: Annotated[str, typer.Argument(help="Name of the permanent workflow.")],
    force: Annotated[bool, typer.Option("--force", help="Promote even if the CI has 0.")] = False,
    library: Annotated[Path | None, typer.Option("--library", help="Workflow library.")] = None,
) -> None:
    """Copy the winner into the user's workflow library (refused if its gain CI includes 0)."""
    result = evolve_result(load_checkpoint(run_dir))
    if not force and (result.gain is None or result.gain.includes_zero):
        raise UsageError(
            "the winner's holdout gain over the seed is not significant",
            got="no holdout gain" if result.gain is None else result.gain.describe(),
            fix="evolve longer or on more holdout tasks, or pass --force",
        )
    registry = EphemeralModeRegistry(run_dir)
    if result.winner.mode not in registry.names():
        registry.register(result.winner)
    path = registry.promote(result.winner.mode, name, library, overwrite=force)
    console.print(f"promoted {result.winner.mode} as {name}: {path}")


# -- helpers ----------------------------------------------------------------------------------


class _RunOptions:
    """How this invocation executes evaluations (never part of the run's config)."""

    def __init__(self, settings: ExecutorSettings, cache: Path | None, no_cache: bool) -> None:
        if no_cache and cache is not None:
            raise UsageError("--cache and --no-cache contradict each other", fix="pass one")
        self.settings, self.cache, self.no_cache = settings, cache, no_cache


@contextmanager
def _executor(run: _RunOptions, root: Path) -> Iterator[Executor]:
    """The executor for this invocation, with the fitness cache (default: the run's own
    runs.db, so a resumed run takes finished evaluations from it); closed at the end."""
    cache = None if run.no_cache else (run.cache or root / INDEX_FILE)
    executor = make_executor(run.settings, cache=cache)
    try:
        yield executor
    finally:
        executor.close()


def _simulated(model: str) -> bool:
    return model.partition("?")[0] == "sim"


def _index_line(run_dir: Path) -> str:
    """What the run index says the run paid (queried, not rescanned: docs/store.md)."""
    if not (run_dir / INDEX_FILE).is_file():
        return "run index: none (a run from before the index)"
    with RunIndex.of_run(run_dir) as index:
        s = index.spend(run_dir.name)
    return (
        f"run index: {s.evaluations} evaluations ({s.cached} from the cache), paid "
        f"${s.paid_usd:.2f}, saved ${s.saved_usd:.2f}, {s.failed_attempts} failed attempts"
    )


def _start(
    config: EvolveConfig, run_dir: Path | None, run: _RunOptions
) -> tuple[EvolutionEngine, RunLock]:
    _check_inputs(config)
    root = _new_run_dir(run_dir, config)
    lock = RunLock(root)
    with lock, _executor(run, root) as pool:
        engine = _build(config, root, pool)
    return engine, lock


def _check_inputs(config: EvolveConfig) -> None:
    """The seed workflow, the benchmark, the given task ids and the search components resolve
    (each a user error naming the fix otherwise)."""
    resolve_task_workflow(config.seed_workflow)
    _check_ids(
        load_benchmark(config.bench), (config.train_tasks or ()) + (config.holdout_tasks or ())
    )
    default_components(config)


def _build(config: EvolveConfig, root: Path, executor: Executor | None = None) -> EvolutionEngine:
    """Calibrate (unless the split is given) and build generation 0 in `root` (locked)."""
    seed_wf = resolve_task_workflow(config.seed_workflow)
    benchmark = load_benchmark(config.bench)
    evaluator = _evaluator(config, benchmark, executor)
    _check_ids(benchmark, (config.train_tasks or ()) + (config.holdout_tasks or ()))
    components = default_components(config)
    if _simulated(config.model):
        err_console.print(_SIM_BANNER)
    split = None
    if config.calibrated:
        result = _calibrate(config, evaluator, seed_wf, benchmark, root)
        split = (result.train, result.holdout)
    return EvolutionEngine.start(
        config, root, evaluator, split=split, components=components, listener=_listener()
    )


def _open(run_dir: Path, executor: Executor | None = None) -> tuple[EvolutionEngine, Benchmark]:
    checkpoint = load_checkpoint(run_dir)
    config = checkpoint.config
    benchmark = load_benchmark(config.bench)
    engine = EvolutionEngine(
        checkpoint,
        _evaluator(config, benchmark, executor),
        {t.id: t for t in benchmark.tasks},
        run_dir,
        default_components(config),
        _listener(),
    )
    return engine, benchmark


def _resume(run_dir: Path, run: _RunOptions, *, report: bool = True) -> None:
    with RunLock(run_dir), _executor(run, run_dir) as pool:

        def reopen() -> EvolutionEngine:
            engine, _ = _open(run_dir, pool)
            if _simulated(engine.state.config.model):
                err_console.print(_SIM_BANNER)
            engine.log.emit("run_resumed", generation=engine.state.generation)
            return engine

        _drive(reopen, run_dir, report=report)


def _evaluator(
    config: EvolveConfig, benchmark: Benchmark, executor: Executor | None = None
) -> Evaluator:
    settings = EvalSettings(
        model=config.model, sandbox=config.sandbox, seed=config.seed, repetitions=1
    )
    make_model = model_factory(config.model, benchmark=benchmark)
    sandbox = default_sandbox(config.sandbox)
    return Evaluator(make_model, sandbox, DEFAULT_PRICES, settings, executor=executor)


def _calibrate(
    config: EvolveConfig, evaluator: Evaluator, seed_wf: Any, bench: Benchmark, root: Path
) -> Calibration:
    wanted = config.calibration.tasks
    tasks = [t for t in bench.tasks if wanted is None or t.id in wanted]
    total = len(tasks) * config.calibration.repetitions
    with Progress(
        SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
        console=err_console, transient=True,
    ) as progress:  # fmt: skip
        bar = progress.add_task(f"calibrating 0/{total}", total=total)
        done = [0]

        def tick(record: Any) -> None:
            done[0] += 1
            progress.update(bar, description=f"calibrating {done[0]}/{total}: {record.task_id}")

        result = calibrate(evaluator, seed_wf, tasks, config.calibration, root, on_record=tick)
    table = Table(title="calibration (pass rate of the seed)", title_justify="left", box=None)
    for col in ("task", "level", "pass rate", "score", "split"):
        table.add_column(col)
    for row in result.rows:
        table.add_row(row.task_id, str(row.level), _fmt(row.pass_rate), _fmt(row.mean_score),
                      row.verdict)  # fmt: skip
    console.print(table)
    return result


_LIVE: dict[str, Any] = {}


def _listener() -> Any:
    def on_event(event: str, fields: dict[str, Any]) -> None:
        progress = _LIVE.get("progress")
        if progress is None:
            return
        bar = _LIVE["bar"]
        if event == "generation_started":
            _LIVE["gen"] = fields["generation"]
            _LIVE["n"] = 0
        elif event == "evaluation_finished":
            _LIVE["n"] = _LIVE.get("n", 0) + 1
        elif event == "generation_finished":
            progress.console.print(_summary_line(fields))
            return
        else:
            return
        progress.update(bar, description=_live_text(fields))

    return on_event


def _live_text(fields: dict[str, Any]) -> str:
    text = f"generation {_LIVE.get('gen', 0)}: {_LIVE.get('n', 0)} evaluations"
    if "task_id" in fields:
        text += f" (last {fields['individual_id'][:8]} {fields['task_id']}"
        text += f" rep {fields['repetition']}: {fields['score']:.2f})"
    return text


def _summary_line(f: dict[str, Any]) -> str:
    alarm = " [bold red]OVERFIT[/]" if f["overfit"]["alarm"] else ""
    return (
        f"gen {f['generation']}: train best {_fmt(f['train_best'])} mean {_fmt(f['train_mean'])}"
        f" holdout {_fmt(f['holdout_best'])}{alarm} coverage {f['archive_coverage']:.2f}"
        f" spent {f['spent']['evaluations']} evals ${f['spent']['usd']:.2f}"
    )


def _with_progress(step: Callable[[], object]) -> None:
    with Progress(
        SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
        console=err_console, transient=True,
    ) as progress:  # fmt: skip
        _LIVE.update(progress=progress, bar=progress.add_task("evolving", total=None))
        try:
            step()
        finally:
            _LIVE.clear()


def _drive(
    open_engine: Callable[[], EvolutionEngine], run_dir: Path, *, report: bool = True
) -> None:
    """Run the outer loop as the `outer-loop` workflow (its Runner walk is recorded in
    `<run>/outer_loop/events.jsonl`), then print the summary."""
    engine = OuterLoop(open_engine, run_dir, around_evaluate=_with_progress).run()
    _report(evolve_result(engine.state), simulated=_simulated(engine.config.model))
    console.print(f"run written to {engine.run_dir}")
    if report:
        report_at_end(engine.run_dir, console)


def _report(result: EvolveResult, *, simulated: bool) -> None:
    console.print(_generation_table(result, None, simulated=simulated))
    console.print(_holdout_line(result))
    console.print(f"stop reason: {result.stop_reason or '(still running)'}")
    console.print(
        f"spent: {result.spent.evaluations} evaluations, ${result.spent.usd:.2f}, "
        f"{result.spent.wall_s:.0f}s"
    )
    w = result.winner
    console.print(f"winner {w.mode} ({w.lineage.operator}), {len(w.workflow.nodes)} nodes:")
    console.print(to_mermaid(w.workflow), markup=False)


def _holdout_line(result: EvolveResult) -> str:
    """The winner's and the seed's holdout scores and the gain with its interval, saying
    whether the interval excludes zero (what `promote` asks for)."""
    if result.gain is None:
        return "best vs seed on holdout: no holdout scores"
    scores = (result.winner.mean_score("holdout"), result.seed.mean_score("holdout"))
    line = "holdout: " + ", ".join(
        f"{who} {'-' if v is None else format(v, '.3f')}"
        for who, v in zip(("winner", "seed"), scores, strict=True)
    )
    line += f"; gain {result.gain.describe()}"
    if result.gain.includes_zero:
        return line + ": the interval includes zero (not significant; promote needs --force)"
    return line + ": significant"


def _generation_table(result: EvolveResult, bench: Any, *, simulated: bool = True) -> Table:
    sim = " [SIMULATED]" if simulated else ""
    table = Table(title=f"generations{sim}", title_justify="left", box=None)
    for col in ("gen", "train best", "train mean", "holdout best", "gap", "diversity",
                "coverage", "evals", "spent $"):  # fmt: skip
        table.add_column(col, justify="right")
    for s in result.summaries:
        gap = _fmt(s.overfit.gap) + (" ALARM" if s.overfit.alarm else "")
        table.add_row(
            str(s.generation), _fmt(s.train_best), _fmt(s.train_mean), _fmt(s.holdout_best),
            gap, str(s.diversity), f"{s.archive_coverage:.2f}", str(s.spent.evaluations),
            f"{s.spent.usd:.2f}",
        )  # fmt: skip
    return table


def _new_run_dir(run_dir: Path | None, config: EvolveConfig) -> Path:
    if run_dir is None:
        from datetime import UTC, datetime

        stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
        run_dir = Path("runs") / f"{stamp}-evolve-{Path(config.seed_workflow).stem}"
    if (run_dir / CHECKPOINT_FILE).exists():
        raise UsageError(
            f"run directory {run_dir} already holds an evolve run",
            fix="pass --resume to continue it, or another --run-dir",
        )
    if run_dir.exists() and any(run_dir.iterdir()):
        raise UsageError(
            f"run directory {run_dir} already exists and is not empty",
            fix="pass another --run-dir, or remove that one",
        )
    run_dir.mkdir(parents=True, exist_ok=True)
    meta = {"kind": "evolve", "loopwright_version": __version__, "git_commit": source_commit(),
            "benchmark_digest": load_benchmark(config.bench).digest,
            **config.model_dump(mode="json")}  # fmt: skip
    (run_dir / "config.yaml").write_text(yaml.safe_dump(meta, sort_keys=False), encoding="utf-8")
    return run_dir


def _check_ids(benchmark: Benchmark, ids: tuple[str, ...]) -> None:
    known = {t.id for t in benchmark.tasks}
    unknown = [i for i in ids if i not in known]
    if unknown:
        raise UsageError(
            f"unknown task id(s): {', '.join(unknown)}",
            fix=f"choose from: {', '.join(sorted(known))}",
        )


def _ids(text: str | None) -> list[str] | None:
    return None if text is None else [i.strip() for i in text.split(",") if i.strip()]


def _floats(text: str, flag: str) -> tuple[float, float]:
    try:
        low, high = (float(x) for x in text.split(","))
    except ValueError:
        raise UsageError(f"{flag} takes LOW,HIGH", got=text, fix=f"e.g. {flag} 0.3,0.7") from None
    return low, high


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _credit_table(rows: Sequence[CreditRow]) -> Table:
    table = Table(title="credit (children that beat their parents)", title_justify="left", box=None)
    for col in ("suggestion kind", "operator", "children", "evaluated", "beat parent",
                "win rate", "mean delta", "weight"):  # fmt: skip
        table.add_column(col, justify="left" if col in ("suggestion kind", "operator") else "right")
    for r in sorted(rows, key=lambda r: (-r.evaluated, r.kind, r.operator)):
        table.add_row(r.kind, r.operator, str(r.children), str(r.evaluated), str(r.beat_parent),
                      _fmt(r.win_rate), _fmt(r.mean_delta), f"{r.factor:.2f}")  # fmt: skip
    return table


def _generation_of(path: Path) -> int:
    digits = path.stem.removeprefix("reflection_gen")
    return int(digits) if digits.isdigit() else -1
