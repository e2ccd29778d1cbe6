"""`loopwright evolve` (a whole run) and `loopwright outer-loop <step>` (one step at a time)."""

from __future__ import annotations

import contextlib
import shlex
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from loopwright import search
from loopwright.cli._app import app, resume_hint
from loopwright.cli._model_options import ApiBase, MetaModel, Model, ModelsFile, Tiers, choice_of
from loopwright.cli.report import report_at_end
from loopwright.errors import RunAbortedError, UsageError
from loopwright.evaluation import executor_settings
from loopwright.models import (
    LEDGER_FILE,
    LedgerTotals,
    ModelChoice,
    group_totals,
    read_ledger,
    role_kind,
)
from loopwright.reflection import describe_report, load_reflection
from loopwright.search import (
    Calibration,
    CalibrationFinished,
    CalibrationRunFinished,
    EvaluationFinished,
    EvolutionEngine,
    EvolveResult,
    GenerationFinished,
    GenerationStarted,
    GenerationSummary,
    ProgressEvent,
    RunResumed,
    parse_config,
)
from loopwright.search._checkpoint import RunLock, load_checkpoint
from loopwright.search._credit import CreditRow, credit_table
from loopwright.search._modes import promote_winner
from loopwright.search._reflection_step import reflect_generation
from loopwright.search._report import evolve_result
from loopwright.search._staging import StageVerdict
from loopwright.store import INDEX_FILE, RunIndex, default_run_path, is_simulated
from loopwright.workflow import read_provenance, to_mermaid

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
MinTrain = Annotated[
    int | None,
    typer.Option(
        "--min-train", help="Refuse (exit 2) when calibration keeps fewer training tasks."
    ),
]
MinHoldout = Annotated[
    int | None,
    typer.Option(
        "--min-holdout", help="Refuse (exit 2) when calibration keeps fewer holdout tasks."
    ),
]
FirstChildren = Annotated[
    str,
    typer.Option(
        "--first-children",
        help="guided: breed the first children from the reflection on generation 0 (reflected)"
        " or put blind mutations of the seed in generation 0 (blind).",
    ),
]

Stages = Annotated[
    str | None,
    typer.Option(
        "--stages",
        help="Staged evaluation: minibatch sizes a child is tried on first, e.g. 3,all "
        "(docs/evolve.md).",
    ),
]
StageMargin = Annotated[
    float,
    typer.Option("--stage-margin", help="A staged child stops when this far below its parent."),
]
Parents = Annotated[
    str, typer.Option("--parents", help="Parent selection: tournament or pareto (per task).")
]
Merge = Annotated[
    float,
    typer.Option("--merge", help="pareto: share of children made by merging two parents."),
]

# The settings a new run is made with: `evolve` and `outer-loop calibrate` take the same ones and
# build the config with `_new_config`, so a run driven a step at a time can have every setting
# (budgets included) a whole run can.
Generations = Annotated[int, typer.Option("--generations", help="Max generations.")]
Population = Annotated[int, typer.Option("--population", help="Population size.")]
Seed = Annotated[int, typer.Option("--seed", help="Fixes every random choice.")]
Reps = Annotated[int, typer.Option("--reps", help="Repetitions per training task.")]
HoldoutReps = Annotated[int, typer.Option("--holdout-reps", help="Repetitions per holdout task.")]
TournamentK = Annotated[int, typer.Option("--tournament-k")]
Elitism = Annotated[int, typer.Option("--elitism", help="Survivors per generation.")]
Train = Annotated[str | None, typer.Option("--train", help="Training task ids.")]
Holdout = Annotated[str | None, typer.Option("--holdout", help="Holdout task ids.")]
Band = Annotated[str, typer.Option("--band", help="Calibration pass-rate band.")]
CalibrationReps = Annotated[int, typer.Option("--calibration-reps")]
MaxEvaluations = Annotated[int | None, typer.Option("--max-evaluations")]
MaxTrainEvaluations = Annotated[
    int | None, typer.Option("--max-train-evaluations", help="Training runs only.")
]
MaxUsd = Annotated[float | None, typer.Option("--max-usd")]
MaxWallS = Annotated[float | None, typer.Option("--max-wall-s")]
TargetScore = Annotated[float | None, typer.Option("--target-score")]
Plateau = Annotated[int | None, typer.Option("--plateau", help="Stop after P flat gens.")]
OverfitGap = Annotated[float, typer.Option("--overfit-gap")]
SandboxKind = Annotated[
    str, typer.Option("--sandbox", help="auto, bubblewrap, local, docker (docs/sandbox.md).")
]


