"""`loopwright evolve` (a whole run) and `loopwright outer-loop <step>` (one step at a time).

The run settings are declared once (`_evolve_options`); what is printed is in `_evolve_view`."""

from __future__ import annotations

import contextlib
import shlex
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from loopwright import search
from loopwright.cli._app import app, err_console, resume_hint
from loopwright.cli._evolve_options import (
    CachePath,
    ExecutorKind,
    JobTimeout,
    NoCache,
    RayAddress,
    Workers,
    _execution,
    execution,
    given_names,
    new_config,
    takes_run_settings,
)
from loopwright.cli._evolve_view import (
    _banner,
    _credit_table,
    _Display,
    _finish,
    _generation_of,
    _generation_table,
    _index_line,
    _print_spend,
    _report,
    _simulated,
    _stage_table,
    console,
    resume_line,
)
from loopwright.cli.report import report_at_end
from loopwright.errors import RunAbortedError, UsageError
from loopwright.reflection import describe_report, load_reflection
from loopwright.report.export import MlflowLive
from loopwright.search import (
    ProgressEvent,
    credit_table,
    evolve_result,
    evolve_run,
    load_checkpoint,
    promote_winner,
    reflect_generation,
)
from loopwright.store import default_run_path, is_simulated
from loopwright.workflow import read_provenance

outer = typer.Typer(help="The outer loop one step at a time, on a run directory.")
app.add_typer(outer, name="outer-loop")

__all__ = ["evolve", "outer"]


RunDir = Annotated[Path, typer.Option("--run-dir", help="The run directory.")]


@app.command("evolve")
@takes_run_settings
def evolve(
    ctx: typer.Context,
    bench: Annotated[str | None, typer.Option("--bench", help="Benchmark name or folder.")] = None,
    seed_workflow: Annotated[
        str | None,
        typer.Option("--seed-workflow", help="Built-in or library name, or a workflow file."),
    ] = None,
    run_dir: Annotated[Path | None, typer.Option("--run-dir", help="Default: runs/<id>.")] = None,
    resume: Annotated[
        bool,
        typer.Option(
            "--resume",
            help="Continue the run in --run-dir with its own settings (flags that would change "
            "them are refused).",
        ),
    ] = False,
    no_report: Annotated[
        bool, typer.Option("--no-report", help="Do not write RUN_DIR/report.html at the end.")
    ] = False,
    mlflow: Annotated[
        str | None,
        typer.Option(
            "--mlflow",
            help="Log each generation to this MLflow tracking URI as it finishes, and the "
            "params and artifacts at the end (docs/report.md, 'Export to MLflow').",
        ),
    ] = None,
    **settings: Any,
) -> None:
    """Evolve workflows: calibrate, then generations of train/holdout/select/mutate."""
    run = execution(settings)
    executor, ray_address = settings["executor"], settings["ray_address"]
    if resume:
        if run_dir is None:
            raise UsageError("--resume needs --run-dir", fix="pass the run directory to resume")
        _refuse_ignored_on_resume(ctx)
        picked_up = resume_line(run_dir)
        live = None if mlflow is None else MlflowLive(mlflow, run_dir)
        if picked_up:
            err_console.print(escape(picked_up))
        with (
            resume_hint(f"loopwright evolve --resume --run-dir {run_dir}"),
            _Display() as display,
            _resumable(run_dir, executor, ray_address),
        ):
            result = search.resume(run_dir, executor=run, on_event=_both(display, live))
        _finish(result, load_checkpoint(run_dir).config.model, run_dir, report=not no_report)
        _mlflow_done(live)
        return
    file = search.run_settings(ctx.params["models_file"])  # --config's evolve: section
    if (bench or file.get("bench")) is None or (seed_workflow or file.get("seed_workflow")) is None:
        raise UsageError("evolve needs --bench and --seed-workflow", fix="pass both")
    config = new_config(ctx.params, given_names(ctx))
    root = run_dir or default_run_path(f"evolve-{Path(config.seed_workflow).stem}")
    # Before the banner, so a bad input prints only its error; the benchmark it read is passed on.
    checked = search.check_inputs(config, root, run)
    live = None if mlflow is None else MlflowLive(mlflow, root)  # the client, checked first
    _banner(config.model)
    with (
        resume_hint(f"loopwright evolve --resume --run-dir {root}"),
        _Display() as display,
        _resumable(root, executor, ray_address),
    ):
        result = search.evolve(
            config, root, executor=run, on_event=_both(display, live), checked=checked
        )
    _finish(result, config.model, root, report=not no_report)
    _mlflow_done(live)


