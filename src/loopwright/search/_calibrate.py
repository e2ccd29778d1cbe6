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

from pydantic import BaseModel, ConfigDict, ValidationError

from loopwright._caller import Caller
from loopwright.errors import ConfigError, UsageError
from loopwright.evaluation import Evaluator
from loopwright.records import CycleRecord
from loopwright.search._config import CalibrationSettings
from loopwright.search._split_size import require_sizes, split_warnings
from loopwright.store import RunDir, refuse_disk_full
from loopwright.tasks import Task
from loopwright.workflow import Workflow

__all__ = [
    "CALIBRATION_FILE",
    "CALIBRATION_RUNS_FILE",
    "Calibration",
    "CalibrationRow",
    "CalibrationRun",
    "CalibrationRuns",
    "calibrate",
    "load_calibration_runs",
    "split_tasks",
]

CALIBRATION_FILE = "calibration.json"
CALIBRATION_RUNS_FILE = "calibration_runs.json"
CALIBRATION_RUNS_VERSION = 1

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


class CalibrationRun(BaseModel):
    """One finished calibration run, as the calibration checkpoint keeps it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    task_id: str
    repetition: int
    scored: bool
    resolved: bool
    score: float

    @classmethod
    def of(cls, record: CycleRecord) -> CalibrationRun:
        return cls(
            task_id=record.task_id,
            repetition=record.repetition,
            scored=record.scored,
            resolved=record.resolved,
            score=record.score_end,
        )


class CalibrationRuns(BaseModel):
    """`<run>/calibration_runs.json`: the calibration runs finished so far, in (task,
    repetition) order, rewritten atomically after each one (docs/runs.md)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: Literal[1] = 1
    runs: tuple[CalibrationRun, ...]


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


def _starter(run_dir: Path) -> Caller | None:
    """Who started the run at `run_dir` (its header's caller): what its files say is in their
    words, whoever resumes it; None (the current caller) where there is no readable header."""
    try:
        meta = RunDir(run_dir).meta()
    except ConfigError:
        return None
    return meta.caller if meta is not None else None


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

    Checkpointed like a generation: each finished run is committed to
    `<run>/calibration_runs.json` as it arrives, and runs found there are not run again, so a
    calibration killed at any moment and called again ends with the same split, no run lost
    or repeated (`on_record` sees the new runs only). Raises UsageError (showing the observed
    pass rates and which band to widen) when the band leaves no training or no holdout task,
    or fewer than `settings.min_train`/`min_holdout` (after writing calibration.json).
    Deterministic for a given evaluator seed.
    """
    reps = settings.repetitions
    calib = dataclasses.replace(
        evaluator, settings=evaluator.settings.model_copy(update={"repetitions": reps})
    )
    wanted = [(task, rep) for task in tasks for rep in range(reps)]
    done = {(r.task_id, r.repetition): r for r in load_calibration_runs(run_dir)}

    def commit(record: CycleRecord) -> None:
        refuse_disk_full(record.run_error, run_dir / "calibration" / record.task_id)
        done[(record.task_id, record.repetition)] = CalibrationRun.of(record)
        kept = [done[t.id, rep] for t, rep in wanted if (t.id, rep) in done]
        RunDir(run_dir).write_json(CALIBRATION_RUNS_FILE, CalibrationRuns(runs=tuple(kept)))
        if on_record is not None:
            on_record(record)

    todo = [(task, rep) for task, rep in wanted if (task.id, rep) not in done]
    if todo:
        root = run_dir / "calibration"
        calib.evaluate_runs(seed, todo, root, run_id=run_dir.name, on_record=commit)
    stats = {t.id: _rates([done[t.id, rep] for rep in range(reps)]) for t in tasks}
    rows = split_tasks(tasks, stats, settings)
    holdout_rates = [r.pass_rate or 0.0 for r in rows if r.verdict == "holdout"]
    n_train = sum(r.verdict == "train" for r in rows)
    result = Calibration(
        seed_workflow=seed.name,
        band=(settings.band_low, settings.band_high),
        repetitions=reps,
        rows=tuple(rows),
        warnings=split_warnings(n_train, holdout_rates, holdout_repetitions, _starter(run_dir)),
    )
    RunDir(run_dir).write(CALIBRATION_FILE, result.model_dump_json(indent=2))
    _require_split(result)
    require_sizes(
        n_train, len(holdout_rates), settings.min_train, settings.min_holdout,
        " ".join(result.warnings),
    )  # fmt: skip
    return result


def load_calibration_runs(run_dir: Path) -> tuple[CalibrationRun, ...]:
    """The calibration runs committed in `<run>/calibration_runs.json` (none when absent).
    ConfigError when the file is of another schema version or does not parse."""
    path = run_dir / CALIBRATION_RUNS_FILE
    if not path.is_file():
        return ()
    try:
        state = CalibrationRuns.model_validate_json(path.read_bytes())
    except ValidationError as exc:
        raise ConfigError(
            f"{path} is not a calibration checkpoint this loopwright reads",
            got=str(exc.errors()[0])[:300],
            fix=f"it reads schema_version {CALIBRATION_RUNS_VERSION}; remove the file to run "
            "the calibration again",
        ) from None
    return state.runs


def _rates(runs: Sequence[CalibrationRun]) -> tuple[int, int, float | None, float | None]:
    valid = [r for r in runs if r.scored]
    if not valid:
        return len(runs), 0, None, None
    passed = fmean(1.0 if r.resolved else 0.0 for r in valid)
    return len(runs), len(valid), passed, fmean(r.score for r in valid)


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
