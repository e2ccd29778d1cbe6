"""An evolve run in MLflow, the experiment tracker DSPy and GEPA log to (docs/report.md,
"Export to MLflow").

One MLflow run per evolve run: the config as params, each generation's figures as metrics
(step = generation), the winner's workflow YAML, `result.json`, `config.yaml` and the report
as artifacts; optionally one child run per individual. `export_mlflow` writes a finished (or
stopped) run after the fact; `MlflowLive` logs each generation as it finishes, then the rest at
the end. Both read the run directory through the same typed models that wrote it, and run
nothing. The client is `mlflow-skinny` (`pip install 'loopwright[mlflow]'`), imported on first use.
"""

from __future__ import annotations

import importlib
import json
import os
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loopwright.errors import ConfigError, MissingDependencyError, UsageError
from loopwright.search import (
    Checkpoint,
    EvolveResult,
    GenerationFinished,
    GenerationSummary,
    Individual,
    ProgressEvent,
    evolve_result,
    load_checkpoint,
)
from loopwright.store import RunDir, is_simulated
from loopwright.workflow import workflow_to_yaml

__all__ = ["MLFLOW_HINT", "MlflowExport", "MlflowLive", "export_mlflow", "generation_metrics"]

MLFLOW_HINT = "pip install 'loopwright[mlflow]' (the mlflow-skinny client)"
_SOURCE_TAG = "loopwright.source"  # the run directory and its creation: one MLflow run per run
_PARAM_LIMIT = 500  # characters of a param value kept (MLflow refuses long values)


@dataclass(frozen=True, slots=True)
class MlflowExport:
    """Where an export went: the MLflow run and experiment ids, the tracking URI, how many
    metric points and child runs were logged, and the artifacts' names."""

    run_id: str
    experiment_id: str
    tracking_uri: str
    metric_points: int
    children: int
    artifacts: tuple[str, ...]


def export_mlflow(
    run_dir: str | os.PathLike[str],
    tracking_uri: str,
    *,
    experiment: str = "loopwright",
    children: bool = False,
    replace: bool = False,
) -> MlflowExport:
    """Log the evolve run in `run_dir` to the MLflow tracking store at `tracking_uri` (an
    `http(s)://` server, a `file:` store, or anything MLflow takes) under `experiment`.

    A run already exported from the same directory is refused (UsageError naming its MLflow
    run id) unless `replace`, which deletes it first: exporting twice never makes two copies.
    ConfigError when `run_dir` holds no evolve run or MLflow refuses the store (its reason,
    e.g. MLflow 3's gate on file stores, `MLFLOW_ALLOW_FILE_STORE=true`);
    MissingDependencyError when the client is not installed. Deterministic but for MLflow's
    own ids and timestamps."""
    root = Path(run_dir)
    checkpoint = load_checkpoint(root)
    client = _client(tracking_uri)
    with _mlflow_errors(tracking_uri):
        experiment_id = _experiment_id(client, experiment)
        source = _source(root)
        _refuse_or_replace(client, experiment_id, source, replace=replace)
        run = client.create_run(experiment_id, run_name=root.name, tags=_tags(checkpoint, source))
        run_id = run.info.run_id
        try:
            points = _log_generations(client, run_id, checkpoint.summaries)
            artifacts = _log_everything_else(client, run_id, checkpoint, root)
            n_children = _log_children(client, experiment_id, run_id, checkpoint) if children else 0
        except BaseException:
            client.set_terminated(run_id, status="FAILED")
            raise
        client.set_terminated(run_id, status="FINISHED" if checkpoint.stop_reason else "KILLED")
    return MlflowExport(run_id, experiment_id, tracking_uri, points, n_children, artifacts)


class MlflowLive:
    """An `on_event` listener for `evolve`/`resume` that logs each generation's figures to
    MLflow as the generation finishes (`GenerationFinished`), in one MLflow run created at the
    first event; `finish(run_dir)` then logs params and artifacts and closes it. What
    `loopwright evolve --mlflow URI` uses. The client is imported when the listener is made, so
    a missing dependency is refused before the run starts."""

    def __init__(self, tracking_uri: str, run_dir: Path, *, experiment: str = "loopwright") -> None:
        self.tracking_uri = tracking_uri
        self.run_dir = run_dir
        self.experiment = experiment
        self._client = _client(tracking_uri)
        self._run_id: str | None = None
        self._experiment_id: str | None = None
        self.metric_points = 0

    def __call__(self, event: ProgressEvent) -> None:
        if isinstance(event, GenerationFinished):
            with _mlflow_errors(self.tracking_uri):
                self.metric_points += _log_generations(
                    self._client, self._open(), (event.summary(),)
                )

    def finish(self) -> MlflowExport:
        """Log the params, the winner and the artifacts of the run now in `run_dir`, and close
        the MLflow run (FINISHED when the run stopped by a rule, KILLED otherwise)."""
        checkpoint = load_checkpoint(self.run_dir)
        with _mlflow_errors(self.tracking_uri):
            run_id = self._open()
            self._client.set_tag(run_id, _SOURCE_TAG, _source(self.run_dir))
            artifacts = _log_everything_else(self._client, run_id, checkpoint, self.run_dir)
            status = "FINISHED" if checkpoint.stop_reason else "KILLED"
            self._client.set_terminated(run_id, status=status)
        assert self._experiment_id is not None  # set by _open
        return MlflowExport(run_id, self._experiment_id, self.tracking_uri, self.metric_points,
                            0, artifacts)  # fmt: skip

    def _open(self) -> str:
        if self._run_id is None:
            self._experiment_id = _experiment_id(self._client, self.experiment)
            tags = {"loopwright.kind": "evolve", "loopwright.live": "true"}
            run = self._client.create_run(
                self._experiment_id, run_name=self.run_dir.name, tags=tags
            )
            self._run_id = run.info.run_id
        return self._run_id