@app.command("evolve")
def evolve(
    ctx: typer.Context,
    bench: Annotated[str | None, typer.Option("--bench", help="Benchmark name or folder.")] = None,
    seed_workflow: Annotated[
        str | None,
        typer.Option("--seed-workflow", help="Built-in or library name, or a workflow file."),
    ] = None,
    model: Model = None,
    meta_model: MetaModel = None,
    tier: Tiers = None,
    models_file: ModelsFile = None,
    api_base: ApiBase = None,
    generations: Generations = 4,
    population: Population = 6,
    seed: Seed = 0,
    run_dir: Annotated[Path | None, typer.Option("--run-dir", help="Default: runs/<id>.")] = None,
    resume: Annotated[
        bool,
        typer.Option(
            "--resume",
            help="Continue the run in --run-dir with its own settings (flags that would change "
            "them are refused).",
        ),
    ] = False,
    reps: Reps = 1,
    holdout_reps: HoldoutReps = 3,
    tournament_k: TournamentK = 3,
    elitism: Elitism = 2,
    train: Train = None,
    holdout: Holdout = None,
    band: Band = "0.3,0.7",
    calibration_reps: CalibrationReps = 3,
    min_train: MinTrain = None,
    min_holdout: MinHoldout = None,
    max_evaluations: MaxEvaluations = None,
    max_train_evaluations: MaxTrainEvaluations = None,
    max_usd: MaxUsd = None,
    max_wall_s: MaxWallS = None,
    target_score: TargetScore = None,
    plateau: Plateau = None,
    overfit_gap: OverfitGap = 0.2,
    sandbox: SandboxKind = "auto",
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
    stages: Stages = None,
    stage_margin: StageMargin = 0.1,
    parents: Parents = "tournament",
    merge: Merge = 0.0,
) -> None:
    """Evolve workflows: calibrate, then generations of train/holdout/select/mutate."""
    run = _execution(executor, workers, job_timeout, ray_address, cache, no_cache)
    if resume:
        if run_dir is None:
            raise UsageError("--resume needs --run-dir", fix="pass the run directory to resume")
        _refuse_ignored_on_resume(ctx)
        with (
            resume_hint(f"loopwright evolve --resume --run-dir {run_dir}"),
            _Display() as display,
            _resumable(run_dir, executor, ray_address),
        ):
            result = search.resume(run_dir, executor=run, on_event=display)
        _finish(result, load_checkpoint(run_dir).config.model, run_dir, report=not no_report)
        return
    if bench is None or seed_workflow is None:
        raise UsageError("evolve needs --bench and --seed-workflow", fix="pass both")
    config = _new_config(ctx.params)
    root = run_dir or default_run_path(f"evolve-{Path(config.seed_workflow).stem}")
    search.check_inputs(config, root, run)  # before the banner: a bad input prints only its error
    _banner(config.model)
    with (
        resume_hint(f"loopwright evolve --resume --run-dir {root}"),
        _Display() as display,
        _resumable(root, executor, ray_address),
    ):
        result = search.evolve(config, root, executor=run, on_event=display)
    _finish(result, config.model, root, report=not no_report)


