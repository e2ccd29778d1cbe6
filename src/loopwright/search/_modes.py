"""Ephemeral modes: each individual registered under its run, never globally.

A mode is `<run>/modes/evolve-gen{N}-{id8}.json`. They live only inside the run directory, so
a dead experiment never shows up in `loopwright workflow list`; only `promote` writes a
workflow into the user's library.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path

from loopwright._fs import atomic_write
from loopwright.errors import UsageError
from loopwright.search._individual import Individual
from loopwright.workflow import Workflow, load_workflow, workflow_to_yaml

__all__ = ["LIBRARY_ENV", "EphemeralModeRegistry", "default_library_dir"]

LIBRARY_ENV = "LOOPWRIGHT_WORKFLOW_LIBRARY"


def default_library_dir() -> Path:
    """The user's workflow library: $LOOPWRIGHT_WORKFLOW_LIBRARY or ~/.loopwright/workflows."""
    env = os.environ.get(LIBRARY_ENV)
    return Path(env) if env else Path.home() / ".loopwright" / "workflows"


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

        Raises UsageError for an unknown mode or an existing file (unless `overwrite`).
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
                fix="choose another name, or pass --force to overwrite it",
            )
        library.mkdir(parents=True, exist_ok=True)
        atomic_write(target, workflow_to_yaml(workflow))
        load_workflow(target)  # the promoted file must read back as a valid workflow
        return target
