"""`loopwright export mlflow RUN_DIR --uri URI` and `loopwright export otel RUN_DIR --out FILE`:
a run in the tracker (MLflow) or the trace format (OpenTelemetry) the user already has."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from loopwright.cli._app import app
from loopwright.report.export import export_mlflow, export_otel

__all__ = ["export_app"]

console = Console(highlight=False, soft_wrap=True)
export_app = typer.Typer(help="Export a run directory to an experiment tracker.")
app.add_typer(export_app, name="export")


@export_app.command("mlflow")
def mlflow_command(
    run_dir: Annotated[Path, typer.Argument(help="An evolve run directory.")],
    uri: Annotated[
        str,
        typer.Option(
            "--uri",
            help="The MLflow tracking URI: http://HOST:PORT of an `mlflow server`, or a file: "
            "store (MLflow 3 needs MLFLOW_ALLOW_FILE_STORE=true for those).",
        ),
    ],
    experiment: Annotated[
        str, typer.Option("--experiment", help="The MLflow experiment (made when missing).")
    ] = "loopwright",
    children: Annotated[
        bool, typer.Option("--children", help="Also one child run per individual.")
    ] = False,
    replace: Annotated[
        bool, typer.Option("--replace", help="Replace an earlier export of this run.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the MLflow ids as JSON.")] = False,
) -> None:
    """Log an evolve run to MLflow: the config as params, each generation's figures as metrics,
    the winner's YAML, result.json, config.yaml and the report as artifacts (docs/report.md)."""
    done = export_mlflow(run_dir, uri, experiment=experiment, children=children, replace=replace)
    if as_json:
        typer.echo(json.dumps({"run_id": done.run_id, "experiment_id": done.experiment_id,
                               "tracking_uri": done.tracking_uri,
                               "metric_points": done.metric_points, "children": done.children,
                               "artifacts": list(done.artifacts)}, indent=2))  # fmt: skip
        return
    console.print(
        f"exported {run_dir} to MLflow run {done.run_id} (experiment {experiment!r} at {uri}): "
        f"{done.metric_points} metric points, {done.children} child runs, "
        f"artifacts {', '.join(done.artifacts)}"
    )


@export_app.command("otel")
def otel_command(
    run_dir: Annotated[Path, typer.Argument(help="A run, evolve or research directory.")],
    out: Annotated[
        Path | None, typer.Option("--out", help="Write the spans here, one JSON object a line.")
    ] = None,
    endpoint: Annotated[
        str | None,
        typer.Option(
            "--endpoint",
            help="Send them to an OTLP/HTTP traces URL instead "
            "(e.g. http://127.0.0.1:4318/v1/traces).",
        ),
    ] = None,
) -> None:
    """Export every task run's exhaust as an OpenTelemetry trace in the GenAI conventions: spans
    per node, per model call (tokens, cost) and per tool call (docs/report.md)."""
    done = export_otel(run_dir, out=out, endpoint=endpoint)
    console.print(f"exported {done.traces} task runs as {done.spans} spans to {done.target}")