def _both(display: _Display, live: MlflowLive | None) -> Callable[[ProgressEvent], None]:
    """The display, and the MLflow listener when there is one, fed the same events."""
    if live is None:
        return display

    def feed(event: ProgressEvent) -> None:
        display(event)
        live(event)

    return feed


def _mlflow_done(live: MlflowLive | None) -> None:
    if live is not None:
        done = live.finish()
        console.print(f"logged to MLflow run {done.run_id} at {done.tracking_uri}")


@outer.command("calibrate")
@takes_run_settings
def outer_calibrate(
    ctx: typer.Context,
    run_dir: RunDir,
    bench: Annotated[str, typer.Option("--bench", help="Benchmark name or folder.")],
    seed_workflow: Annotated[
        str, typer.Option("--seed-workflow", help="Built-in or library name, or a workflow file.")
    ],
    **settings: Any,
) -> None:
    """Create the run: calibrate the seed, choose the split, build generation 0.

    Takes every setting `evolve` takes, budgets included; the later steps use the run's.
    With both --train and --holdout the split is taken as given and nothing is calibrated."""
    config = new_config(ctx.params, given_names(ctx))
    run = execution(settings)
    checked = search.check_inputs(config, run_dir, run)
    _banner(config.model)
    with _Display() as display:
        engine = search.start(config, run_dir, executor=run, on_event=display, checked=checked)
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
    with (
        evolve_run(run_dir).lock(),
        _Display() as display,
        search.executor_for(run, run_dir) as pool,
    ):
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
    with evolve_run(run_dir).lock():
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
    with evolve_run(run_dir).lock():
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
    rows = credit_table(checkpoint.individuals.values(), checkpoint.config.selection_tolerance).rows
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
    executor: ExecutorKind = "local",
    workers: Workers = None,
    ray_address: RayAddress = None,
    cache: CachePath = None,
    no_cache: NoCache = False,
    job_timeout: JobTimeout = None,
) -> None:
    """Finish a stopped run as `evolve` does: with --compare-designs, run the hand designs on
    holdout (the execution options are for those runs); write result.json and the report, and
    print the summary (refused while the run is still going)."""
    run = _execution(executor, workers, job_timeout, ray_address, cache, no_cache)
    load_checkpoint(run_dir)  # no run there: refused before the lock would create anything
    with evolve_run(run_dir).lock(), _Display() as display:
        path = search.finalize_run(run_dir, executor=run, on_event=display)
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
                           "ray_address", "cache", "no_cache", "job_timeout",
                           "mlflow"})  # fmt: skip


def _refuse_ignored_on_resume(ctx: typer.Context) -> None:
    """`evolve --resume` continues the run with the settings in its checkpoint: a flag that
    would change them (--generations, --population, --model...) would be ignored, so it is
    refused rather than dropped without a word (docs/evolve.md)."""
    given = [p for p in ctx.command.params if p.name in set(given_names(ctx)) - _RESUME_FLAGS]
    if given:
        flags = ", ".join(p.opts[0] for p in given)
        raise UsageError(
            "evolve --resume continues the run with the settings it was started with; "
            "these flags would be ignored",
            got=flags,
            fix="drop them (a resumed run keeps its own generations, population, model, seed "
            "and budgets); to change them, start a new run with another --run-dir",
        )


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