@outer.command("calibrate")
def outer_calibrate(
    ctx: typer.Context,
    run_dir: RunDir,
    bench: Annotated[str, typer.Option("--bench", help="Benchmark name or folder.")],
    seed_workflow: Annotated[
        str, typer.Option("--seed-workflow", help="Built-in or library name, or a workflow file.")
    ],
    model: Model = None,
    meta_model: MetaModel = None,
    tier: Tiers = None,
    models_file: ModelsFile = None,
    api_base: ApiBase = None,
    generations: Generations = 4,
    population: Population = 6,
    seed: Seed = 0,
    reps: Reps = 1,
    holdout_reps: HoldoutReps = 3,
    tournament_k: TournamentK = 3,
    elitism: Elitism = 2,
    train: Train = None,
    holdout: Holdout = None,
    band: Band = "0.3,0.7",
    calibration_reps: CalibrationReps = 3,
    min_train: MinTrain = None,
    min_holdout: MinHoldout = None,
    max_evaluations: MaxEvaluations = None,
    max_train_evaluations: MaxTrainEvaluations = None,
    max_usd: MaxUsd = None,
    max_wall_s: MaxWallS = None,
    target_score: TargetScore = None,
    plateau: Plateau = None,
    overfit_gap: OverfitGap = 0.2,
    sandbox: SandboxKind = "auto",
    executor: ExecutorKind = "local",
    workers: Workers = None,
    ray_address: RayAddress = None,
    cache: CachePath = None,
    no_cache: NoCache = False,
    job_timeout: JobTimeout = None,
    strategy: Strategy = "guided",
    exploration: Exploration = 0.25,
    first_children: FirstChildren = "reflected",
    stages: Stages = None,
    stage_margin: StageMargin = 0.1,
    parents: Parents = "tournament",
    merge: Merge = 0.0,
) -> None:
    """Create the run: calibrate the seed, choose the split, build generation 0.

    Takes every setting `evolve` takes, budgets included; the later steps use the run's.
    With both --train and --holdout the split is taken as given and nothing is calibrated."""
    config = _new_config(ctx.params)
    run = _execution(executor, workers, job_timeout, ray_address, cache, no_cache)
    search.check_inputs(config, run_dir, run)
    _banner(config.model)
    with _Display() as display:
        engine = search.start(config, run_dir, executor=run, on_event=display)
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
    run = _execution(executor, workers, job_timeout, ray_address, cache, no_cache)
    load_checkpoint(run_dir)  # no run there: refused before the lock would create anything
    run.check()
    with RunLock(run_dir), _Display() as display, search.executor_for(run, run_dir) as pool:
        engine = search.open_run(run_dir, pool, on_event=display)
        if engine.finished or engine.state.phase != "evaluate":
            raise UsageError("this generation is already evaluated", fix="run outer-loop evolve")
        engine.evaluate_generation()
    console.print(_generation_table(evolve_result(engine.state), simulated=_simulated(engine)))
    if engine.finished:
        console.print(f"run finished: {engine.state.stop_reason}")
        console.print(f"next: loopwright outer-loop finalize --run-dir {run_dir}")


@outer.command("evolve")
def outer_evolve(run_dir: RunDir) -> None:
    """Check convergence; select parents, mutate and move to the next generation."""
    engine = search.open_run(run_dir)
    with RunLock(run_dir):
        if engine.finished or engine.state.phase != "breed":
            raise UsageError("evaluate the current generation first", fix="outer-loop evaluate")
        reason = engine.advance()
        if reason:
            console.print(f"run finished: {reason}")
            console.print(f"next: loopwright outer-loop finalize --run-dir {run_dir}")
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
    load_checkpoint(run_dir)  # no run there: refused before the lock would create anything
    with RunLock(run_dir):
        path = reflect_generation(search.open_run(run_dir), generation)
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
    _report(result, simulated=is_simulated(checkpoint.config.model))
    _print_spend(run_dir)
    console.print(_index_line(run_dir))
    rows = credit_table(checkpoint.individuals.values()).rows
    if rows:
        console.print(_credit_table(rows))
    if checkpoint.stage_verdicts:
        console.print(_stage_table(checkpoint.stage_verdicts))
    if reflection:
        found = sorted(run_dir.glob("reflection_gen*.json"), key=_generation_of)
        if not found:
            console.print("no reflection yet: run `loopwright outer-loop reflect`")
        else:
            console.print(describe_report(load_reflection(found[-1])), markup=False)


@outer.command("finalize")
def outer_finalize(
    run_dir: RunDir,
    no_report: Annotated[
        bool, typer.Option("--no-report", help="Do not write RUN_DIR/report.html.")
    ] = False,
) -> None:
    """Finish a stopped run as `evolve` does: write result.json and the report, and print the
    summary (refused while the run is still going)."""
    with RunLock(run_dir):
        path = search.finalize_run(run_dir)
    checkpoint = load_checkpoint(run_dir)
    _report(evolve_result(checkpoint), simulated=is_simulated(checkpoint.config.model))
    console.print(f"result written to {path}")
    if not no_report:
        report_at_end(run_dir, console)


