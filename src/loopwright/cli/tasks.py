"""`loopwright tasks import|mine`: external benchmarks and a repository's own history, written
as task folders that `bench validate`, `run`, `evolve`, `research` and `ab` take."""

from __future__ import annotations

import typer

from loopwright.cli._app import app

tasks_app = typer.Typer(
    help="Make benchmarks: import SWE-bench, FeatureBench or Harbor tasks, or mine a repository's "
    "history into validated tasks."
)
app.add_typer(tasks_app, name="tasks")

import_app = typer.Typer(help="Import an external benchmark format as loopwright task folders.")
tasks_app.add_typer(import_app, name="import")
