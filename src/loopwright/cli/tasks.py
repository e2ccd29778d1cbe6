"""`loopwright tasks import|mine`: external benchmarks and a repository's own history, written
as task folders that `bench validate`, `run`, `evolve`, `research` and `ab` take."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from loopwright.cli._app import EXIT_FAILED, app, progress_bar
from loopwright.sandbox import TaskContainers
from loopwright.tasks import RegisteredBenchmark, register_benchmark_dir
from loopwright.tasks.importers.harbor import HarborImport, harbor_task_dirs, import_harbor

tasks_app = typer.Typer(
    help="Make benchmarks: import SWE-bench, FeatureBench or Harbor tasks, or mine a repository's "
    "history into validated tasks."
)
app.add_typer(tasks_app, name="tasks")

import_app = typer.Typer(help="Import an external benchmark format as loopwright task folders.")
tasks_app.add_typer(import_app, name="import")

console = Console(highlight=False, width=None if sys.stdout.isatty() else 200)
err_console = Console(stderr=True, highlight=False)


@import_app.command("harbor")
def import_harbor_command(
    source: Annotated[
        Path, typer.Argument(help="A Harbor / Terminal-Bench task folder, or a folder of them.")
    ],
    out: Annotated[Path, typer.Option("--out", help="Where to write the task folders.")],
    name: Annotated[
        str | None,
        typer.Option(
            "--name", help="Register the output as this benchmark (default: its folder name)."
        ),
    ] = None,
    register: Annotated[
        bool,
        typer.Option("--register/--no-register", help="Register the output by name (bench list)."),
    ] = True,
    as_json: Annotated[bool, typer.Option("--json", help="Print the outcome as JSON.")] = False,
) -> None:
    """Import Harbor tasks: each task's Dockerfile is built (base images must be present
    locally), its WORKDIR becomes repo/, test.sh grades it through its reward file, and
    solution/solve.sh, run once in its container, becomes the gold. Tasks that cannot be
    converted are listed with the reason (exit 1). Validate with
    `loopwright bench validate OUT --sandbox docker`."""
    dirs = harbor_task_dirs(source)
    containers = TaskContainers()
    shown = not as_json and err_console.is_terminal
    with progress_bar(err_console, enabled=shown) as progress:
        bar = progress.add_task("importing Harbor tasks", total=len(dirs))
        done = import_harbor(source, out, containers, on_task=lambda _d: progress.advance(bar))
    entry = None
    if register and done.imported:
        entry = register_benchmark_dir(done.out, name=name, source="harbor", replace=True)
    if as_json:
        typer.echo(json.dumps(_import_json(done, entry), indent=2))
    else:
        _print_import(done, entry)
    if done.skipped:
        raise typer.Exit(EXIT_FAILED)


def _import_json(done: HarborImport, entry: RegisteredBenchmark | None) -> dict[str, object]:
    return {
        "out": str(done.out),
        "registered_as": entry.name if entry else None,
        "imported": [
            {
                "task": t.task_id,
                "path": str(t.path),
                "gold": t.gold,
                "seconds": t.seconds,
                "notes": list(t.notes),
            }
            for t in done.imported
        ],
        "skipped": [{"source": str(s.source), "reason": s.reason} for s in done.skipped],
    }


def _print_import(done: HarborImport, entry: RegisteredBenchmark | None) -> None:
    table = Table("task", "status", "time", "note", box=None)
    for t in done.imported:
        table.add_row(t.task_id, "imported", f"{t.seconds:.1f}s", "; ".join(t.notes))
    for s in done.skipped:
        table.add_row(s.source.name, "[bold red]not converted[/]", "-", s.reason)
    console.print(table)
    where = f"; registered as {entry.name!r}" if entry else ""
    console.print(
        f"{len(done.imported)} task(s) written to {done.out}, {len(done.skipped)} not "
        f"converted{where}. Check them: loopwright bench validate {done.out} --sandbox docker"
    )
