"""`loopwright tasks import|mine`: external benchmarks and a repository's own history, written
as task folders that `bench validate`, `run`, `evolve`, `research` and `ab` take."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import TaskID
from rich.table import Table

from loopwright.cli._app import EXIT_FAILED, app, progress_bar
from loopwright.cli._parse import id_list
from loopwright.cli.bench import EnvCacheOption, SandboxOption
from loopwright.errors import UsageError
from loopwright.models import model_factory
from loopwright.sandbox import EnvironmentCache, TaskContainers, default_sandbox
from loopwright.scoring import (
    MineOptions,
    MineReport,
    PytestGrader,
    Rewrite,
    mine_repository,
    statement_rewriter,
)
from loopwright.tasks import RegisteredBenchmark, register_benchmark_dir
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
from loopwright.tasks.importers.harbor import HarborImport, harbor_task_dirs, import_harbor

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
    env_spec: Annotated[
        Path | None,
        typer.Option(
            "--env-spec",
            help="A TOML file with one \\[environment] table (task.toml's keys) that every task "
            "gets instead of the inferred one; its paths are relative to the file, and the "
            "environment/ folder beside it (requirements, wheels) is copied into every task "
            "(docs/importing.md, 'Your own environment: --env-spec').",
        ),
    ] = None,
    sandbox: SandboxOption = "auto",
    env_cache: EnvCacheOption = None,
    register: Annotated[
        bool,
        typer.Option("--register/--no-register", help="Register the output by name (bench list)."),
    ] = True,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Turn a repository's own history into a validated benchmark, offline: each first-parent
    commit that changes code and tests and has a stable fail-to-pass test becomes a task.
    Each task's \\[environment] is inferred from the repository at the commit's base (mine.json
    says how, per commit), unless --env-spec gives one: that table then replaces the inferred
    one for every task, and the test runs that find FAIL_TO_PASS use it."""
    options = MineOptions(
        repo=repo, out=out, max_commits=max_commits, since=since, paths=paths,
        jobs=jobs or min(os.cpu_count() or 1, 64), env_spec=env_spec,
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
    entry = None
    if register and report.kept:
        entry = register_benchmark_dir(options.out, source="mined", replace=True)
    if as_json:
        typer.echo(report.model_dump_json(indent=2))
    else:
        console.print(_mine_table(report))
        _print_mined(report, str(options.out) if entry is None else entry.name, registered=entry)
    if not report.kept:
        err_console.print(escape(_nothing_kept(report)), soft_wrap=True)
        raise typer.Exit(EXIT_FAILED)


def _nothing_kept(report: MineReport) -> str:
    """Why a mining run kept no task (its commonest drop reasons) and what to try."""
    reasons: dict[str, int] = {}
    for row in report.commits:
        if row.reason:
            reasons[row.reason] = reasons.get(row.reason, 0) + 1
    top = sorted(reasons.items(), key=lambda item: (-item[1], item[0]))[:3]
    why = "; ".join(f"{n}x {reason}" for reason, n in top) or "no commit in the window"
    return (
        f"failed: no task kept of {len(report.commits)} commit(s) examined ({why}).\n"
        "  fix: examine more history (--max N), name an environment the tests can run in "
        "(--env-spec FILE) when no test ran, or mine a repository whose commits change code "
        "and tests together"
    )


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


def _print_mined(report: MineReport, bench: str, *, registered: RegisteredBenchmark | None) -> None:
    kept = len(report.kept)
    candidates = [c for c in report.commits if c.task_id is not None]
    per_task = sum(c.seconds for c in candidates) / len(candidates) if candidates else 0.0
    console.print(
        f"{kept} task(s) kept of {len(report.commits)} commit(s) examined "
        f"({len(candidates)} candidate(s)) in {report.total_s:.1f}s, "
        f"{per_task:.1f}s per candidate; instructions: {report.instruction_source}"
    )
    if report.env_spec is not None:
        console.print(
            escape(
                f"environment: the [environment] of {report.env_spec} for every task (the "
                "inferred one, not used, is in mine.json)"
            )
        )
    if registered is not None:
        console.print(f"registered as {registered.name!r} ({registered.path}): bench list")
    if kept:
        console.print(
            f"check it: loopwright bench validate {bench}\n"
            f"use it: loopwright run builder-only --bench {bench} (evolve and research take "
            "--bench too)"
        )


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
RegisterOption = Annotated[
    bool,
    typer.Option("--register/--no-register", help="Register the output by name (bench list)."),
]


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
    register: RegisterOption = True,
    as_json: JsonOption = False,
) -> None:
    """Import SWE-bench instances as task folders, one per instance.

    Every instance is either converted or listed with the reason it was not.
    Exit codes: 0 all converted, 1 any skipped, 2 a user error (an unreadable SOURCE, ...).
    """
    options = _options(repos, hints, env_spec, ids)
    with _Bar(enabled=not as_json, label="importing SWE-bench instances") as bar:
        report = import_swebench(source, out, options, progress=bar)
    _finish(report, out, as_json, source="swebench" if register else None)


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
    register: RegisterOption = True,
    as_json: JsonOption = False,
) -> None:
    """Import FeatureBench instances (ids ending .lv1 / .lv2) as task folders.

    Exit codes as for `tasks import swebench`: 0 all converted, 1 any skipped, 2 user error.
    """
    options = _options(repos, hints, env_spec, ids)
    with _Bar(enabled=not as_json, label="importing FeatureBench instances") as bar:
        report = import_featurebench(source, out, options, progress=bar)
    _finish(report, out, as_json, source="featurebench" if register else None)


def _options(
    repos: Path, hints: bool, env_spec: Path | None, ids: list[str] | None
) -> ImportOptions:
    if not repos.is_dir():
        raise UsageError(
            f"--repos {repos} is not a folder",
            fix="point --repos at a folder of git clones named owner__repo or owner/repo",
        )
    wanted = tuple(id_list(ids, "--ids") or ())
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


def _finish(report: ImportReport, out: Path, as_json: bool, *, source: str | None) -> None:
    """Print the report, register the output by name (`source` None: not), exit 1 when any
    instance was skipped."""
    entry = None
    if source is not None and report.converted:
        entry = register_benchmark_dir(out, source=source, replace=True)
    if as_json:
        typer.echo(report.model_dump_json(indent=2))
    else:
        _print_report(report, out)
        if entry is not None:
            console.print(f"registered as {entry.name!r}: bench list, --bench {entry.name}")
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
