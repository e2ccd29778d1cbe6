"""The one state of an evolution run, handed to every strategy.

`RunState` holds what the checkpoint holds (population, every individual, archive, spend, the
RNG) plus the run's handles (tasks, run directory, progress log, run index, modes). Strategies
read and write it through the attributes, never keep a copy: the engine (and a test) may swap
`checkpoint`, `individuals` or `rng` at any time, and the next call sees the new ones.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping, Sequence
from dataclasses import InitVar, dataclass, field
from pathlib import Path
from typing import Generic, Protocol, TypeVar, cast

from loopwright.errors import ConfigError
from loopwright.models import CostLedger
from loopwright.search._checkpoint import Checkpoint, write_checkpoint
from loopwright.search._components import Archive, Novelty
from loopwright.search._config import EvolveConfig
from loopwright.search._engine_records import generation_row, individual_row
from loopwright.search._individual import Individual
from loopwright.search._modes import EphemeralModeRegistry
from loopwright.search._objective import choose_winner
from loopwright.search._progress import (
    GenerationFinished,
    GenerationStarted,
    Listener,
    ProgressEvent,
    ProgressLog,
)
from loopwright.search._report import contenders, fully_evaluated, leader
from loopwright.search.strategies._spend import SpendMeter
from loopwright.store import RunIndex
from loopwright.tasks import Task
from loopwright.workflow import Workflow, workflow_hash

__all__ = ["RunState", "StateField", "individual_id", "split_of"]

T = TypeVar("T")


@dataclass(eq=False)
class RunState:
    """The run as it stands. `checkpoint` is the last state written (or about to be);
    `individuals` every individual so far (the checkpoint's copy is refreshed by `save`);
    `rng` the run RNG, which only selection and breeding draw from. `config` is the run's
    settings (the engine's; normally the checkpoint's). Not thread-safe."""

    config: EvolveConfig
    checkpoint: Checkpoint
    individuals: dict[str, Individual]
    rng: random.Random
    tasks: dict[str, Task]
    run_dir: Path
    archive: Archive
    novelty: Novelty
    spend: SpendMeter
    listener: InitVar[Listener | None] = None
    index: RunIndex = field(init=False)
    log: ProgressLog = field(init=False)
    modes: EphemeralModeRegistry = field(init=False)

    def __post_init__(self, listener: Listener | None) -> None:
        self.index = RunIndex.of_run(self.run_dir)  # runs.db: written as results arrive
        self.log = ProgressLog(self.run_dir, _tee(listener, self._to_index))
        self.modes = EphemeralModeRegistry(self.run_dir)

    # -- views --------------------------------------------------------------------------------

    def population(self) -> list[Individual]:
        return [self.individuals[i] for i in self.checkpoint.population]

    def complete(self, ind: Individual) -> bool:
        """`ind` holds every training run (each task, each repetition)."""
        return fully_evaluated(ind, self.checkpoint.train_tasks, self.config.repetitions)

    def contenders(self) -> list[Individual]:
        """Training views of the fully evaluated individuals of the population, best first."""
        return contenders(
            self.population(),
            self.checkpoint.train_tasks,
            self.config.repetitions,
            self.config.selection_tolerance,
        )

    def leader(self, *, by_cost: bool = True) -> Individual:
        """The best fully evaluated individual of the population on training (the seed when
        none is): by the run's selection, a fitness within `cost_tolerance` of the best a tie
        broken by cost under `objective: cost-aware`; with `by_cost=False` by fitness alone
        (the fittest, which differs from the leader only under cost-aware)."""
        return leader(
            self.population(),
            self.individuals[self.checkpoint.seed_id],
            self.checkpoint.train_tasks,
            self.config.repetitions,
            self.config.selection_tolerance if by_cost else None,
        )

    def winner(self) -> Individual:
        """The run's winner under its objective: the `leader`, or under `objective: cost-aware`
        the point `choose_winner` takes from the holdout/cost front."""
        current = self.checkpoint.model_copy(update={"individuals": dict(self.individuals)})
        return self.individuals[choose_winner(current, self.leader().id)]

    def train_runs(self) -> int:
        """Training runs committed so far, every individual ever made (the checkpoint keeps
        them all, so this is the same after a resume)."""
        return sum(r.split == "train" for i in self.individuals.values() for r in i.results)

    # -- writes -------------------------------------------------------------------------------

    def update(self, **fields: object) -> None:
        """Replace fields of the checkpoint in memory (written by the next `save`)."""
        self.checkpoint = self.checkpoint.model_copy(update=fields)

    def count_meta(self, ledger: CostLedger | None) -> None:
        """Take the meta roles' spend from the run ledger (every `meta:` call so far, also
        those made after the last checkpoint) into `spent`."""
        self.update(spent=self.spend.count_meta(ledger, self.checkpoint.spent))

    def save(self) -> None:
        """Write the checkpoint with the individuals, the archive and the spend as they are."""
        self.update(
            individuals=dict(self.individuals),
            archive_json=self.archive.to_json(),
            spent=self.spend.spent(self.checkpoint.spent),
        )
        write_checkpoint(self.run_dir, self.checkpoint)

    def _to_index(self, event: ProgressEvent) -> None:
        """Progress events that the run index mirrors: the population evaluated in each
        generation, and each generation's summary."""
        run_id = self.run_dir.name
        if isinstance(event, GenerationStarted):
            self.index.add_individuals(individual_row(run_id, i) for i in self.population())
        elif isinstance(event, GenerationFinished) and self.checkpoint.summaries:
            self.index.add_generation(generation_row(run_id, self.checkpoint.summaries[-1]))


def _tee(first: Listener | None, second: Listener) -> Listener:
    def both(event: ProgressEvent) -> None:
        second(event)
        if first is not None:
            first(event)

    return both


def individual_id(base_seed: int, generation: int, slot: int, workflow: Workflow) -> str:
    """Deterministic: the same run makes the same ids, whatever was interrupted."""
    text = f"{base_seed}:{generation}:{slot}:{workflow_hash(workflow)}"
    return hashlib.sha256(text.encode()).hexdigest()[:12]


class StateField(Generic[T]):
    """An attribute of the engine that reads and writes its `RunState`'s attribute `name`
    (`engine.state` is `engine.now.checkpoint`), so nothing holds a stale copy."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, owner: _HasState, cls: type | None = None) -> T:
        return cast(T, getattr(owner.now, self.name))

    def __set__(self, owner: _HasState, value: T) -> None:
        setattr(owner.now, self.name, value)


class _HasState(Protocol):
    now: RunState


def split_of(
    config: EvolveConfig,
    split: tuple[Sequence[str], Sequence[str]] | None,
    tasks: Mapping[str, Task],
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The run's (training, holdout) ids from exactly one source, each a task of `tasks`."""
    if (split is None) == config.calibrated:
        raise ConfigError(
            "the task split must come from one place",
            got="both split= and the config's train_tasks/holdout_tasks"
            if split is not None
            else "neither split= nor the config's train_tasks/holdout_tasks",
            fix="pass split=(train, holdout) from calibration, or set train_tasks and "
            "holdout_tasks in the config, not both",
        )
    train, holdout = split if split is not None else (config.train_tasks, config.holdout_tasks)
    ids = (tuple(train or ()), tuple(holdout or ()))
    unknown = [i for i in (*ids[0], *ids[1]) if i not in tasks]
    if unknown:
        raise ConfigError(
            f"unknown task id(s) in the split: {', '.join(unknown)}",
            got=f"bench {config.bench}",
            fix=f"choose from: {', '.join(sorted(tasks))}",
        )
    return ids
