"""Calibration: run the bare seed, keep tasks it passes sometimes, split train/holdout.

The band is on the RESOLVED rate (the pass rate of the post-mortem: 0.3-0.7), not on partial
credit: with the sim model a bare builder keeps ~0.8 mean partial credit on the mini tasks
(flawed attempts still pass many tests), so a partial-credit band would leave nothing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from pathlib import Path
from statistics import fmean
from typing import Literal

from pydantic import BaseModel, ConfigDict

from loopwright._fs import atomic_write
from loopwright.errors import UsageError
from loopwright.evaluation import Evaluator
from loopwright.records import CycleRecord
from loopwright.search._config import CalibrationSettings
from loopwright.search._split_size import require_sizes, split_warnings
from loopwright.tasks import Task
from loopwright.workflow import Workflow

__all__ = ["CALIBRATION_FILE", "Calibration", "CalibrationRow", "calibrate", "split_tasks"]

CALIBRATION_FILE = "calibration.json"

Verdict = Literal["train", "holdout", "too_easy", "too_hard", "unused"]


class CalibrationRow(BaseModel):
    """One task's calibration: the seed's pass rate and mean partial credit, and its fate."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    task_id: str
    level: int
    runs: int
    valid_runs: int
    pass_rate: float | None
    mean_score: float | None
    verdict: Verdict


class Calibration(BaseModel):
    """The split chosen by calibration, with the table it came from, and the warning when it
    kept fewer tasks than advised (fewer than 10 training or 3 holdout: `_split_size`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    seed_workflow: str
    band: tuple[float, float]
    repetitions: int
    rows: tuple[CalibrationRow, ...]
    warnings: tuple[str, ...] = ()

    @property
    def train(self) -> tuple[str, ...]:
        return tuple(r.task_id for r in self.rows if r.verdict == "train")

    @property
    def holdout(self) -> tuple[str, ...]:
        return tuple(r.task_id for r in self.rows if r.verdict == "holdout")


def calibrate(
    evaluator: Evaluator,
    seed: Workflow,
    tasks: Sequence[Task],
    settings: CalibrationSettings,
    run_dir: Path,
    *,
    on_record: Callable[[CycleRecord], None] | None = None,
    holdout_repetitions: int = 3,
) -> Calibration:
    """Run `seed` on `tasks` x `settings.repetitions` under `<run>/calibration/`, split the tasks
    by pass rate, write `<run>/calibration.json` and return the split. A split smaller than
    advised carries a warning (with the interval width to expect over `holdout_repetitions`).

    Raises UsageError (showing the observed pass rates and which band to widen) when the band
    leaves no training or no holdout task, or fewer than `settings.min_train`/`min_holdout`
    (after writing calibration.json). Deterministic for a given evaluator seed.
    """
    reps = settings.repetitions
    calib = dataclasses.replace(
        evaluator, settings=evaluator.settings.model_copy(update={"repetitions": reps})
    )
    evaluation = calib.evaluate(
        seed, tasks, run_dir / "calibration", run_id=run_dir.name, on_record=on_record
    )
    by_task = evaluation.by_task()
    stats = {t.id: _rates(by_task.get(t.id, [])) for t in tasks}
    rows = split_tasks(tasks, stats, settings)
    holdout_rates = [r.pass_rate or 0.0 for r in rows if r.verdict == "holdout"]
    n_train = sum(r.verdict == "train" for r in rows)
    result = Calibration(
        seed_workflow=seed.name,
        band=(settings.band_low, settings.band_high),
        repetitions=reps,
        rows=tuple(rows),
        warnings=split_warnings(n_train, holdout_rates, holdout_repetitions),
    )
    atomic_write(run_dir / CALIBRATION_FILE, result.model_dump_json(indent=2))
    _require_split(result)
    require_sizes(
        n_train, len(holdout_rates), settings.min_train, settings.min_holdout,
        " ".join(result.warnings),
    )  # fmt: skip
    return result


def _rates(records: Sequence[CycleRecord]) -> tuple[int, int, float | None, float | None]:
    valid = [r for r in records if r.scored]
    if not valid:
        return len(records), 0, None, None
    passed = fmean(1.0 if r.resolved else 0.0 for r in valid)
    return len(records), len(valid), passed, fmean(r.score_end for r in valid)


def split_tasks(
    tasks: Sequence[Task],
    stats: dict[str, tuple[int, int, float | None, float | None]],
    settings: CalibrationSettings,
) -> list[CalibrationRow]:
    """Assign each task a verdict from its (runs, valid, pass rate, mean score). Pure.

    In-band tasks, sorted by (pass rate, id), go to holdout every `holdout_every`-th (the
    2nd, 5th, 8th... so both sides span the band's difficulty) and to training otherwise,
    up to `max_train` training tasks (the rest are `unused`).
    """
    low, high = settings.band_low, settings.band_high
    verdicts: dict[str, Verdict] = {}
    in_band = []
    for task in tasks:
        rate = stats[task.id][2]
        if rate is None or rate < low:
            verdicts[task.id] = "too_hard"
        elif rate > high:
            verdicts[task.id] = "too_easy"
        else:
            in_band.append((rate, task.id))
    n_train = 0
    for index, (_, task_id) in enumerate(sorted(in_band)):
        if index % settings.holdout_every == 1:
            verdicts[task_id] = "holdout"
        elif settings.max_train is None or n_train < settings.max_train:
            verdicts[task_id] = "train"
            n_train += 1
        else:
            verdicts[task_id] = "unused"
    return [
        CalibrationRow(
            task_id=t.id,
            level=t.level,
            runs=stats[t.id][0],
            valid_runs=stats[t.id][1],
            pass_rate=stats[t.id][2],
            mean_score=stats[t.id][3],
            verdict=verdicts[t.id],
        )
        for t in tasks
    ]


def _require_split(result: Calibration) -> None:
    if result.train and result.holdout:
        return
    low, high = result.band
    observed = ", ".join(
        f"{r.task_id}={'-' if r.pass_rate is None else format(r.pass_rate, '.2f')}"
        for r in result.rows
    )
    rates = [r.pass_rate for r in result.rows if r.pass_rate is not None]
    side = "lower the low end" if rates and fmean(rates) < low else "raise the high end"
    missing = "training" if not result.train else "holdout"
    raise UsageError(
        f"calibration left no {missing} task: too few tasks have a pass rate in "
        f"{low:.2f}-{high:.2f} (two in-band tasks at least: one training, one holdout)",
        got=f"seed pass rates: {observed}",
        fix=f"widen the band ({side}, e.g. --band 0.1,0.9), add calibration tasks or "
        "repetitions, or pass --train/--holdout task ids",
    )
