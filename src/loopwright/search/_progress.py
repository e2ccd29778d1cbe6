"""What a run reports: per-generation summaries and the `progress.jsonl` event log."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from loopwright.search._overfit import OverfitSignal

__all__ = [
    "PROGRESS_FILE",
    "GenerationSummary",
    "HyperparameterRecord",
    "ProgressLog",
    "Spent",
    "read_progress",
]

PROGRESS_FILE = "progress.jsonl"


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Spent(_Frozen):
    """What the evolution has used so far (calibration excluded). Wall time sums sessions."""

    evaluations: int = 0
    usd: float = 0.0
    wall_s: float = 0.0


class HyperparameterRecord(_Frozen):
    """The search settings in force during a generation (v1 logged these too)."""

    population: int
    tournament_k: int
    elitism: int
    repetitions: int
    novelty_threshold: float
    mutation_max_tries: int
    operators: tuple[str, ...] | None
    strategy: str = "random"
    exploration: float | None = None


class GenerationSummary(_Frozen):
    """One generation, logged once its population is evaluated (fix 8).

    `train_*` are training fitness (mean partial credit); `holdout_best` is the best's holdout
    score, reported only and never used for selection. `diversity` counts distinct workflow
    hashes in the population. `spent` is cumulative.
    """

    generation: int
    best_id: str
    best_hash: str
    train_best: float | None
    train_mean: float | None
    holdout_best: float | None
    overfit: OverfitSignal
    diversity: int
    population_size: int
    archive_coverage: float
    evaluations: int
    spent: Spent
    hyperparameters: HyperparameterRecord


Listener = Callable[[str, dict[str, Any]], None]


class ProgressLog:
    """Appends one JSON object per line to `<run>/progress.jsonl`, each with an `event` field.

    A line is written with one `write` call and flushed, so a killed process leaves at most a
    truncated last line (`read_progress` skips it). `listener`, when given, sees every event
    (the CLI's progress display).
    """

    def __init__(self, run_dir: Path, listener: Listener | None = None) -> None:
        self.path = run_dir / PROGRESS_FILE
        self.listener = listener

    def emit(self, event: str, **fields: Any) -> None:
        line = json.dumps({"event": event, **fields}, sort_keys=False)
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(line + "\n")
        if self.listener is not None:
            self.listener(event, fields)


def read_progress(run_dir: Path) -> list[dict[str, Any]]:
    """Every well-formed event of `<run>/progress.jsonl`, in order ([] when there is none)."""
    path = run_dir / PROGRESS_FILE
    if not path.is_file():
        return []
    events = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            obj = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line cut off by a kill
        if isinstance(obj, dict) and "event" in obj:
            events.append(obj)
    return events
