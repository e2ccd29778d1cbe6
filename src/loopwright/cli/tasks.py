"""`loopwright tasks import|mine`: external benchmarks and a repository's own history, written
as task folders that `bench validate`, `run`, `evolve`, `research` and `ab` take."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from loopwright.cli._app import app, progress_bar
from loopwright.cli.bench import EnvCacheOption, SandboxOption
from loopwright.models import model_factory
from loopwright.sandbox import EnvironmentCache, default_sandbox
from loopwright.scoring import (
    MineOptions,
    MineReport,
    PytestGrader,
    Rewrite,
    mine_repository,
    statement_rewriter,
)

console = Console(highlight=False, width=None if sys.stdout.isatty() else 200)
err_console = Console(stderr=True, highlight=False)

tasks_app = typer.Typer(
    help="Make benchmarks: import SWE-bench, FeatureBench or Harbor tasks, or mine a repository's "
    "history into validated tasks."
)
app.add_typer(tasks_app, name="tasks")

import_app = typer.Typer(help="Import an external benchmark format as loopwright task folders.")
tasks_app.add_typer(import_app, name="import")


@tasks_app.command("mine")
def mine(
    repo: Annotated[Path, typer.Argument(help="A local git repository (nothing is downloaded).")],
    out: Annotated[
        Path, typer.Option("--out", help="The benchmark folder to write (new or empty).")
    ],
    max_commits: Annotated[
        int | None,
        typer.Option(
            "--max", min=1, help="Examine the newest N first-parent commits (the window)."
        ),
    ] = None,
    since: Annotated[
        str | None, typer.Option("--since", help="Only commits after this revision (REV..HEAD).")
    ] = None,
    paths: Annotated[
        str | None,
        typer.Option(
            "--paths", help="Only commits touching files matching this glob (e.g. 'src/**')."
        ),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            help="Rewrite each instruction as a problem statement with this model "
            "(sim or none: the commit message as is).",
        ),
    ] = None,
    api_base: Annotated[
        str | None, typer.Option("--api-base", help="OpenAI-compatible server for --model.")
    ] = None,
    jobs: Annotated[
        int | None,
        typer.Option("--jobs", min=1, help="Commits mined at once (default: the cores)."),
    ] = None,
    sandbox: SandboxOption = "auto",
    env_cache: EnvCacheOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Turn a repository's own history into a validated benchmark, offline: each first-parent
    commit that changes code and tests and has a stable fail-to-pass test becomes a task."""
    options = MineOptions(
        repo=repo, out=out, max_commits=max_commits, since=since, paths=paths,
        jobs=jobs or min(os.cpu_count() or 1, 64),
    )  # fmt: skip
    rewrite, source = _rewriter(model, api_base)
    grader = PytestGrader(default_sandbox(sandbox))
    shown = not as_json and err_console.is_terminal
    with progress_bar(err_console, enabled=shown) as progress:
        bar = progress.add_task(f"mining {repo}", total=None)
        report = mine_repository(
            options, grader, environments=EnvironmentCache(env_cache), rewrite=rewrite,
            instruction_source=source,
            on_window=lambda n: progress.update(bar, total=n),
            on_commit=lambda _row: progress.advance(bar),
        )  # fmt: skip
    if as_json:
        typer.echo(report.model_dump_json(indent=2))
        return
    console.print(_mine_table(report))
    _print_mined(report, options.out)


def _rewriter(model: str | None, api_base: str | None) -> tuple[Rewrite | None, str]:
    """The instruction rewrite for `--model` and how the report names the instructions' source."""
    if model is None or model.strip().partition("?")[0] == "sim":
        why = "no --model" if model is None else "sim does not rewrite"
        return None, f"the commit message, as is ({why})"
    chat = model_factory(model, benchmark=None, api_base=api_base)(0)
    return statement_rewriter(chat), f"rewritten by {chat.name} from the commit message"


def _mine_table(report: MineReport) -> Table:
    table = Table("commit", "task", "verdict", "F2P", "P2P", "flawed", "level", "time", box=None)
    for row in report.commits:
        verdict = "[green]kept[/]" if row.kept else f"dropped: {row.reason}"
        table.add_row(
            row.commit[:10], row.task_id or "-", verdict,
            str(len(row.fail_to_pass)) if row.kept else "-",
            str(row.pass_to_pass) if row.kept else "-",
            ", ".join(row.flawed) or "-", str(row.level or "-"), f"{row.seconds:.1f}s",
        )  # fmt: skip
    return table


def _print_mined(report: MineReport, out: Path) -> None:
    kept = len(report.kept)
    candidates = [c for c in report.commits if c.task_id is not None]
    per_task = sum(c.seconds for c in candidates) / len(candidates) if candidates else 0.0
    console.print(
        f"{kept} task(s) kept of {len(report.commits)} commit(s) examined "
        f"({len(candidates)} candidate(s)) in {report.total_s:.1f}s, "
        f"{per_task:.1f}s per candidate; instructions: {report.instruction_source}"
    )
    if kept:
        console.print(
            f"check it: loopwright bench validate {out}\n"
            f"use it: loopwright run builder-only --bench {out} (evolve and research take "
            "--bench too)"
        )
