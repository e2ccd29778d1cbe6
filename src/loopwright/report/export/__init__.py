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

__all__ = ["MLFLOW_HINT", "MlflowExport", "MlflowLive", "export_mlflow", "generation_metrics"]
