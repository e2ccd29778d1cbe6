"""`loopwright tasks import|mine`: external benchmarks and a repository's own history, written
as task folders that `bench validate`, `run`, `evolve`, `research` and `ab` take."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import TaskID
from rich.table import Table

from loopwright.cli._app import EXIT_FAILED, app, progress_bar
from loopwright.errors import UsageError
from loopwright.tasks.importers import (
    REPORT_FILE,
    ConvertedTask,
    ImportOptions,
    ImportReport,
    SkippedInstance,
    import_featurebench,
    import_swebench,
    load_env_spec,
)

tasks_app = typer.Typer(
    help="Make benchmarks: import SWE-bench, FeatureBench or Harbor tasks, or mine a repository's "
    "history into validated tasks."
)
app.add_typer(tasks_app, name="tasks")

import_app = typer.Typer(help="Import an external benchmark format as loopwright task folders.")
tasks_app.add_typer(import_app, name="import")


# Piped output is not cut to 80 columns: ids and reasons must stay whole.
console = Console(highlight=False, width=None if sys.stdout.isatty() else 200)
err_console = Console(stderr=True, highlight=False)

ReposOption = Annotated[
    Path,
    typer.Option(
        "--repos",
        help="A folder of local git clones, named owner__repo or owner/repo (nothing is "
        "downloaded).",
    ),
]
OutOption = Annotated[
    Path, typer.Option("--out", help="Where the task folders (and import_report.json) go.")
]
HintsOption = Annotated[
    bool, typer.Option("--hints", help="Append the instance's hints_text to the instruction.")
]
EnvSpecOption = Annotated[
    Path | None,
    typer.Option(
        "--env-spec",
        help="A TOML file of \\[environment] tables that replace the chosen environments "
        "(docs/importing.md, 'Environments').",
    ),
]
IdsOption = Annotated[
    list[str] | None,
    typer.Option("--ids", help="Import only these instance ids (repeat, or comma-separate)."),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print the import report as JSON.")]


@import_app.command("swebench")
def import_swebench_command(
    source: Annotated[
        Path,
        typer.Argument(
            help="A .json, .jsonl or .parquet file of SWE-bench instances, or a SWE-bench v5 "
            "task repository (sweb.yaml + tasks/<id>/)."
        ),
    ],
    repos: ReposOption,
    out: OutOption,
    hints: HintsOption = False,
    env_spec: EnvSpecOption = None,
    ids: IdsOption = None,
    as_json: JsonOption = False,
) -> None:
    """Import SWE-bench instances as task folders, one per instance.

    Every instance is either converted or listed with the reason it was not.
    Exit codes: 0 all converted, 1 any skipped, 2 a user error (an unreadable SOURCE, ...).
    """
    options = _options(repos, hints, env_spec, ids)
    with _Bar(enabled=not as_json, label="importing SWE-bench instances") as bar:
        report = import_swebench(source, out, options, progress=bar)
    _finish(report, out, as_json)


@import_app.command("featurebench")
def import_featurebench_command(
    source: Annotated[
        Path, typer.Argument(help="A .json, .jsonl or .parquet file of FeatureBench instances.")
    ],
    repos: ReposOption,
    out: OutOption,
    hints: HintsOption = False,
    env_spec: EnvSpecOption = None,
    ids: IdsOption = None,
    as_json: JsonOption = False,
) -> None:
    """Import FeatureBench instances (ids ending .lv1 / .lv2) as task folders.

    Exit codes as for `tasks import swebench`: 0 all converted, 1 any skipped, 2 user error.
    """
    options = _options(repos, hints, env_spec, ids)
    with _Bar(enabled=not as_json, label="importing FeatureBench instances") as bar:
        report = import_featurebench(source, out, options, progress=bar)
    _finish(report, out, as_json)


def _options(
    repos: Path, hints: bool, env_spec: Path | None, ids: list[str] | None
) -> ImportOptions:
    if not repos.is_dir():
        raise UsageError(
            f"--repos {repos} is not a folder",
            fix="point --repos at a folder of git clones named owner__repo or owner/repo",
        )
    wanted = tuple(i.strip() for item in ids or [] for i in item.split(",") if i.strip())
    spec = load_env_spec(env_spec) if env_spec is not None else None
    return ImportOptions(repos=repos, hints=hints, env_spec=spec, ids=wanted)


class _Bar:
    """The import's progress bar on stderr (an ImportProgress)."""

    def __init__(self, *, enabled: bool, label: str) -> None:
        self._progress = progress_bar(err_console, enabled=enabled and err_console.is_terminal)
        self._label = label
        self._bar: TaskID | None = None

    def __enter__(self) -> _Bar:
        self._progress.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._progress.__exit__(None, None, None)

    def start(self, total: int) -> None:
        self._bar = self._progress.add_task(self._label, total=total)

    def done(self, result: ConvertedTask | SkippedInstance) -> None:
        if self._bar is not None:
            self._progress.advance(self._bar)


def _finish(report: ImportReport, out: Path, as_json: bool) -> None:
    if as_json:
        typer.echo(report.model_dump_json(indent=2))
    else:
        _print_report(report, out)
    if report.skipped:
        raise typer.Exit(EXIT_FAILED)


def _print_report(report: ImportReport, out: Path) -> None:
    table = Table("instance", "task", "seconds", "result", box=None)
    for done in report.converted:
        table.add_row(done.source_id, done.task_id, f"{done.seconds:.2f}", "[green]converted[/]")
    for skip in report.skipped:
        table.add_row(
            skip.source_id,
            "-",
            f"{skip.seconds:.2f}",
            f"[bold red]skipped[/] {escape(skip.reason)}",
        )
    console.print(table)
    handled = len(report.converted) + len(report.skipped)
    console.print(
        f"converted {len(report.converted)} of {handled} instance(s), skipped "
        f"{len(report.skipped)}; {report.seconds:.2f}s in all, "
        f"{report.seconds_per_task:.2f}s per task; report: {out / REPORT_FILE}"
    )
    if report.converted:
        console.print(f"check them with: loopwright bench validate {out}")