@outer.command("promote")
def outer_promote(
    run_dir: RunDir,
    name: Annotated[str, typer.Argument(help="Name of the permanent workflow.")],
    force: Annotated[bool, typer.Option("--force", help="Promote even if the CI has 0.")] = False,
    library: Annotated[Path | None, typer.Option("--library", help="Workflow library.")] = None,
) -> None:
    """Copy the winner into the user's workflow library with its provenance (refused if its
    gain CI includes 0); then use it by name: `loopwright run NAME ...`."""
    path = promote_winner(run_dir, name, library, force=force)
    provenance = read_provenance(path)
    mode = provenance.mode if provenance is not None else "the winner"
    console.print(f"promoted {mode} as {name}: {path}")
    console.print(f"use it by name: loopwright run {name} --bench BENCH")


# -- helpers ----------------------------------------------------------------------------------

# What `evolve --resume` takes: how to execute (never part of the run's config) and the report.
_RESUME_FLAGS = frozenset({"resume", "run_dir", "no_report", "executor", "workers",
                           "ray_address", "cache", "no_cache", "job_timeout"})  # fmt: skip


def _given(ctx: typer.Context, name: str) -> bool:
    # By name: typer vendors its own click, whose ParameterSource is another enum class.
    source = ctx.get_parameter_source(name)
    return source is not None and source.name not in ("DEFAULT", "DEFAULT_MAP")


def _refuse_ignored_on_resume(ctx: typer.Context) -> None:
    """`evolve --resume` continues the run with the settings in its checkpoint: a flag that
    would change them (--generations, --population, --model...) would be ignored, so it is
    refused rather than dropped without a word (docs/evolve.md)."""
    given = [
        param for param in ctx.command.params
        if param.name not in _RESUME_FLAGS
        and _given(ctx, param.name or "")
    ]  # fmt: skip
    if given:
        flags = ", ".join(p.opts[0] for p in given)
        raise UsageError(
            "evolve --resume continues the run with the settings it was started with; "
            "these flags would be ignored",
            got=flags,
            fix="drop them (a resumed run keeps its own generations, population, model, seed "
            "and budgets); to change them, start a new run with another --run-dir",
        )


def _new_config(params: Mapping[str, Any]) -> search.EvolveConfig:
    """The config of a new run from the options `evolve` and `outer-loop calibrate` share
    (their `ctx.params`: the two commands declare the same settings, one list of names)."""
    p = params
    low, high = _floats(p["band"], "--band")
    choice = choice_of(p["model"], p["meta_model"], p["tier"], p["models_file"], p["api_base"])
    return parse_config(
        {
            "seed_workflow": p["seed_workflow"], "bench": p["bench"], "sandbox": p["sandbox"],
            **_model_fields(choice), "seed": p["seed"], "population": p["population"],
            "tournament_k": p["tournament_k"],
            "elitism": min(p["elitism"], max(p["population"] - 1, 1)), "repetitions": p["reps"],
            "holdout_repetitions": p["holdout_reps"], "train_tasks": _ids(p["train"]),
            "holdout_tasks": _ids(p["holdout"]), "overfit_gap": p["overfit_gap"],
            "strategy": p["strategy"], "exploration": p["exploration"],
            "first_children": p["first_children"], "stages": _stages(p["stages"]),
            "stage_margin": p["stage_margin"], "parents": p["parents"], "merge_rate": p["merge"],
            "calibration": {"band_low": low, "band_high": high,
                            "repetitions": p["calibration_reps"],
                            "min_train": p["min_train"], "min_holdout": p["min_holdout"]},
            "budgets": {
                "max_generations": p["generations"], "max_evaluations": p["max_evaluations"],
                "max_train_evaluations": p["max_train_evaluations"], "max_usd": p["max_usd"],
                "max_wall_s": p["max_wall_s"], "target_score": p["target_score"],
                "plateau_generations": p["plateau"],
            },
        }
    )  # fmt: skip


def _model_fields(choice: ModelChoice) -> dict[str, object]:
    """The EvolveConfig fields of the model options."""
    return {
        "model": choice.model,
        "models": choice.config.model_dump(mode="json"),
        "api_base": choice.api_base,
    }


