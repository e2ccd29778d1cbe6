"""The library's defaults are the CLI's, and a run recorded under an older default keeps it."""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import pytest
import yaml

from loopwright.cli._evolve_options import _run_settings
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


def test_a_refused_config_names_the_field_a_python_caller_set_not_only_the_flag() -> None:
    """Issue 31: errors of the library spoke CLI ("pass --population 2 or more") to a caller
    who set `population=`; they name the field, and the flag beside it."""
    cases: list[tuple[dict[str, object], str]] = [
        ({"population": 1}, "population (--population) to 2 or more"),
        ({"population": 4, "elitism": 9}, "elitism (--elitism) between 1 and 3"),
        ({"overfit_gap": -1.0}, "overfit_gap (--overfit-gap)"),
        ({"repetitions": 10**6}, "repetitions (--reps) to"),
        ({"train_tasks": ("a",)}, "train_tasks and holdout_tasks (--train and --holdout)"),
    ]
    for fields, says in cases:
        with pytest.raises(ConfigError) as refused:
            EvolveConfig(seed_workflow="builder-only", bench="mini", **fields)  # type: ignore[arg-type]
        assert says in str(refused.value), (fields, str(refused.value))


def test_an_unknown_task_id_names_the_tasks_argument() -> None:
    with pytest.raises(UsageError) as refused:
        select_tasks(load_benchmark("mini"), ["nope"], None)
    assert "unknown task id(s) in tasks (--tasks): nope" in str(refused.value)
