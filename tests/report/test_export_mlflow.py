"""An evolve run exported to a real MLflow tracking store (a file store the test makes; MLflow's
own client writes and reads it back): params from the config, one metric point per generation
and figure, the winner's YAML and the run's files as artifacts, child runs per individual, a
second export refused or replaced, and the live listener logging the same figures."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from loopwright.cli._evolve_view import resume_line
from loopwright.errors import ConfigError, UsageError
from loopwright.report.export import MlflowLive, export_mlflow, generation_metrics
from loopwright.search import evolve_result, load_checkpoint, read_progress
from loopwright.workflow import Workflow, workflow_hash
from tests.report.conftest import EVOLVE_ARGS, CliRun, run_cli

mlflow = pytest.importorskip("mlflow")  # a dev dependency: installed in CI (make test)


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")  # MLflow 3 gates file stores
    return (tmp_path / "mlruns").as_uri()


def _history(client: Any, run_id: str, key: str) -> list[tuple[int, float]]:
    points = sorted(client.get_metric_history(run_id, key), key=lambda m: m.step)
    return [(m.step, round(m.value, 9)) for m in points]


def test_an_evolve_run_becomes_an_mlflow_run(sim_evolution: CliRun, store: str) -> None:
    done = export_mlflow(sim_evolution.run_dir, store, experiment="t", children=True)
    client = mlflow.MlflowClient(tracking_uri=store)
    run = client.get_run(done.run_id)
    checkpoint = load_checkpoint(sim_evolution.run_dir)

    assert run.info.status == "FINISHED" and run.info.run_name == "run"
    assert run.data.tags["loopwright.simulated"] == "true"
    assert run.data.params["seed_workflow"] == "builder-only"
    assert run.data.params["population"] == "3"
    assert run.data.params["budgets.max_generations"] == "2"
    for key in ("train_best", "train_mean", "spent_usd", "evaluations"):
        expected = [(s.generation, round(generation_metrics(s)[key], 9))
                    for s in checkpoint.summaries]  # fmt: skip
        assert _history(client, done.run_id, key) == expected
    assert done.metric_points == sum(len(generation_metrics(s)) for s in checkpoint.summaries)

    names = {a.path for a in client.list_artifacts(done.run_id)}
    assert {"winner.yaml", "result.json", "config.yaml", "report.html"} <= names
    local = Path(client.download_artifacts(done.run_id, "winner.yaml"))
    winner = Workflow.model_validate(yaml.safe_load(local.read_text(encoding="utf-8")))
    assert workflow_hash(winner) == evolve_result(checkpoint).winner.hash

    children = client.search_runs(
        [done.experiment_id], filter_string=f"tags.`mlflow.parentRunId` = '{done.run_id}'"
    )
    assert len(children) == done.children == len(checkpoint.individuals)
    assert {c.data.tags["loopwright.individual"] for c in children} == set(checkpoint.individuals)


def test_a_second_export_is_refused_or_replaces_the_first(
    sim_evolution: CliRun, store: str
) -> None:
    first = export_mlflow(sim_evolution.run_dir, store, experiment="t")
    with pytest.raises(UsageError, match="already in MLflow"):
        export_mlflow(sim_evolution.run_dir, store, experiment="t")
    second = export_mlflow(sim_evolution.run_dir, store, experiment="t", replace=True)
    client = mlflow.MlflowClient(tracking_uri=store)
    assert client.get_run(first.run_id).info.lifecycle_stage == "deleted"
    live = client.search_runs([second.experiment_id])
    assert [r.info.run_id for r in live] == [second.run_id]


def test_a_store_mlflow_refuses_is_a_config_error(
    sim_evolution: CliRun, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MLFLOW_ALLOW_FILE_STORE", raising=False)
    with pytest.raises(ConfigError, match="MLflow refused the tracking store") as caught:
        export_mlflow(sim_evolution.run_dir, (tmp_path / "mlruns").as_uri())
    assert "MLFLOW_ALLOW_FILE_STORE" in str(caught.value)


def test_the_live_listener_logs_what_the_export_logs(sim_evolution: CliRun, store: str) -> None:
    live = MlflowLive(store, sim_evolution.run_dir, experiment="live")
    for event in read_progress(sim_evolution.run_dir):  # the events the run emitted, in order
        live(event)
    done = live.finish()
    client = mlflow.MlflowClient(tracking_uri=store)
    checkpoint = load_checkpoint(sim_evolution.run_dir)
    expected = [(s.generation, round(s.train_best or 0.0, 9)) for s in checkpoint.summaries]
    assert _history(client, done.run_id, "train_best") == expected
    assert "winner.yaml" in {a.path for a in client.list_artifacts(done.run_id)}
    assert client.get_run(done.run_id).info.status == "FINISHED"


def test_evolve_logs_each_generation_live_with_mlflow(tmp_path: Path, store: str) -> None:
    run_dir = tmp_path / "run"
    code, out, err = run_cli(*EVOLVE_ARGS, "--run-dir", str(run_dir), "--no-report",
                             "--mlflow", store)  # fmt: skip
    assert code == 0, err
    assert "logged to MLflow run" in out
    client = mlflow.MlflowClient(tracking_uri=store)
    (run,) = client.search_runs([client.get_experiment_by_name("loopwright").experiment_id])
    checkpoint = load_checkpoint(run_dir)
    expected = [(s.generation, round(s.train_best or 0.0, 9)) for s in checkpoint.summaries]
    assert _history(client, run.info.run_id, "train_best") == expected
    assert run.data.params["seed_workflow"] == "builder-only"
    assert "winner.yaml" in {a.path for a in client.list_artifacts(run.info.run_id)}


def test_evolve_resume_says_where_it_picks_up(sim_evolution: CliRun, tmp_path: Path) -> None:
    run_dir = tmp_path / "copy"
    shutil.copytree(sim_evolution.run_dir, run_dir)
    code, _, err = run_cli("evolve", "--resume", "--run-dir", str(run_dir), "--no-report")
    assert code == 0, err
    assert f"{run_dir} has finished (max_generations): nothing left to run" in err
    (run_dir / "result.json").unlink()
    checkpoint = load_checkpoint(run_dir)
    unfinished = checkpoint.model_copy(update={"stop_reason": None, "winner_id": None})
    (run_dir / "checkpoint.json").write_text(unfinished.model_dump_json(), encoding="utf-8")
    assert resume_line(run_dir) == (
        f"resuming {run_dir} at generation {checkpoint.generation} ({checkpoint.phase}): "
        f"generations done: 0, 1; {checkpoint.spent.evaluations} evaluations kept, none is run "
        "again"
    )


def test_the_hand_designs_and_the_gain_over_the_best_are_metrics(
    tmp_path: Path, store: str
) -> None:
    run_dir = tmp_path / "compared"
    argv = [*EVOLVE_ARGS, "--run-dir", str(run_dir), "--no-report", "--compare-designs"]
    argv[argv.index("--generations") + 1] = "1"
    code, _, err = run_cli(*argv)
    assert code == 0, err
    done = export_mlflow(run_dir, store, experiment="designs")
    run = mlflow.MlflowClient(tracking_uri=store).get_run(done.run_id)
    result = evolve_result(load_checkpoint(run_dir))
    assert result.designs and result.best_design is not None and result.design_gain is not None
    for design in result.designs:
        assert run.data.metrics[f"design.{design.name}.holdout"] == design.holdout
    assert run.data.metrics["design_gain"] == result.design_gain.gain
    assert run.data.metrics["design_gain_low"] == result.design_gain.low
    assert run.data.tags["loopwright.best_design"] == result.best_design.name