def _execution(
    kind: str,
    workers: int | None,
    job_timeout: float | None,
    ray_address: str | None,
    cache: Path | None,
    no_cache: bool,
) -> search.Execution:
    """How this invocation executes evaluations (never part of the run's config)."""
    settings = executor_settings(
        kind, workers=workers, job_timeout_s=job_timeout, ray_address=ray_address
    )
    return search.Execution(settings, cache, use_cache=not no_cache)


@contextlib.contextmanager
def _resumable(run_dir: Path, executor: str, ray_address: str | None) -> Iterator[None]:
    """A RunAbortedError (a lost Ray head node) leaving the block says how to resume."""
    try:
        yield
    except RunAbortedError as exc:
        address = f" --ray-address {shlex.quote(ray_address)}" if ray_address else ""
        exc.resume = exc.resume or (
            f"loopwright evolve --resume --run-dir {shlex.quote(str(run_dir))} "
            f"--executor {executor}{address}"
        )
        raise


def _banner(model: str) -> None:
    if is_simulated(model):
        err_console.print(_SIM_BANNER)


def _simulated(engine: EvolutionEngine) -> bool:
    return is_simulated(engine.config.model)


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


class _Display:
    """The live progress display of a run: a spinner line saying what is being evaluated,
    the calibration table and one summary line per generation, fed by progress events."""

    def __init__(self) -> None:
        self.progress = Progress(
            SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
            console=err_console, transient=True,
        )  # fmt: skip
        self.bar = self.progress.add_task("starting", total=None)
        self.generation, self.evaluations = 0, 0

    def __enter__(self) -> _Display:
        self.progress.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.__exit__(None, None, None)

    def __call__(self, event: ProgressEvent) -> None:
        text = None
        if isinstance(event, RunResumed) and event.model is not None:
            _banner(event.model)
        elif isinstance(event, CalibrationRunFinished):
            text = f"calibrating {event.done}/{event.total}: {event.task_id}"
        elif isinstance(event, CalibrationFinished):
            console.print(_calibration_table(event.calibration))
            for warning in event.calibration.warnings:
                err_console.print(f"[bold yellow]warning:[/] {escape(warning)}")
        elif isinstance(event, GenerationStarted):
            self.generation, self.evaluations = event.generation, 0
            text = f"generation {self.generation}: 0 evaluations"
        elif isinstance(event, EvaluationFinished):
            self.evaluations += 1
            text = (
                f"generation {self.generation}: {self.evaluations} evaluations (last "
                f"{event.individual_id[:8]} {event.task_id} rep {event.repetition}: "
                f"{_fmt(event.score)})"
            )
        elif isinstance(event, GenerationFinished):
            self.progress.console.print(_summary_line(event))
        if text is not None:
            self.progress.update(self.bar, description=text)


def _calibration_table(result: Calibration) -> Table:
    table = Table(title="calibration (pass rate of the seed)", title_justify="left", box=None)
    for col in ("task", "level", "pass rate", "score", "split"):
        table.add_column(col)
    for row in result.rows:
        table.add_row(row.task_id, str(row.level), _fmt(row.pass_rate), _fmt(row.mean_score),
                      row.verdict)  # fmt: skip
    return table


def _summary_line(s: GenerationSummary) -> str:
    alarm = " [bold red]OVERFIT[/]" if s.overfit.alarm else ""
    return (
        f"gen {s.generation}: train best {_fmt(s.train_best)} mean {_fmt(s.train_mean)}"
        f" holdout {_fmt(s.holdout_best)}{alarm} coverage {s.archive_coverage:.2f}"
        f" spent {s.spent.evaluations} evals ${s.spent.usd:.2f}"
    )


def _finish(result: EvolveResult, model: str, run_dir: Path, *, report: bool) -> None:
    """The summary of a finished run, where it is, and its report."""
    _report(result, simulated=is_simulated(model))
    _print_spend(run_dir)
    console.print(f"run written to {run_dir}")
    if report:
        report_at_end(run_dir, console)


