"""The run's state on disk: `checkpoint.json` (atomic), its schema check, and what an evolve
run directory is to the shared run lifecycle (`EVOLVE_RUN`: header, lock, resume, finish)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from loopwright._caller import spoken
from loopwright._fs import atomic_write
from loopwright._version import __version__
from loopwright.errors import ConfigError
from loopwright.search._calibrate import CALIBRATION_FILE, Calibration
from loopwright.search._config import EvolveConfig, recorded_config
from loopwright.search._hand_designs import DesignHoldout
from loopwright.search._individual import Individual
from loopwright.search._progress import GenerationSummary, Spent
from loopwright.search._staging import StageVerdict
from loopwright.store import META_FILE, RunDir, RunLifecycle, RunSpec, read_json_mapping

__all__ = [
    "CHECKPOINT_FILE",
    "CHECKPOINT_SCHEMA_VERSION",
    "EVOLVE_RUN",
    "LOCK_FILE",
    "Checkpoint",
    "evolve_run",
    "load_checkpoint",
    "rng_from_state",
    "rng_state",
    "write_checkpoint",
]

CHECKPOINT_FILE = "checkpoint.json"
LOCK_FILE = ".evolve.lock"
CHECKPOINT_SCHEMA_VERSION = 1


def start_hint() -> str:
    """How an evolve run is started, in the caller's words (the call, or the command)."""
    return spoken("loopwright.evolve(config, DIR)", "loopwright evolve --run-dir DIR")


EVOLVE_RUN = RunSpec(
    kind="evolve",
    header=META_FILE,
    lock=LOCK_FILE,
    flag="--run-dir",
    noun="evolve run",
    resume="loopwright evolve --resume --run-dir {path}",
    param="run_dir",
    api_resume="loopwright.resume({path})",
    finished="result.json",
    busy_fix="wait for it to finish, or stop that process and pass --resume",
    api_busy_fix="wait for it to finish, or stop that process and call loopwright.resume(run_dir)",
)
"""An evolve run directory to the shared run lifecycle (store.RunLifecycle)."""


def evolve_run(run_dir: str | Path) -> RunLifecycle:
    """The lifecycle of the evolve run directory `run_dir`: `.lock()` is its run lock (a
    second process on it is refused), `.state()` new, partial or finished."""
    return EVOLVE_RUN.at(run_dir)


class Checkpoint(BaseModel):
    """Everything needed to continue a run exactly where it stopped.

    `rng_state` is the run RNG's state at the start of `generation` (evaluation draws nothing
    from it, so it stays valid until the generation's selection). `individuals` holds every
    individual ever made (by id, with all results); `population` the ids of the current one.
    `seed_id` is the seed workflow's individual (the baseline of the holdout gain).
    `reflected` lists the generations whose `reflection_gen{N}.json` is written (optional:
    checkpoints from before reflection load with none). `stage_verdicts` holds every verdict
    of staged evaluation so far, in the order they were made (a child stopped at a stage has
    `stopped` true; optional: checkpoints from before staging load with none).
    `hand_designs` holds the built-in designs' holdout runs of `compare_designs` (search/
    _compare.py; optional: empty when the comparison is off or predates the field).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: int = CHECKPOINT_SCHEMA_VERSION
    loopwright_version: str = __version__
    config: EvolveConfig
    train_tasks: tuple[str, ...]
    holdout_tasks: tuple[str, ...]
    generation: int
    population: tuple[str, ...]
    individuals: dict[str, Individual]
    seed_id: str
    rng_state: list[Any]
    archive_json: str | None
    spent: Spent
    summaries: tuple[GenerationSummary, ...]
    phase: Literal["evaluate", "breed"] = "evaluate"
    stop_reason: str | None = None
    winner_id: str | None = None
    reflected: tuple[int, ...] = ()
    stage_verdicts: tuple[StageVerdict, ...] = ()
    hand_designs: tuple[DesignHoldout, ...] = ()

    @field_validator("config", mode="before")
    @classmethod
    def _as_recorded(cls, value: Any) -> Any:
        return recorded_config(value)  # an old run keeps the strategy it ran with

    def stopped_ids(self) -> frozenset[str]:
        """The individuals a stage stopped (they never get the full training evaluation)."""
        return frozenset(v.individual_id for v in self.stage_verdicts if v.stopped)


def rng_state(rng: random.Random) -> list[Any]:
    """`rng.getstate()` as JSON-ready lists."""
    version, internal, gauss = rng.getstate()
    return [version, list(internal), gauss]


def rng_from_state(state: list[Any]) -> random.Random:
    """A Random at exactly the state `rng_state` recorded."""
    rng = random.Random()
    rng.setstate((state[0], tuple(state[1]), state[2]))
    return rng


def write_checkpoint(run_dir: Path, checkpoint: Checkpoint) -> Path:
    """Write `<run>/checkpoint.json` atomically (`atomic_write`: temp file, fsync, rename)."""
    path = run_dir / CHECKPOINT_FILE
    atomic_write(path, checkpoint.model_dump_json())  # readers see the old or the new file
    return path


def load_checkpoint(run_dir: Path) -> Checkpoint:
    """Read `<run>/checkpoint.json`. ConfigError when missing, of another schema, or malformed."""
    path = run_dir / CHECKPOINT_FILE
    if not path.is_file():
        raise ConfigError(
            f"no evolve checkpoint in {run_dir}",
            got=str(path),
            fix=f"start a run there first ({start_hint()}), or check the path",
        )
    data = read_json_mapping(path, what="the evolve checkpoint")
    version = data.get("schema_version")
    if version != CHECKPOINT_SCHEMA_VERSION:
        raise ConfigError(
            "the run directory was written by another checkpoint schema version",
            got=f"schema_version {version!r} (loopwright {data.get('loopwright_version')})",
            fix=f"this loopwright ({__version__}) reads schema_version "
            f"{CHECKPOINT_SCHEMA_VERSION}; resume it with the version that wrote it, "
            "or start a new run",
        )
    try:
        checkpoint = Checkpoint.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(
            "the evolve checkpoint does not hold a checkpoint",
            got=f"{path}: {exc.error_count()} invalid fields, first: {exc.errors()[0]['loc']}",
            fix="restore it from a copy, or start a new run in another directory",
        ) from None
    _check_beside(run_dir)
    return checkpoint


def _check_beside(run_dir: Path) -> None:
    """The files beside the checkpoint that status, resume and report read: config.yaml,
    calibration.json and result.json, each when present. ConfigError for a damaged one (empty,
    truncated, edited), rather than a run that goes on without it."""
    RunDir(run_dir).meta()
    result = run_dir / "result.json"
    if result.is_file():
        again = spoken(f"loopwright.search.finalize_run({str(run_dir)!r})",
                       f"`loopwright outer-loop finalize --run-dir {run_dir}`")  # fmt: skip
        read_json_mapping(result, what="the run's result",
                          fix=f"remove it and write it again with {again}")  # fmt: skip
    path = run_dir / CALIBRATION_FILE
    if path.is_file():
        data = read_json_mapping(path, what="the run's calibration table")
        try:
            Calibration.model_validate(data)
        except ValidationError as exc:
            raise ConfigError(
                "the run's calibration table does not hold a calibration",
                got=f"{path}: {exc.error_count()} invalid fields, first: {exc.errors()[0]['loc']}",
                fix="restore it from a copy, or start a new run in another directory",
            ) from None
