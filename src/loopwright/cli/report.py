"""`loopwright report RUN_DIR [-o FILE]`: one self-contained HTML page of a run directory;
`loopwright report RUN1 RUN2 ...`: one comparison page of evolve runs; `loopwright report RUN
--watch`: a live page of an evolve run, served on this machine."""

from __future__ import annotations

import json
import webbrowser
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from loopwright.cli._app import app
from loopwright.errors import LoopwrightError, UsageError
from loopwright.report import (
    COMPARE_FILE,
    CompareResult,
    ReportResult,
    Watcher,
    run_state,
    write_comparison,
    write_report,
)

__all__ = ["describe", "describe_comparison", "report", "report_at_end", "watch_run"]

console = Console(highlight=False, soft_wrap=True)
err_console = Console(stderr=True, highlight=False, soft_wrap=True)


@app.command("report")
def report(
    run_dirs: Annotated[
        list[Path],
        typer.Argument(
            help="A directory written by `run`, `evolve`, `ab record` or `research init`; two or "
            "more evolve run directories for a comparison page.",
            show_default=False,
        ),
    ],
    output: Annotated[
        Path | None,
        typer.Option(
            "-o",
            "--output",
            help="The HTML file to write (default: RUN_DIR/report.html; compare.html for a "
            "comparison).",
        ),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print where it was written, as JSON.")
    ] = False,
    watch: Annotated[
        bool,
        typer.Option(
            "--watch",
            help="Serve a live page of an evolve run on this machine that refreshes as "
            "progress.jsonl grows; stop with Ctrl-C or the page's Stop button.",
        ),
    ] = False,
    port: Annotated[
        int, typer.Option("--port", help="--watch: the loopback port (0: any free one).")
    ] = 0,
    interval: Annotated[
        float, typer.Option("--interval", help="--watch: seconds between the page's checks.")
    ] = 2.0,
    open_browser: Annotated[
        bool, typer.Option("--open", help="--watch: open the page in the default browser.")
    ] = False,
) -> None:
    """Write the HTML report of a run or evolve directory: one offline file, no server needed.

    Two or more evolve runs give one comparison page; --watch serves a live view of a run in
    progress. An interrupted run still gives a report, marked partial; see docs/report.md."""
    if watch:
        _refuse_with_watch(run_dirs, output, as_json)
        watch_run(run_dirs[0], port=port, interval=interval, open_browser=open_browser)
        return
    _refuse_watch_options(port, interval, open_browser)
    if len(run_dirs) > 1:
        compared = write_comparison(run_dirs, output if output is not None else COMPARE_FILE)
        if as_json:
            typer.echo(json.dumps(_compare_dict(compared), indent=2))
        else:
            console.print(describe_comparison(compared), markup=False, soft_wrap=True)
        return
    result = write_report(run_dirs[0], output)
    if as_json:
        typer.echo(json.dumps(_as_dict(result), indent=2))
    else:
        console.print(describe(result), markup=False, soft_wrap=True)


def _refuse_with_watch(run_dirs: list[Path], output: Path | None, as_json: bool) -> None:
    if len(run_dirs) > 1:
        raise UsageError(
            "--watch follows one run",
            got=f"{len(run_dirs)} run directories: {', '.join(str(p) for p in run_dirs)}",
            fix="watch one run per command (each gets its own page), or drop --watch to write "
            "a comparison page",
        )
    if output is not None or as_json:
        raise UsageError(
            "--watch serves a page and writes no file",
            got="--output" if output is not None else "--json",
            fix="drop --output/--json, or drop --watch to write the report once",
        )


def _refuse_watch_options(port: int, interval: float, open_browser: bool) -> None:
    if port != 0 or interval != 2.0 or open_browser:
        raise UsageError(
            "--port, --interval and --open only apply with --watch",
            got=f"--port {port}, --interval {interval:g}, --open {open_browser}",
            fix="add --watch for a live page, or drop these options",
        )


def watch_run(run_dir: Path, *, port: int, interval: float, open_browser: bool) -> None:
    """Serve the live page of `run_dir` until Ctrl-C or the page's Stop button."""
    watcher = Watcher(run_dir, port=port, interval_s=interval)
    state = run_state(run_dir)
    console.print(f"watching {run_dir} at {watcher.url}", markup=False, soft_wrap=True)
    console.print(f"  {state.text}", markup=False, soft_wrap=True)
    console.print(
        "  stop: Ctrl-C here, or the page's Stop watching button (the run itself goes on)",
        markup=False,
    )
    if open_browser:
        webbrowser.open(watcher.url)
    try:
        watcher.serve()
    except KeyboardInterrupt:
        console.print("stopped watching (Ctrl-C); the run itself goes on", markup=False)
        return
    console.print("stopped watching (from the page); the run itself goes on", markup=False)


def describe_comparison(result: CompareResult) -> str:
    """One line saying where the comparison page is and which runs it holds."""
    notes = _notes(f"{len(result.runs)} evolve runs", result)
    return f"comparison of {', '.join(result.runs)} written to {result.path} ({notes})"


def describe(result: ReportResult) -> str:
    """One line saying where the report is and what it holds."""
    return f"report written to {result.path} ({_notes(f'{result.kind} report', result)})"


def _notes(what: str, result: ReportResult | CompareResult) -> str:
    """`what`, the page's size, and PARTIAL / SIMULATED where they apply."""
    notes = [what, f"{result.size / 1024:.0f} KB"]
    if result.partial:
        notes.append("PARTIAL")
    if result.simulated:
        notes.append("SIMULATED")
    return ", ".join(notes)


def _compare_dict(result: CompareResult) -> dict[str, object]:
    return _json_fields(result, kind="compare", runs=list(result.runs))


def _as_dict(result: ReportResult) -> dict[str, object]:
    return _json_fields(result, kind=result.kind)


def _json_fields(
    result: ReportResult | CompareResult, *, kind: str, **extra: object
) -> dict[str, object]:
    """The `--json` object of a page: its path and kind, `extra`, then what both kinds share."""
    return {
        "path": str(result.path),
        "kind": kind,
        **extra,
        "partial": result.partial,
        "simulated": result.simulated,
        "bytes": result.size,
        "seconds": round(result.seconds, 3),
    }


def report_at_end(run_dir: Path, out: Console) -> ReportResult | None:
    """What `run` and `evolve` do when they finish: write the report and print its path on
    `out`. A report that cannot be written is a warning on stderr, not a failed run: the run
    itself is complete on disk and `loopwright report` can retry."""
    try:
        result = write_report(run_dir)
    except (LoopwrightError, OSError) as exc:
        err_console.print(
            f"[yellow]warning:[/] the report could not be written: {escape(str(exc))}\n"
            f"  the run is complete in {escape(str(run_dir))}; retry with: loopwright report "
            f"{escape(str(run_dir))}"
        )
        return None
    out.print(describe(result), markup=False, soft_wrap=True)  # a path must not wrap
    return result