def _report(result: EvolveResult, *, simulated: bool) -> None:
    console.print(_generation_table(result, simulated=simulated))
    console.print(_holdout_line(result))
    console.print(f"stop reason: {result.stop_reason or '(still running)'}")
    spent = result.spent
    meta = (
        f" (agents ${spent.usd - spent.meta_usd:.2f}, meta ${spent.meta_usd:.2f})"
        if spent.meta_usd
        else ""
    )
    console.print(
        f"spent: {spent.evaluations} evaluations, ${spent.usd:.2f}{meta}, {spent.wall_s:.0f}s"
    )
    w = result.winner
    console.print(f"winner {w.mode} ({w.lineage.operator}), {len(w.workflow.nodes)} nodes:")
    console.print(to_mermaid(w.workflow), markup=False)


def _print_spend(run_dir: Path) -> None:
    """The run ledger's spend by role, agents apart from the meta roles (nothing when no
    gateway call was made: the sim and scripted models make none)."""
    path = run_dir / LEDGER_FILE
    records = read_ledger(path, torn_tail=True) if path.is_file() else []
    if not records:
        return
    table = Table(title="model calls by role (ledger.jsonl)", title_justify="left", box=None)
    for col in ("role", "kind", "calls", "failed", "tokens in", "tokens out", "cost $"):
        table.add_column(col, justify="left" if col in ("role", "kind") else "right")
    roles = group_totals(records, "role")
    order = sorted(roles, key=lambda r: (role_kind(r) == "meta", r or ""))
    for role in order:
        table.add_row(role or "(none)", role_kind(role), *_totals_cells(roles[role]))
    for kind, totals in sorted(group_totals(records, "kind").items(), key=lambda kv: kv[0] or ""):
        table.add_row(f"all {kind}", "", *_totals_cells(totals), style="bold")
    console.print(table)
    malformed = [r for r in records if r.error_kind == "client"]
    if malformed:  # a bug to report, never a fault of the provider or the settings
        seen = "; ".join(
            f"{r.labels.role or '(none)'} attempt {r.attempt}, {r.request_bytes} bytes"
            for r in malformed[:5]
        )
        console.print(
            f"[red]{len(malformed)} malformed request(s)[/red] the server could not parse "
            f"(client errors, not retried; a loopwright bug, please report it): {escape(seen)}"
        )


def _totals_cells(t: LedgerTotals) -> tuple[str, ...]:
    cost = "unpriced" if t.cost_usd is None else f"{t.cost_usd:.4f}"
    return (str(t.calls), str(t.failed_calls), str(t.input_tokens), str(t.output_tokens), cost)


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


def _generation_table(result: EvolveResult, *, simulated: bool = True) -> Table:
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


def _ids(text: str | None) -> list[str] | None:
    return None if text is None else [i.strip() for i in text.split(",") if i.strip()]


def _stages(text: str | None) -> list[int]:
    """`--stages 3,6,all` -> [3, 6]: the minibatch sizes before the full evaluation (`all`, which
    may be left out, is the full training evaluation every child that goes on gets)."""
    if text is None:
        return []
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if parts and parts[-1] == "all":
        parts = parts[:-1]
    try:
        return [int(p) for p in parts]
    except ValueError:
        raise UsageError(
            "--stages takes task counts ending in all", got=text, fix="e.g. --stages 3,all"
        ) from None


def _floats(text: str, flag: str) -> tuple[float, float]:
    try:
        low, high = (float(x) for x in text.split(","))
    except ValueError:
        raise UsageError(f"{flag} takes LOW,HIGH", got=text, fix=f"e.g. {flag} 0.3,0.7") from None
    return low, high


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _stage_table(verdicts: Sequence[StageVerdict]) -> Table:
    """Staged evaluation: each child's minibatch mean against its parent's, and the verdict."""
    table = Table(title="staged evaluation (children on their minibatch)", title_justify="left",
                  box=None)  # fmt: skip
    for col in ("child", "parent", "stage", "tasks", "child mean", "parent mean", "verdict"):
        table.add_column(col)
    for v in verdicts:
        table.add_row(
            v.individual_id[:8], v.parent_id[:8], str(v.stage), str(len(v.tasks)),
            _fmt(v.child_mean), _fmt(v.parent_mean), "stopped" if v.stopped else "goes on",
        )  # fmt: skip
    return table


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
