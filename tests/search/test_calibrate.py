"""Calibration bands on the pass rate: in-band kept and split, too easy/hard dropped."""

from __future__ import annotations

import pytest

from loopwright.errors import UsageError
from loopwright.search._calibrate import Calibration, _require_split, split_tasks
from loopwright.search._config import CalibrationSettings
from loopwright.tasks import load_benchmark


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
