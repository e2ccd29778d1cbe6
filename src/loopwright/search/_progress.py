"""What a run reports: per-generation summaries and the `progress.jsonl` event log."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from loopwright.search._calibrate import Calibration
from loopwright.search._overfit import OverfitSignal
from loopwright.store import EventLog

__all__ = [
    "PROGRESS_EVENTS",
    "PROGRESS_FILE",
    "CalibrationFinished",
    "CalibrationRunFinished",
    "ChildCreated",
    "DesignEvaluated",
    "EvaluationFinished",
    "GenerationFinished",
    "GenerationStarted",
    "GenerationSummary",
    "HyperparameterRecord",
    "Listener",
    "MutationRejected",
    "PopulationShort",
    "ProgressEvent",
    "ProgressLog",
    "ReflectionFinished",
    "ReflectionSkipped",
    "RunFinished",
    "RunResumed",
    "RunStarted",
    "Spent",
    "StageFinished",
    "read_progress",
]

PROGRESS_FILE = "progress.jsonl"
PROGRESS_VERSION = 1


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Spent(_Frozen):
    """What the evolution has used so far (calibration excluded). Wall time sums sessions.
    `usd` is every evaluation's cost plus the meta roles' calls (reflector, mutator, crossover:
    the run ledger's `meta:` roles); `meta_usd` is that meta part. A cost that is not known (a
    model without a price) is not in `usd`: `unpriced_evaluations` counts the evaluations with
    an unpriced call and `unpriced_meta_calls` the meta calls without a price, so `usd` is a
    lower bound whenever either is above 0 (`dollars()` says so; never "$0.00" for unknown).
    Both were added after schema 1's first release: absent from older files, read as 0."""

    evaluations: int = 0
    usd: float = 0.0
    wall_s: float = 0.0
    meta_usd: float = 0.0
    unpriced_evaluations: int = 0
    unpriced_meta_calls: int = 0

    @property
    def unpriced(self) -> int:
        """Parts of the spend whose cost is unknown (evaluations plus meta calls)."""
        return self.unpriced_evaluations + self.unpriced_meta_calls

    def dollars(self, usd: float | None = None) -> str:
        """`usd` (default: the whole spend) as text: "$1.23", or with unknown costs
        "$1.23 + 4 unpriced" ("unpriced (4)" when nothing known was priced): a cost that is
        not known is never shown as $0.00."""
        value = self.usd if usd is None else usd
        if not self.unpriced:
            return f"${value:.2f}"
        if value == 0:
            return f"unpriced ({self.unpriced})"
        return f"${value:.2f} + {self.unpriced} unpriced"


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
    parents: str = "tournament"
    stages: tuple[int, ...] = ()
    merge_rate: float = 0.0


class GenerationSummary(_Frozen):
    """One generation, logged once its population is evaluated.

    `train_*` are training fitness (mean partial credit); `holdout_best` is the best's holdout
    score, reported only and never used for selection. `diversity` counts distinct workflow
    hashes in the population; `stopped` counts its children that staged evaluation stopped
    (they are in the population but not among the fully evaluated). `evaluations` counts the
    evaluations this generation ran (training and holdout; the summaries' sum is
    `spent.evaluations`, which is cumulative, as is `spent`; before 2026-12-06 it counted the
    results held by the population, earlier generations' included).
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
    stopped: int = 0
    archive_coverage: float
    evaluations: int
    spent: Spent
    hyperparameters: HyperparameterRecord


class _Event(_Frozen):
    model_config = ConfigDict(frozen=True, extra="forbid")


class CalibrationRunFinished(_Event):
    """One calibration run of the seed finished (`done` of `total`; `repetition` is absent
    from logs written before it was recorded)."""

    event: Literal["calibration_run_finished"] = "calibration_run_finished"
    task_id: str
    repetition: int | None = None
    done: int
    total: int
    score: float | None


class CalibrationFinished(_Event):
    """Calibration chose the split (the table is also `calibration.json`)."""

    event: Literal["calibration_finished"] = "calibration_finished"
    calibration: Calibration


class RunStarted(_Event):
    """A fresh run: its configuration, the seed individual, and the agent model with whether it
    is simulated (every figure after this line comes from it)."""

    event: Literal["run_started"] = "run_started"
    config: dict[str, Any]
    seed_id: str
    model: str | None = None
    simulated: bool | None = None


class RunResumed(_Event):
    """A run continued from its checkpoint, in `generation`, with its agent `model`."""

    event: Literal["run_resumed"] = "run_resumed"
    generation: int
    model: str | None = None


class GenerationStarted(_Event):
    """A generation's evaluation begins; `population` lists its individual ids. `planned` is
    the most evaluations it can run from here (the training runs its population lacks, plus
    the holdout runs of its leader, and of the seed in generation 0); staged evaluation and
    budgets may run fewer. Absent from logs written before it was recorded."""

    event: Literal["generation_started"] = "generation_started"
    generation: int
    population: list[str]
    planned: int | None = None


class EvaluationFinished(_Event):
    """One (individual, task, repetition) run committed to the checkpoint; `spent` is the
    run's whole spend once it is (what a progress display shows as spent so far)."""

    event: Literal["evaluation_finished"] = "evaluation_finished"
    generation: int
    individual_id: str
    task_id: str
    repetition: int
    split: str
    score: float | None
    resolved: bool
    invalid: bool
    cost_usd: float | None
    status: str
    attempts: int
    cached: bool
    spent: Spent | None = None  # the run's spend with this evaluation (absent from older logs)


