"""Run directories exported to the tools a user already looks at: MLflow (an evolve run as an
MLflow run with its generations as metrics) and OpenTelemetry (each task run's exhaust as
GenAI spans). Both read run directories and run nothing; their clients are optional extras,
imported on first use (docs/report.md, "Export")."""

from __future__ import annotations

from loopwright.report.export._mlflow import (
    MLFLOW_HINT,
    MlflowExport,
    MlflowLive,
    export_mlflow,
    generation_metrics,
)
from loopwright.report.export._otel import OTEL_HINT, OtelExport, export_otel, task_run_logs

__all__ = [
    "MLFLOW_HINT",
    "OTEL_HINT",
    "MlflowExport",
    "MlflowLive",
    "OtelExport",
    "export_mlflow",
    "export_otel",
    "generation_metrics",
    "task_run_logs",
]
