"""`loopwright report RUN_DIR [-o FILE]`: one self-contained HTML page of a run directory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from loopwright.cli._app import app
from loopwright.errors import LoopwrightError
from loopwright.report import ReportResult, write_report

__all__ = ["describe", "report", "report_at_end"]

console = Console(highlight=False, soft_wrap=True)
err_console = Console(stderr=True, highlight=False, soft_wrap=True)


@app.command("report")
def report(
    run_dir: Annotated[
        Path,
        typer.Argument(
            help="A directory written by `run`, `evolve`, `ab record` or `research init`."
        ),
    ],
    output: Annotated[
        Path | None,
        typer.Option(
            "-o", "--output", help="The HTML file to write (default: RUN_DIR/report.html)."
        ),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print where it was written, as JSON.")
    ] = False,
) -> None:
    """Write the HTML report of a run or evolve directory: one offline file, no server needed.

    An interrupted run still gives a report, marked partial; see docs/report.md."""
    result = write_report(run_dir, output)
    if as_json:
        typer.echo(json.dumps(_as_dict(result), indent=2))
    else:
        console.print(describe(result), markup=False, soft_wrap=True)


def describe(result: ReportResult) -> str:
    """One line saying where the report is and what it holds."""
    notes = [f"{result.kind} report", f"{result.size / 1024:.0f} KB"]
    if result.partial:
        notes.append("PARTIAL")
    if result.simulated:
        notes.append("SIMULATED")
    return f"report written to {result.path} ({', '.join(notes)})"


def _as_dict(result: ReportResult) -> dict[str, object]:
    return {
        "path": str(result.path),
        "kind": result.kind,
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