class GenerationFinished(GenerationSummary):
    """A generation's summary (the GenerationSummary fields at the top level)."""

    event: Literal["generation_finished"] = "generation_finished"

    def summary(self) -> GenerationSummary:
        return GenerationSummary.model_validate(self.model_dump(exclude={"event"}))


class ReflectionSkipped(_Event):
    event: Literal["reflection_skipped"] = "reflection_skipped"
    generation: int
    reason: str
    path: str | None = None


class ReflectionFinished(_Event):
    """A reflection report written (`path`, relative to the run) and what it holds."""

    event: Literal["reflection_finished"] = "reflection_finished"
    generation: int
    source: str
    path: str
    failure_patterns: int
    success_patterns: int
    suggestions: int
    dropped: int
    attempts: int
    unreadable_records: int


class MutationRejected(_Event):
    """A mutation that made no child (`stage` mutation) or a child the novelty filter
    turned away (`stage` novelty)."""

    event: Literal["mutation_rejected"] = "mutation_rejected"
    generation: int
    parent_id: str | None = None
    operator: str
    stage: str
    reason: str | None = None


class PopulationShort(_Event):
    """Generation 0 holds fewer individuals than it has slots: after the designs, `tries`
    mutations of the seed left it at `held` of `wanted`."""

    event: Literal["population_short"] = "population_short"
    generation: int
    held: int
    wanted: int
    tries: int
    reason: str


class ChildCreated(_Event):
    event: Literal["child_created"] = "child_created"
    generation: int
    individual_id: str
    parents: list[str]
    operator: str
    target: str | None = None
    guidance: dict[str, Any] | None = None
    reason: str | None = None


class StageFinished(_Event):
    """A child's verdict after a stage of staged evaluation (search/_staging.py): its mean on
    the stage's runs against its parent's on the same runs; `stopped` children go no further."""

    event: Literal["stage_finished"] = "stage_finished"
    generation: int
    individual_id: str
    parent_id: str
    stage: int
    tasks: list[str]
    child_mean: float | None
    parent_mean: float | None
    margin: float
    stopped: bool
    reason: str


class DesignEvaluated(_Event):
    """A hand design's holdout runs finished (`compare_designs`, search/_compare.py): its mean
    valid holdout score, the runs it took (`cached` of them from the fitness cache) and the
    designs done so far of `total`."""

    event: Literal["design_evaluated"] = "design_evaluated"
    name: str
    holdout: float | None
    runs: int
    cached: int
    done: int
    total: int


class RunFinished(_Event):
    event: Literal["run_finished"] = "run_finished"
    stop_reason: str
    winner_id: str
    generations: int


ProgressEvent = Annotated[
    CalibrationRunFinished | CalibrationFinished | RunStarted | RunResumed | GenerationStarted | EvaluationFinished | GenerationFinished
    | ReflectionSkipped | ReflectionFinished | MutationRejected | PopulationShort | ChildCreated
    | StageFinished | DesignEvaluated
    | RunFinished,
    Field(discriminator="event"),
]  # fmt: skip
"""What an evolve run reports as it goes: `progress.jsonl`, one per line, and the events an
`on_event` callback of `loopwright.evolve` receives."""

PROGRESS_EVENTS: TypeAdapter[ProgressEvent] = TypeAdapter(ProgressEvent)

Listener = Callable[[ProgressEvent], None]


class ProgressLog(EventLog[ProgressEvent]):
    """`<run>/progress.jsonl`: typed, versioned progress events (store.EventLog): a line cut
    off by a kill is ended before the next append and skipped on read. `listener`, when given,
    sees every event (the CLI's progress display, the run index)."""

    def __init__(self, run_dir: Path, listener: Listener | None = None) -> None:
        super().__init__(run_dir / PROGRESS_FILE, PROGRESS_EVENTS, PROGRESS_VERSION, listener)

    def emit(self, event: ProgressEvent) -> None:
        self.append(event)


def read_progress(run_dir: str | os.PathLike[str]) -> list[ProgressEvent]:
    """Every well-formed event of `<run>/progress.jsonl`, in order ([] when there is none)."""
    return ProgressLog(Path(run_dir)).read()
