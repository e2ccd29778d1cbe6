"""Calibration bands on the pass rate: in-band kept and split, too easy/hard dropped."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import pytest

from loopwright.errors import UsageError
from loopwright.evaluation import EvalJob, EvalSettings, SerialExecutor
from loopwright.records import CycleRecord
from loopwright.search._calibrate import (
    CALIBRATION_RUNS_FILE,
    Calibration,
    _require_split,
    calibrate,
    load_calibration_runs,
    split_tasks,
)
from loopwright.search._config import CalibrationSettings
from loopwright.tasks import Task, load_benchmark
from loopwright.workflow import resolve_task_workflow
from tests.evaluation.test_executor import evaluator, one_builder, tasks


def stats_for(
    rates: dict[str, float | None],
) -> dict[str, tuple[int, int, float | None, float | None]]:
    return {
        t: (3, 3 if r is not None else 0, r, 0.8 if r is not None else None)
        for t, r in rates.items()
    }


def test_in_band_tasks_split_train_holdout_and_extremes_are_dropped() -> None:
    tasks = load_benchmark("mini").tasks[:6]
    ids = [t.id for t in tasks]
    rates = dict(zip(ids, [0.0, 1.0, 1 / 3, 2 / 3, 1 / 3, 0.5], strict=True))
    rows = split_tasks(tasks, stats_for(rates), CalibrationSettings())
    verdict = {r.task_id: r.verdict for r in rows}
    assert verdict[ids[0]] == "too_hard" and verdict[ids[1]] == "too_easy"
    in_band = [verdict[i] for i in ids[2:]]
    assert sorted(in_band) == ["holdout", "train", "train", "train"]


def test_an_empty_split_says_which_band_to_widen() -> None:
    tasks = load_benchmark("mini").tasks[:3]
    rates = {t.id: 1.0 for t in tasks}
    rows = split_tasks(tasks, stats_for(rates), CalibrationSettings())
    cal = Calibration(
        seed_workflow="builder-only", band=(0.3, 0.7), repetitions=3, rows=tuple(rows)
    )
    with pytest.raises(UsageError) as err:
        _require_split(cal)
    text = err.value.render()
    assert "0.30-0.70" in text and "raise the high end" in text and "=1.00" in text


# -- the calibration checkpoint -----------------------------------------------------------------


@dataclasses.dataclass
class StubEvaluator:
    """Calibration's view of an Evaluator: `evaluate_runs` makes a record per run from one real
    record, and raises KeyboardInterrupt (a kill) before its `stop_at`-th run."""

    settings: EvalSettings
    template: CycleRecord
    ran: list[tuple[str, int]]
    stop_at: int | None = None

    def evaluate_runs(
        self,
        workflow: object,
        runs: list[tuple[Task, int]],
        root: Path,
        *,
        run_id: str,
        on_record: Callable[[CycleRecord], None],
    ) -> None:
        for count, (task, rep) in enumerate(runs):
            if count == self.stop_at:
                raise KeyboardInterrupt
            self.ran.append((task.id, rep))
            score = (len(task.id) + rep) % 3 / 2
            on_record(self.template.model_copy(
                update={"task_id": task.id, "repetition": rep, "score_end": score}))  # fmt: skip


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> CycleRecord:
    tmp = tmp_path_factory.mktemp("calibration")
    (task,) = tasks(tmp, "calc")
    (done,) = SerialExecutor().run(
        evaluator(tmp / "marks"), [EvalJob(one_builder(), task, 0, tmp / "run", "r")]
    )
    return done.record


def test_a_calibration_stopped_part_way_continues_without_repeating_a_run(
    tmp_path: Path, template: CycleRecord
) -> None:
    bench = load_benchmark("mini").tasks[:3]
    settings = CalibrationSettings(band_low=0.0, band_high=1.0, repetitions=2)
    seed = resolve_task_workflow("builder-only")
    ran: list[tuple[str, int]] = []
    stopped = StubEvaluator(EvalSettings(), template, ran, stop_at=4)
    with pytest.raises(KeyboardInterrupt):
        calibrate(stopped, seed, bench, settings, tmp_path / "a")  # type: ignore[arg-type]
    assert len(load_calibration_runs(tmp_path / "a")) == 4
    resumed = calibrate(StubEvaluator(EvalSettings(), template, ran), seed, bench, settings,
                        tmp_path / "a")  # type: ignore[arg-type]  # fmt: skip
    assert sorted(ran) == sorted({(t.id, rep) for t in bench for rep in range(2)})
    whole = calibrate(StubEvaluator(EvalSettings(), template, []), seed, bench, settings,
                      tmp_path / "b")  # type: ignore[arg-type]  # fmt: skip
    assert resumed == whole
    assert (tmp_path / "a" / CALIBRATION_RUNS_FILE).read_text() == (
        tmp_path / "b" / CALIBRATION_RUNS_FILE
    ).read_text()