def generation_metrics(summary: GenerationSummary) -> dict[str, float]:
    """The metrics of one generation (the figures of `outer-loop status`): train best and
    mean, holdout best, the overfit gap, diversity, archive coverage, evaluations, dollars
    spent so far (agents and meta), wall seconds. A figure not measured yet is left out."""
    values: dict[str, float | None] = {
        "train_best": summary.train_best,
        "train_mean": summary.train_mean,
        "holdout_best": summary.holdout_best,
        "overfit_gap": summary.overfit.gap,
        "diversity": float(summary.diversity),
        "archive_coverage": summary.archive_coverage,
        "evaluations": float(summary.spent.evaluations),
        "spent_usd": summary.spent.usd,
        "spent_meta_usd": summary.spent.meta_usd,
        "spent_wall_s": summary.spent.wall_s,
    }
    return {k: float(v) for k, v in values.items() if v is not None}


# -- helpers ----------------------------------------------------------------------------------


def _client(tracking_uri: str) -> Any:
    # MLflow 3 reports usage to its makers from a background thread unless told not to;
    # loopwright sends nothing anywhere but the tracking URI the user named.
    os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
    try:
        mlflow: Any = importlib.import_module("mlflow")
    except ImportError:
        raise MissingDependencyError(
            "exporting to MLflow needs the MLflow client",
            got="mlflow is not installed",
            fix=MLFLOW_HINT,
        ) from None
    if not tracking_uri.strip():
        raise ConfigError("the MLflow tracking URI is empty", fix="e.g. http://127.0.0.1:5000")
    with _mlflow_errors(tracking_uri):
        return mlflow.MlflowClient(tracking_uri=tracking_uri)


class _mlflow_errors:
    """MLflow's own refusals (a store it will not open, a server that is down) as one
    ConfigError naming the URI; anything else propagates."""

    def __init__(self, uri: str) -> None:
        self.uri = uri

    def __enter__(self) -> None:
        return None

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: object) -> None:  # fmt: skip
        if exc is None or not _is_mlflow_error(exc):
            return
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigError(
            f"MLflow refused the tracking store {self.uri}",
            got=first[:400],
            fix="check the URI (a running `mlflow server`, or a file: store with "
            "MLFLOW_ALLOW_FILE_STORE=true under MLflow 3)",
        ) from None


def _is_mlflow_error(exc: BaseException) -> bool:
    return any(c.__module__.startswith("mlflow") for c in type(exc).__mro__)


def _experiment_id(client: Any, name: str) -> str:
    found = client.get_experiment_by_name(name)
    if found is not None:
        return str(found.experiment_id)
    return str(client.create_experiment(name))


def _source(root: Path) -> str:
    """The run directory (absolute) and when it was created: the identity of an export."""
    meta = RunDir(root).meta()
    return f"{root.resolve()}@{meta.created_at if meta is not None else ''}"


def _refuse_or_replace(client: Any, experiment_id: str, source: str, *, replace: bool) -> None:
    escaped = source.replace("'", "\\'")
    found = client.search_runs([experiment_id], filter_string=f"tags.`{_SOURCE_TAG}` = '{escaped}'")
    for old in found:
        if not replace:
            raise UsageError(
                "this run is already in MLflow",
                got=f"MLflow run {old.info.run_id} in experiment {experiment_id}",
                fix="pass --replace (replace=True) to export it again in its place",
            )
        for child in client.search_runs(
            [experiment_id], filter_string=f"tags.`mlflow.parentRunId` = '{old.info.run_id}'"
        ):
            client.delete_run(child.info.run_id)
        client.delete_run(old.info.run_id)


