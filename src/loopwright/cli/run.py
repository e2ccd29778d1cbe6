"""`loopwright run WORKFLOW... --bench B`: run workflows on a benchmark's tasks and grade them."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import Progress, TaskID
from rich.table import Table

from loopwright.cli._app import app, progress_bar
from loopwright.cli._model_options import ApiBase, MetaModel, Model, ModelsFile, Tiers, choice_of
from loopwright.cli._parse import id_list
from loopwright.cli.report import report_at_end
from loopwright.evaluation import RunPlan, RunResult, TaskRow, WorkflowResult
from loopwright.evaluation import run as loopwright_run
from loopwright.records import CycleRecord

console = Console(highlight=False, width=None if sys.stdout.isatty() else 160)
err_console = Console(stderr=True, highlight=False)

__all__ = ["TaskRow", "run"]


@app.command("run")
def run(
    workflows: Annotated[
        list[str],
        typer.Argument(
            help="One or more workflows: built-in or library names, or YAML/JSON files."
        ),
    ],
    bench: Annotated[str, typer.Option("--bench", help="A benchmark name or a folder of tasks.")],
    tasks: Annotated[
        str | None, typer.Option("--tasks", help="Comma-separated task ids (default: all).")
    ] = None,
    level: Annotated[int | None, typer.Option("--level", help="Only tasks of this level.")] = None,
    reps: Annotated[int, typer.Option("--reps", min=1, max=100, help="Repetitions per task.")] = 1,
    model: Model = None,
    meta_model: MetaModel = None,
    tier: Tiers = None,
    models_file: ModelsFile = None,
    api_base: ApiBase = None,
    seed: Annotated[int, typer.Option("--seed", help="Base seed; same seed, same run.")] = 0,
    run_dir: Annotated[
        Path | None, typer.Option("--run-dir", help="Where to write the run (default: runs/<id>).")
    ] = None,
    sandbox: Annotated[
        str,
        typer.Option(
            "--sandbox", help="auto (bubblewrap when it works), bubblewrap, local, docker."
        ),
    ] = "auto",
    as_json: Annotated[
        bool, typer.Option("--json", help="Print per-task results as JSON.")
    ] = False,
    no_report: Annotated[
        bool, typer.Option("--no-report", help="Do not write RUN_DIR/report.html at the end.")
    ] = False,
    env_cache: Annotated[
        str | None,
        typer.Option(
            "--env-cache",
            help="Where task environments are built and kept "
            "(default: $LOOPWRIGHT_ENV_CACHE, else ~/.cache/loopwright/envs).",
        ),
    ] = None,
) -> None:
    """Run each workflow on the benchmark's tasks, grade every run, and print a table per task."""
    choice = choice_of(model, meta_model, tier, models_file, api_base)
    progress = progress_bar(err_console, enabled=not as_json)
    with progress:
        bar = progress.add_task("running", total=None)

        def advance(workflow: str, record: CycleRecord) -> None:
            progress.update(bar, advance=1, description=f"{workflow}: {record.task_id}")

        result = loopwright_run(
            workflows, bench, run_dir=run_dir, model=choice.model, reps=reps, tasks=id_list(tasks, "--tasks"),
            level=level, seed=seed, sandbox=sandbox, models=choice.config, api_base=choice.api_base,
            env_cache=env_cache,
            on_start=lambda plan: _started(plan, progress, bar, banner=not as_json),
            on_record=advance,
        )  # fmt: skip
    if as_json:
        typer.echo(result.summary.model_dump_json(indent=2))
        if not no_report:
            report_at_end(result.run_dir, err_console)  # stdout stays pure JSON
        return
    for workflow in result.summary.workflows:
        console.print(_task_table(workflow))
    if len(result.summary.workflows) > 1:
        console.print(_side_by_side(result))
    note = " (SIMULATED: offline sim model, not a real LLM)" if result.simulated else ""
    console.print(f"run written to {result.run_dir}{note}")
    if not no_report:
        report_at_end(result.run_dir, console)


_SIM_BANNER = (
    "[bold yellow]SIMULATED[/] results: the offline `sim` model stands in for an LLM "
    "(docs/sim-model.md). Scores show how workflows fare against the simulator, not a real model."
)


def _started(plan: RunPlan, progress: Progress, bar: TaskID, *, banner: bool) -> None:
    progress.update(bar, total=plan.total_runs)
    if plan.simulated and banner:
        progress.console.print(_SIM_BANNER)


def _fmt(value: float | None, spec: str = ".2f") -> str:
    return "-" if value is None else format(value, spec)


def _task_table(result: WorkflowResult) -> Table:
    sim = " [SIMULATED]" if result.aggregate.simulated else ""
    table = Table(title=f"{result.workflow}{sim}", title_justify="left", box=None)
    for column in ("task", "level", "score", "resolved", "failure", "tokens", "cost $", "time s"):
        table.add_column(column, justify="left" if column in ("task", "failure") else "right")
    for row in result.tasks:
        table.add_row(*_cells(row))
    s = result.aggregate
    table.add_row(
        "all",
        "",
        _fmt(s.mean_score),
        _fmt(s.resolved_rate),
        "",
        str(s.input_tokens + s.output_tokens),
        _fmt(s.cost_usd, ".4f"),
        _fmt(s.mean_duration_s, ".1f"),
        style="bold",
    )
    return table


def _cells(row: TaskRow) -> tuple[str, ...]:
    return (
        row.task,
        str(row.level),
        _fmt(row.mean_score),
        f"{row.resolved}/{row.runs}",
        str(row.failure_category),
        str(row.input_tokens + row.output_tokens),
        _fmt(row.cost_usd, ".4f"),
        _fmt(row.mean_duration_s, ".1f"),
    )


def _side_by_side(result: RunResult) -> Table:
    workflows = result.summary.workflows
    sim = " [SIMULATED]" if any(w.aggregate.simulated for w in workflows) else ""
    table = Table(title=f"mean partial credit, side by side{sim}", title_justify="left", box=None)
    table.add_column("tasks")
    for w in workflows:
        table.add_column(w.workflow, justify="right")
    for level in workflows[0].by_level:
        n = sum(1 for t in result.tasks if str(t.level) == level)
        noun = "task" if n == 1 else "tasks"
        table.add_row(f"level {level} ({n} {noun})", *(_fmt(w.by_level[level]) for w in workflows))
    table.add_row("all", *(_fmt(w.aggregate.mean_score) for w in workflows), style="bold")
    return table
