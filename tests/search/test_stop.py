"""Stopping an evolve run from Python (issue 31, item 1): `should_stop` is asked between
evaluations; a stopped call returns the result so far, leaves no held lock and a run that
`resume` finishes exactly as an uninterrupted one."""

from __future__ import annotations

from pathlib import Path

import pytest

import loopwright
from loopwright.evaluation import ExecutorSettings
from loopwright.search import (
    Budgets,
    CalibrationSettings,
    EvaluationFinished,
    EvolveConfig,
    ProgressEvent,
    RunStopped,
    StopHandle,
    load_checkpoint,
)
from loopwright.store import lock_holder

SERIAL = loopwright.Execution(settings=ExecutorSettings(kind="serial"))


def config(**over: object) -> EvolveConfig:
    data: dict[str, object] = {
        "seed_workflow": "builder-only", "bench": "mini", "model": "sim", "seed": 0,
        "sandbox": "local", "population": 3, "elitism": 1,
        "train_tasks": ("l1-rle-decode", "l1-slugify"), "holdout_tasks": ("l1-semver-compare",),
        "budgets": Budgets(max_generations=2),
    }  # fmt: skip
    data.update(over)
    return EvolveConfig.model_validate(data)


def stop_after(handle: StopHandle, n: int) -> loopwright.search.Listener:
    seen = [0]

    def listen(event: ProgressEvent) -> None:
        if isinstance(event, EvaluationFinished):
            seen[0] += 1
            if seen[0] == n:
                handle.stop()

    return listen


def test_a_stopped_evolve_returns_its_state_and_resumes_to_the_uninterrupted_result(
    tmp_path: Path,
) -> None:
    whole = loopwright.evolve(config(), tmp_path / "whole", executor=SERIAL)
    assert not whole.stopped and whole.stop_reason == "max_generations"

    handle = StopHandle()
    run = tmp_path / "stopped"
    part = loopwright.evolve(
        config(), run, executor=SERIAL, on_event=stop_after(handle, 4), should_stop=handle
    )
    assert part.stopped and part.stop_reason is None
    assert part.spent.evaluations == 4  # stopped right after the evaluation that asked
    assert lock_holder(run / ".evolve.lock") is None  # released: resume may take it at once
    assert not (run / "result.json").exists()  # a result.json is a finished run's
    assert load_checkpoint(run).stop_reason is None

    handle.reset()
    done = loopwright.resume(run, executor=SERIAL, should_stop=handle)
    assert not done.stopped and done.stop_reason == whole.stop_reason
    assert done.winner.id == whole.winner.id
    assert done.spent.evaluations == whole.spent.evaluations
    assert [s.train_best for s in done.summaries] == [s.train_best for s in whole.summaries]


def test_a_plain_callable_stops_a_resume_too(tmp_path: Path) -> None:
    run = tmp_path / "run"
    handle = StopHandle()
    loopwright.evolve(config(), run, executor=SERIAL, on_event=stop_after(handle, 2),
                      should_stop=handle)  # fmt: skip
    calls = [0]

    def after_three() -> bool:
        calls[0] += 1
        return calls[0] >= 3

    again = loopwright.resume(run, executor=SERIAL, should_stop=after_three)
    assert again.stopped and again.spent.evaluations == 2 + 3


def test_a_stop_during_calibration_raises_run_stopped_and_resume_continues_it(
    tmp_path: Path,
) -> None:
    run = tmp_path / "calib"
    calibrated = config(
        train_tasks=None, holdout_tasks=None, budgets=Budgets(max_generations=1),
        calibration=CalibrationSettings(
            repetitions=1, band_low=0.0, band_high=1.0, holdout_every=2,
            tasks=("l1-rle-decode", "l1-slugify", "l1-semver-compare", "l1-csv-row"),
        ),
    )  # fmt: skip
    with pytest.raises(RunStopped, match="during calibration") as stopped:
        loopwright.evolve(calibrated, run, executor=SERIAL, should_stop=lambda: True)
    assert stopped.value.run_dir == run
    assert (run / "calibration_runs.json").is_file() and not (run / "checkpoint.json").exists()
    assert lock_holder(run / ".evolve.lock") is None
    finished = loopwright.resume(run, executor=SERIAL)
    assert finished.stop_reason is not None and not finished.stopped