def _tags(checkpoint: Checkpoint, source: str) -> dict[str, str]:
    config = checkpoint.config
    return {
        _SOURCE_TAG: source,
        "loopwright.kind": "evolve",
        "loopwright.version": checkpoint.loopwright_version,
        "loopwright.model": config.model,
        "loopwright.simulated": str(is_simulated(config.model)).lower(),
        "loopwright.stop_reason": checkpoint.stop_reason or "(not finished)",
        "mlflow.note.content": (
            "SIMULATED: offline sim model, not a real LLM" if is_simulated(config.model) else ""
        ),
    }


def _log_generations(client: Any, run_id: str, summaries: tuple[GenerationSummary, ...]) -> int:
    entities = importlib.import_module("mlflow.entities")
    now = int(time.time() * 1000)
    metrics = [
        entities.Metric(key, value, now, s.generation)
        for s in summaries
        for key, value in generation_metrics(s).items()
    ]
    for start in range(0, len(metrics), 1000):  # MLflow takes at most 1,000 per batch
        client.log_batch(run_id, metrics=metrics[start : start + 1000])
    return len(metrics)


def _log_everything_else(
    client: Any, run_id: str, checkpoint: Checkpoint, root: Path
) -> tuple[str, ...]:
    entities = importlib.import_module("mlflow.entities")
    params = [entities.Param(k, v) for k, v in _flat(checkpoint.config.model_dump(mode="json"))]
    for start in range(0, len(params), 100):  # MLflow takes at most 100 params per batch
        client.log_batch(run_id, params=params[start : start + 100])
    result = evolve_result(checkpoint)
    final = {"winner_train_mean": result.winner.mean_score("train"),
             "winner_holdout_mean": result.winner.mean_score("holdout"),
             "seed_holdout_mean": result.seed.mean_score("holdout")}  # fmt: skip
    if result.gain is not None:
        final |= {"holdout_gain": result.gain.gain, "holdout_gain_low": result.gain.low,
                  "holdout_gain_high": result.gain.high}  # fmt: skip
    final |= _design_metrics(result)
    for key, value in final.items():
        if value is not None:
            client.log_metric(run_id, key, float(value), step=checkpoint.generation)
    client.set_tag(run_id, "loopwright.winner", f"{result.winner.id} ({result.winner.mode})")
    if result.best_design is not None:
        client.set_tag(run_id, "loopwright.best_design", result.best_design.name)
    names = ["winner.yaml"]
    client.log_text(run_id, workflow_to_yaml(result.winner.workflow), "winner.yaml")
    for name in ("result.json", "config.yaml", "report.html"):
        if (root / name).is_file():
            client.log_artifact(run_id, str(root / name))
            names.append(name)
    return tuple(names)


def _design_metrics(result: EvolveResult) -> dict[str, float | None]:
    """With `compare_designs`: each hand design's holdout mean (`design.<name>.holdout`) and
    the winner's paired gain over the best one (`design_gain` with `_low`/`_high`)."""
    metrics: dict[str, float | None] = {
        f"design.{d.name}.holdout": d.holdout for d in result.designs
    }
    gain = result.design_gain
    if gain is not None:
        metrics |= {"design_gain": gain.gain, "design_gain_low": gain.low,
                    "design_gain_high": gain.high}  # fmt: skip
    return metrics


def _log_children(client: Any, experiment_id: str, parent_id: str, checkpoint: Checkpoint) -> int:
    for ind in _by_generation(checkpoint.individuals):
        child = client.create_run(
            experiment_id,
            run_name=f"{ind.mode} ({ind.id[:8]})",
            tags={"mlflow.parentRunId": parent_id, "loopwright.individual": ind.id},
        )
        entities = importlib.import_module("mlflow.entities")
        params = {
            "generation": str(ind.generation),
            "operator": ind.lineage.operator,
            "parents": ",".join(ind.lineage.parents) or "-",
            "workflow_hash": ind.hash,
            "nodes": str(len(ind.workflow.nodes)),
        }
        metrics = {
            f"{split}_mean": ind.mean_score(split) for split in ("train", "holdout")
        }  # fmt: skip
        now = int(time.time() * 1000)
        client.log_batch(
            child.info.run_id,
            params=[entities.Param(k, v) for k, v in params.items()],
            metrics=[
                entities.Metric(k, float(v), now, 0) for k, v in metrics.items() if v is not None
            ],
        )
        client.set_terminated(child.info.run_id, status="FINISHED")
    return len(checkpoint.individuals)


def _by_generation(individuals: Mapping[str, Individual]) -> list[Individual]:
    return sorted(individuals.values(), key=lambda i: (i.generation, i.id))


def _flat(data: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, str]]:
    """Nested config as `a.b` keys with string values (lists as JSON), cut at _PARAM_LIMIT."""
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            yield from _flat(value, f"{name}.")
            continue
        text = value if isinstance(value, str) else json.dumps(value)
        yield name, text if len(text) <= _PARAM_LIMIT else text[: _PARAM_LIMIT - 1] + "…"
