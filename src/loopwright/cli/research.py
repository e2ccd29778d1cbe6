"""`loopwright research init|run|status`: the knowledge-distillation research loop."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from loopwright.cli._app import app, progress_bar, resume_hint
from loopwright.cli._model_options import ApiBase, MetaModel, ModelsFile, Tiers
from loopwright.cli._parse import id_list
from loopwright.cli.report import report_at_end
from loopwright.models import load_models_config
from loopwright.research import (
    Caps,
    InitOptions,
    LoopEvent,
    ReflectSettings,
    Spend,
    StatusReport,
    budget_fix,
    init_workdir,
    open_loop,
    research_status,
    run_models,
)

__all__ = ["research"]

console = Console(highlight=False, width=None if sys.stdout.isatty() else 160)
err_console = Console(stderr=True, highlight=False)

research = typer.Typer(
    help="The research loop: THINK, CRITIC, EXPERIMENT, DISTILL and REFLECT on a working "
    "directory (docs/research.md).",
    no_args_is_help=True,
)
app.add_typer(research, name="research")

_SIM = (
    "[bold yellow]SIMULATED[/]: the offline `sim` models stand in for LLMs (the meta phases "
    "follow documented rules, docs/research.md; the agents run on the sim coder, "
    "docs/sim-model.md). Results describe the simulator, not a real model."
)

Dir = Annotated[Path, typer.Option("--dir", help="The working directory (conventionally vN/).")]
_BUDGET_HELP = (
    "The run's dollar budget: every priced model call (ledger.jsonl) plus sim runs at their "
    "simulated price; the run stops with status budget once it is spent. Refused when a "
    "LiteLLM model in use has no price (docs/research.md, 'Dollar budget')."
)


@research.command("init")
def init(
    dir: Dir,
    workflow: Annotated[
        str, typer.Option("--workflow", help="Seed workflow: built-in or library name, or a file.")
    ],
    bench: Annotated[str, typer.Option("--bench", help="Benchmark name or folder of tasks.")],
    goal: Annotated[str | None, typer.Option("--goal", help="The goal as one line.")] = None,
    goal_file: Annotated[
        Path | None, typer.Option("--goal-file", help="A goal.md with its three sections.")
    ] = None,
    model: Annotated[
        str, typer.Option("--model", help="Meta model: sim, scripted:FILE, PROVIDER/MODEL.")
    ] = "sim",
    eval_model: Annotated[
        str, typer.Option("--eval-model", help="The model the agents run on.")
    ] = "sim",
    cons_file: Annotated[
        Path | None, typer.Option("--cons-file", help="A constraints layer file.")
    ] = None,
    constraints: Annotated[
        str | None, typer.Option("--constraints", help="A constraints layer as text.")
    ] = None,
    level: Annotated[int | None, typer.Option("--level", help="Eval tasks of this level.")] = None,
    tasks: Annotated[str | None, typer.Option("--tasks", help="Comma-separated task ids.")] = None,
    max_tasks: Annotated[
        int | None, typer.Option("--max-tasks", min=1, help="The first N tasks (id order).")
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Fixes every random choice.")] = 0,
    workers: Annotated[int, typer.Option("--workers", min=1, help="Wave worker cap.")] = 4,
    max_specs: Annotated[
        int, typer.Option("--max-specs", min=1, max=8, help="max_specs_per_iter.")
    ] = 3,
    heartbeat: Annotated[
        int, typer.Option("--heartbeat", min=1, help="REFLECT every N committed iterations.")
    ] = 3,
    axis_window: Annotated[
        int, typer.Option("--axis-window", min=2, help="Iterations for the axis-jump rule.")
    ] = 3,
    sandbox: Annotated[
        str, typer.Option("--sandbox", help="auto, bubblewrap, local, docker (docs/sandbox.md).")
    ] = "auto",
    max_usd: Annotated[float | None, typer.Option("--max-usd", help=_BUDGET_HELP)] = None,
    holdout: Annotated[
        str | None,
        typer.Option("--holdout", help="Comma-separated holdout task ids (default: drawn)."),
    ] = None,
    holdout_tasks: Annotated[
        int,
        typer.Option(
            "--holdout-tasks", min=0, help="Holdout tasks drawn (seeded) from the other tasks."
        ),
    ] = 3,
    holdout_passes: Annotated[
        int, typer.Option("--holdout-passes", min=1, max=20, help="Repetitions per holdout task.")
    ] = 1,
) -> None:
    """Create a research working directory: goal, constraints, knowledge, workspace..."""
    opts = InitOptions(
        dir=dir, goal=goal, goal_file=goal_file, workflow=workflow, bench=bench,
        tasks=_maybe_tuple(id_list(tasks, "--tasks")),
        level=level, max_tasks=max_tasks, model=model, eval_model=eval_model, sandbox=sandbox,
        seed=seed, cons_file=cons_file, constraints=constraints,
        caps=Caps(workers=workers, max_specs_per_iter=max_specs, submission_workers=workers),
        reflect=ReflectSettings(heartbeat_every=heartbeat, axis_window=axis_window),
        max_usd=max_usd, holdout_tasks=holdout_tasks, holdout_passes=holdout_passes,
        holdout=tuple(t.strip() for t in holdout.split(",") if t.strip()) if holdout else None,
    )  # fmt: skip
    wd = init_workdir(opts)
    config = wd.load_config()
    if "sim" in (config.meta_model, config.eval.model):
        err_console.print(_SIM)
    console.print(f"research working directory {escape(str(wd.root))} ready")
    console.print(
        f"  workflow {config.workflow} on {config.eval.bench}: {', '.join(config.eval.tasks)}"
    )
    console.print(
        f"  meta model {config.meta_model}, agents on {config.eval.model}, seed {config.seed}"
    )
    held = ", ".join(config.eval.holdout) or "none (no other task of those levels)"
    console.print(f"  holdout (never shown to the meta model): {held}")
    if config.max_usd is not None:
        console.print(f"  dollar budget ${config.max_usd:g}")
    console.print(f"next: loopwright research run --dir {escape(str(wd.root))}")


@research.command("run")
def run(
    dir: Dir,
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            help="The model of every role this run: the agents and, unless --meta-model or "
            "the config's meta role says otherwise, the meta phases; sim, scripted:FILE or a "
            "LiteLLM name (docs/models.md). Default: the working directory's config.",
        ),
    ] = None,
    meta_model: MetaModel = None,
    tier: Tiers = None,
    models_file: ModelsFile = None,
    api_base: ApiBase = None,
    iterations: Annotated[
        int | None, typer.Option("--iterations", min=1, help="Iterations to run now.")
    ] = None,
    max_usd: Annotated[
        float | None,
        typer.Option(
            "--max-usd",
            help=_BUDGET_HELP + " Given here, it replaces the budget in DIR/config.yaml from "
            "this run on: raise it to continue a run the budget stopped. Default: the config's.",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the outcome as JSON.")] = False,
    no_report: Annotated[
        bool, typer.Option("--no-report", help="Do not write DIR/report.html at the end.")
    ] = False,
) -> None:
    """Run (or resume) the loop: iterations until goal.md stops it, or --iterations N."""
    again = f"loopwright research run --dir {dir}"
    with resume_hint(again), progress_bar(err_console, enabled=not as_json) as progress:
        bar = progress.add_task("starting", total=None)

        def on_event(event: LoopEvent) -> None:
            if event.kind == "run_done":
                progress.update(bar, completed=event.done, total=event.total)
                return
            if event.kind in ("phase", "iteration_started", "reflect"):
                progress.update(
                    bar, description=f"iter {event.iteration} · {escape(event.message)}"
                )
            if event.kind == "phase":
                progress.update(bar, completed=0, total=None)
            shown = ("committed", "resumed", "stopped", "reflect", "holdout")
            if event.kind in shown and not as_json:
                progress.console.print(escape(event.message if event.kind == "committed" else
                                              f"iter {event.iteration} {event.kind}: {event.message}"))  # fmt: skip

        config = load_models_config(models_file, tier or [])
        chosen = run_models(model, meta_model, config, api_base)
        loop = open_loop(dir, models=chosen, listener=on_event, max_usd=max_usd)
        if loop.meta.simulated and not as_json:
            err_console.print(_SIM)
        outcome = loop.run(iterations)
    if as_json:
        data: dict[str, object] = {
            "status": outcome.status,
            "reason": outcome.reason,
            "committed": list(outcome.committed),
        }
        if outcome.max_usd is not None:
            data |= {"max_usd": outcome.max_usd, "spent_usd": outcome.spent_usd}
        console.print_json(json.dumps({**data, "simulated": loop.meta.simulated}))
        if not no_report:
            report_at_end(dir, err_console)  # stdout stays pure JSON
        return
    console.print(
        f"{outcome.status}: {escape(outcome.reason)}; committed {len(outcome.committed)} iteration(s) now"
    )
    if outcome.status == "budget" and outcome.max_usd is not None:
        console.print(escape(budget_fix(dir, outcome.max_usd, outcome.spent_usd or 0.0)))
    console.print(f"see: loopwright research status --dir {escape(str(dir))}")
    if not no_report:
        report_at_end(dir, console)


@research.command("status")
def status(
    dir: Dir,
    as_json: Annotated[bool, typer.Option("--json", help="Print the status as JSON.")] = False,
) -> None:
    """Trajectory, verdicts, what was learned, the frontier, and the hard contracts."""
    report = research_status(dir)
    if as_json:
        console.print_json(report.model_dump_json())
        return
    _print_status(report)


def _print_status(r: StatusReport) -> None:
    sim = " [bold yellow][SIMULATED][/]" if r.simulated else ""
    console.print(f"[bold]{escape(r.dir)}[/]{sim}: {escape(r.goal)}")
    console.print(f"status {r.status}{f' ({escape(r.reason)})' if r.reason else ''}")
    if r.max_usd is not None:
        spend = Spend(paid_usd=r.spent_usd - r.offline_usd, offline_usd=r.offline_usd)
        console.print(f"dollar budget: {spend.line(r.max_usd)}")
        if r.status == "budget":
            console.print(escape(budget_fix(Path(r.dir), r.max_usd, r.spent_usd)))
    console.print(
        f"{r.workflow} on {', '.join(r.tasks)}; meta model {r.meta_model}, agents on {r.eval_model}"
    )
    score = "unmeasured" if r.workspace_score is None else f"{r.workspace_score:.3f}"
    console.print(
        f"workspace score {score} ({escape(r.workspace_source)}); {r.committed} iteration(s)"
    )
    console.print(_trajectory(r))
    _holdout(r)
    _section("what was learned (latest knowledge)", r.learned)
    _section("open hypotheses", r.hypotheses)
    _section("axes", (*r.axes, f"frontier: {' > '.join(r.frontier) or '(none)'}"))
    held = sum(c.ok for c in r.contracts)
    console.print(f"[bold]hard contracts: {held}/{len(r.contracts)} hold[/]")
    for c in r.contracts:
        mark = "[green]ok[/]" if c.ok else "[red]BROKEN[/]"
        console.print(
            f"  {mark} {c.number}. {escape(c.name)}" + ("" if c.ok else f": {escape(c.detail)}")
        )


def _holdout(r: StatusReport) -> None:
    if not r.holdout:
        console.print(
            "[bold]holdout[/]: none (a directory made before holdouts, or no task left to hold "
            "out); numbers below are on the tasks the loop optimises"
        )
        return
    overfit = {None: "not checked yet", True: "[bold red]OVERFIT[/]", False: "no overfit signal"}
    console.print(
        f"[bold]holdout[/] ({len(r.holdout)} tasks, never shown to the meta model): "
        f"{overfit[r.overfit]}"
    )
    for c in r.holdout_checks:
        console.print(f"  - {escape(c.line())}")


def _trajectory(r: StatusReport) -> Table:
    table = Table(
        title="trajectory" + (" [SIMULATED]" if r.simulated else ""), title_justify="left", box=None
    )
    for col in (
        "iter",
        "specs: axis scale critic -> verdict delta",
        "workspace",
        "adopted",
        "REFLECT",
    ):
        table.add_column(col)
    for row in r.iterations:
        specs = "\n".join(
            f"{s.spec_id} {s.axis} {s.scale} {s.critic} -> {s.verdict}"
            + (f" {s.delta:+.3f}" if s.delta is not None else "")
            for s in row.specs
        )
        before = "-" if row.score_before is None else f"{row.score_before:.3f}"
        after = "-" if row.score_after is None else f"{row.score_after:.3f}"
        table.add_row(str(row.iter), escape(specs), f"{before} -> {after}", row.adopted or "",
                      escape("; ".join(row.reflect)) + (" (rebuttal)" if row.rebuttal else ""))  # fmt: skip
    return table


def _section(title: str, lines: tuple[str, ...]) -> None:
    console.print(f"[bold]{title}[/]")
    for line in lines or ("(none)",):
        console.print(f"  - {escape(line)}")


def _maybe_tuple(ids: list[str] | None) -> tuple[str, ...] | None:
    return None if ids is None else tuple(ids)
