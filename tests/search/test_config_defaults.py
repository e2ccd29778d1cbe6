"""The library's defaults are the CLI's, and a run recorded under an older default keeps it."""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path

import pytest
import yaml

from loopwright._caller import called_from_cli
from loopwright.cli import main
from loopwright.cli._evolve_options import _run_settings, new_config
from loopwright.errors import ConfigError, UsageError
from loopwright.evaluation import select_tasks
from loopwright.search import EvolveConfig, load_checkpoint
from loopwright.search._api import _calibrating
from loopwright.search._checkpoint import CHECKPOINT_SCHEMA_VERSION
from loopwright.tasks import load_benchmark


def test_a_new_config_uses_the_guided_strategy_as_the_cli_does() -> None:
    config = EvolveConfig(seed_workflow="builder-only", bench="mini")
    cli_default = inspect.signature(_run_settings).parameters["strategy"].default
    assert config.strategy == "guided" == cli_default
    assert config.reflects  # guided reads the reflection, so it is made


def test_a_calibrating_run_recorded_without_a_strategy_resumes_as_random(tmp_path: Path) -> None:
    # config.yaml of an evolve run from before `strategy` existed: unversioned, the fields at
    # the top; it stopped during calibration (no checkpoint), so resume reads this file.
    old = {"kind": "evolve", "loopwright_version": "0.1.0", "created_at": "2026-10-01T00:00:00",
           "seed_workflow": "builder-only", "bench": "mini", "model": "sim", "seed": 3}  # fmt: skip
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(old), encoding="utf-8")
    config = _calibrating(tmp_path)
    assert config.strategy == "random" and not config.reflects
    assert config.seed == 3


def test_a_recorded_strategy_is_kept_whatever_the_default(tmp_path: Path) -> None:
    for strategy in ("random", "guided"):
        config = EvolveConfig(seed_workflow="builder-only", bench="mini", strategy=strategy)
        data = {"schema_version": CHECKPOINT_SCHEMA_VERSION,
                "config": config.model_dump(mode="json"), "train_tasks": ["a"],
                "holdout_tasks": ["b"], "generation": 0, "population": [], "individuals": {},
                "seed_id": "x", "rng_state": [3, [0], None], "archive_json": None,
                "spent": {}, "summaries": []}  # fmt: skip
        (tmp_path / "checkpoint.json").write_text(json.dumps(data), encoding="utf-8")
        assert load_checkpoint(tmp_path).config.strategy == strategy


# (fields, the setting a Python caller gave, what it is told, what the command line is told)
REFUSED: list[tuple[dict[str, object], str, str, str]] = [
    ({"population": 1}, "population", "set population to 2 or more",
     "set --population to 2 or more"),
    ({"population": 4, "elitism": 9}, "elitism",
     "set elitism between 1 and 3, or a larger population",
     "set --elitism between 1 and 3, or a larger --population"),
    ({"overfit_gap": -1.0}, "overfit_gap", "set overfit_gap to", "set --overfit-gap to"),
    ({"repetitions": 10**6}, "repetitions", "set repetitions to 100", "set --reps to 100"),
    ({"holdout_repetitions": 0}, "holdout_repetitions", "set holdout_repetitions to a positive",
     "set --holdout-reps to a positive"),
    ({"train_tasks": ("a",)}, "train_tasks", "give both train_tasks and holdout_tasks",
     "give both --train and --holdout"),
    ({"budgets": {"max_usd": float("nan")}}, "budgets.max_usd",
     "set budgets.max_usd to a positive number", "set --max-usd to a positive number"),
    ({"budgets": {"max_generations": 5000}}, "budgets.max_generations",
     "set budgets.max_generations to 1000", "set --generations to 1000"),
    ({"calibration": {"band_low": 0.9, "band_high": 0.1}}, "calibration.band_low",
     "set calibration.band_low, calibration.band_high", "set --band LOW,HIGH"),
    ({"exploration": 2.0}, "exploration", "set exploration to", "set --exploration to"),
    ({"stage_margin": 2.0}, "stage_margin", "set stage_margin to", "set --stage-margin to"),
    ({"merge_rate": 0.2}, "merge_rate", "set parents='pareto' with merge_rate",
     "pass --parents pareto with --merge"),
    ({"cost_tolerance": 1.5}, "cost_tolerance", "set cost_tolerance to e.g. 0.03",
     "set --cost-tolerance to e.g. 0.03"),
]  # fmt: skip


@pytest.mark.parametrize(("fields", "name", "python", "cli"), REFUSED)
def test_a_refused_config_names_the_setting_in_the_callers_words_only(
    fields: dict[str, object], name: str, python: str, cli: str
) -> None:
    """Issue 31: errors of the library spoke CLI to a caller who set `population=`, then named
    both ("population (--population)"); now the Python caller is told the field and the command
    line the flag, never the other's word."""
    with pytest.raises(ConfigError) as from_python:
        EvolveConfig(seed_workflow="builder-only", bench="mini", **fields)  # type: ignore[arg-type]
    with called_from_cli(), pytest.raises(ConfigError) as from_cli:
        EvolveConfig(seed_workflow="builder-only", bench="mini", **fields)  # type: ignore[arg-type]
    told_python, told_cli = from_python.value.fix or "", from_cli.value.fix or ""
    assert python in told_python and "--" not in told_python, told_python
    assert cli in told_cli and not re.search(rf"(?<![-\w]){re.escape(name)}", told_cli), told_cli


def test_the_command_line_is_told_only_the_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = tmp_path / "r"
    code = main(["evolve", "--seed-workflow", "builder-only", "--bench", "mini", "--population",
                 "2", "--elitism", "10", "--run-dir", str(run_dir)])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and not run_dir.exists()
    assert "set --elitism to 1, or a larger --population" in err
    assert "elitism (" not in err and "population (" not in err


def test_an_unknown_task_id_names_the_tasks_argument_or_the_flag() -> None:
    with pytest.raises(UsageError) as refused:
        select_tasks(load_benchmark("mini"), ["nope"], None)
    assert "unknown task id(s) in tasks: nope" in str(refused.value)
    assert "--tasks" not in str(refused.value)
    with called_from_cli(), pytest.raises(UsageError) as at_cli:
        select_tasks(load_benchmark("mini"), ["nope"], None)
    assert "unknown task id(s) in --tasks: nope" in str(at_cli.value)


def test_the_cost_tolerance_flag_sets_the_field_with_the_same_default() -> None:
    options = {name: p.default for name, p in inspect.signature(_run_settings).parameters.items()}
    assert (
        options["cost_tolerance"]
        == EvolveConfig(seed_workflow="builder-only", bench="mini").cost_tolerance
    )
    options |= {"seed_workflow": "builder-only", "bench": "mini", "objective": "cost-aware",
                "cost_tolerance": 0.07}  # fmt: skip
    config = new_config(options)
    assert (config.objective, config.cost_tolerance) == ("cost-aware", 0.07)
    assert config.selection_tolerance == 0.07
