"""Ephemeral modes: each individual registered under its run, never globally.

A mode is `<run>/modes/evolve-gen{N}-{id8}.json`. They live only inside the run directory, so
a dead experiment never shows up in `loopwright workflow list`; only `promote` writes a
workflow into the user's library.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path

from loopwright._caller import spoken
from loopwright._fs import atomic_write
from loopwright._version import __version__
from loopwright.errors import UsageError
from loopwright.search._checkpoint import load_checkpoint
from loopwright.search._individual import Individual
from loopwright.search._report import evolve_result
from loopwright.store import is_simulated
from loopwright.workflow import (
    LIBRARY_ENV,
    HoldoutGain,
    Provenance,
    Workflow,
    builtin_workflow_names,
    check_library_name,
    load_workflow,
    user_library_dir,
    workflow_to_yaml,
    write_provenance,
)

__all__ = ["LIBRARY_ENV", "EphemeralModeRegistry", "default_library_dir", "promote_winner"]


def default_library_dir() -> Path:
    """The user's workflow library: $LOOPWRIGHT_WORKFLOW_LIBRARY or ~/.loopwright/workflows."""
    return user_library_dir()


def promote_winner(
    run_dir: str | os.PathLike[str],
    name: str,
    library_dir: str | os.PathLike[str] | None = None,
    *,
    force: bool = False,
) -> Path:
    """Promote the run's winner into the library as `NAME.yaml` with its provenance beside it
    (`NAME.provenance.json`: run, individual, holdout gain and interval, date; docs/workflow.md).

    Refused (UsageError) when the winner's holdout gain is missing or its interval includes
    zero, unless `force` (which also overwrites an existing NAME); ConfigError for a name that
    cannot name a library workflow or is a built-in's (built-in names win)."""
    run_dir = Path(run_dir)
    library_dir = None if library_dir is None else Path(library_dir)
    checkpoint = load_checkpoint(run_dir)
    result = evolve_result(checkpoint)
    if not force and (result.gain is None or result.gain.includes_zero):
        raise UsageError(
            "the winner's holdout gain over the seed is not significant",
            got="no holdout gain" if result.gain is None else result.gain.describe(),
            fix=f"evolve longer or on more holdout tasks, or pass {spoken('force=True', '--force')}",
        )
    _check_new_name(name)
    registry = EphemeralModeRegistry(run_dir)
    if result.winner.mode not in registry.names():
        registry.register(result.winner)
    path = registry.promote(result.winner.mode, name, library_dir, overwrite=force)
    gain = result.gain
    config = checkpoint.config
    provenance = Provenance(
        name=name,
        promoted_at=datetime.now(UTC).replace(microsecond=0),
        run_dir=str(run_dir.resolve()),
        mode=result.winner.mode,
        individual_id=result.winner.id,
        generation=result.winner.generation,
        workflow_hash=result.winner.hash,
        seed_workflow=config.seed_workflow,
        benchmark=config.bench,
        model=config.model,
        simulated=is_simulated(config.model),
        holdout_gain=None
        if gain is None
        else HoldoutGain(
            mean=gain.gain, low=gain.low, high=gain.high, level=gain.level, n_tasks=gain.n_tasks
        ),
        forced=force and (gain is None or gain.includes_zero),
        loopwright_version=__version__,
    )
    write_provenance(path, provenance)
    return path


def _check_new_name(name: str) -> None:
    check_library_name(name)
    if name in builtin_workflow_names():
        raise UsageError(
            f"{name!r} is a built-in workflow's name; built-in names win, so the promoted "
            "workflow could not be used by it",
            got=name,
            fix="choose another name",
        )


class EphemeralModeRegistry:
    """Registers individuals as JSON modes under `<run>/modes/`; cleans up; promotes a winner.

    Invariant kept by the engine: after each generation's selection only the next population's
    modes exist; after the run only the winner's.
    """

    def __init__(self, run_dir: Path) -> None:
        self.dir = run_dir / "modes"

    def register(self, individual: Individual) -> Path:
        """Write the individual's mode file (idempotent) and return its path."""
        self.dir.mkdir(parents=True, exist_ok=True)
        path = self.dir / f"{individual.mode}.json"
        payload = {
            "mode": individual.mode,
            "individual_id": individual.id,
            "generation": individual.generation,
            "hash": individual.hash,
            "workflow": json.loads(individual.workflow.model_dump_json()),
        }
        atomic_write(path, json.dumps(payload, indent=2) + "\n")
        return path

    def names(self) -> list[str]:
        """Registered mode names, sorted."""
        if not self.dir.is_dir():
            return []
        return sorted(p.stem for p in self.dir.glob("evolve-gen*.json"))

    def cleanup(self, keep: Iterable[Individual]) -> list[str]:
        """Remove every mode but those of `keep`; returns the names removed, sorted."""
        kept = {ind.mode for ind in keep}
        removed = [name for name in self.names() if name not in kept]
        for name in removed:
            (self.dir / f"{name}.json").unlink(missing_ok=True)
        return removed

    def promote(
        self, mode: str, name: str, library_dir: Path | None = None, *, overwrite: bool = False
    ) -> Path:
        """Copy mode `mode`'s workflow, renamed `name`, as YAML into the user library.

        Raises UsageError for an unknown mode or an existing file (unless `overwrite`);
        `promote_winner` also records where the workflow came from.
        """
        path = self.dir / f"{mode}.json"
        if not path.is_file():
            raise UsageError(
                f"no ephemeral mode {mode!r} in this run",
                got=mode,
                fix=f"choose one of: {', '.join(self.names()) or '(none left)'}",
            )
        data = json.loads(path.read_text(encoding="utf-8"))
        workflow = Workflow.model_validate(data["workflow"])
        workflow = workflow.model_copy(update={"name": name})
        library = library_dir or default_library_dir()
        target = library / f"{name}.yaml"
        if target.exists() and not overwrite:
            raise UsageError(
                f"workflow {name!r} already exists in the library",
                got=str(target),
                fix=f"choose another name, or pass {spoken('force=True', '--force')} to overwrite it",
            )
        library.mkdir(parents=True, exist_ok=True)
        atomic_write(target, workflow_to_yaml(workflow))
        load_workflow(target)  # the promoted file must read back as a valid workflow
        return target
