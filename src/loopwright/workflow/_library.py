"""The workflow library: promoted workflows and any extra workflow directories, by name.

A library directory holds workflows as `NAME.yaml` (or `.yml`, `.json`), each optionally beside
`NAME.provenance.json` (a `Provenance`: where a promoted workflow came from). The directories
searched, in this order:

1. `$LOOPWRIGHT_WORKFLOW_LIBRARY`, else `~/.loopwright/workflows` (where `outer-loop promote`
   writes), and
2. every directory in `$LOOPWRIGHT_WORKFLOWS_PATH` (separated by `os.pathsep`; the CLI's
   `loopwright --workflows-dir DIR` adds to it).

Built-in names win: a library file named like a built-in is listed as shadowed and reached
only by its path. A name found in two library directories is ambiguous: resolving it is a
ConfigError naming both files. See docs/workflow.md ("The workflow library").
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from loopwright._fs import atomic_write
from loopwright.errors import ConfigError

__all__ = [
    "LIBRARY_ENV",
    "PROVENANCE_SCHEMA_VERSION",
    "WORKFLOWS_PATH_ENV",
    "HoldoutGain",
    "LibraryEntry",
    "Provenance",
    "check_library_name",
    "library_dirs",
    "library_entries",
    "library_workflow_path",
    "provenance_path",
    "read_provenance",
    "user_library_dir",
    "write_provenance",
]

LIBRARY_ENV = "LOOPWRIGHT_WORKFLOW_LIBRARY"
WORKFLOWS_PATH_ENV = "LOOPWRIGHT_WORKFLOWS_PATH"
PROVENANCE_SCHEMA_VERSION = 1
_PROVENANCE_SUFFIX = ".provenance.json"
_SUFFIXES = (".yaml", ".yml", ".json")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


class HoldoutGain(BaseModel):
    """The promoted workflow's holdout gain over the seed: mean and its bootstrap interval."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mean: float
    low: float
    high: float
    level: float
    n_tasks: int


class Provenance(BaseModel):
    """Where a promoted workflow came from (`NAME.provenance.json`, schema_version 1).

    `run_dir` is the run it was promoted from, `mode`/`individual_id`/`generation` the
    individual, `holdout_gain` its gain over the seed on the holdout tasks (None when the run
    had no holdout scores), `forced` whether `promote --force` overrode an interval that
    includes zero, `simulated` whether the figures came from the offline `sim` model."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: int = PROVENANCE_SCHEMA_VERSION
    name: str
    promoted_at: datetime
    run_dir: str
    mode: str
    individual_id: str
    generation: int
    workflow_hash: str
    seed_workflow: str
    benchmark: str
    model: str
    simulated: bool
    holdout_gain: HoldoutGain | None
    forced: bool
    loopwright_version: str


@dataclass(frozen=True, slots=True)
class LibraryEntry:
    """One workflow file of a library directory. `shadowed`: a built-in has its name (the
    built-in wins). `provenance` is None for a file that was not promoted (or whose record
    does not read)."""

    name: str
    path: Path
    provenance: Provenance | None
    shadowed: bool


def user_library_dir() -> Path:
    """Where `outer-loop promote` writes: $LOOPWRIGHT_WORKFLOW_LIBRARY or ~/.loopwright/workflows."""
    env = os.environ.get(LIBRARY_ENV)
    return Path(env).expanduser() if env else Path.home() / ".loopwright" / "workflows"


def library_dirs() -> list[Path]:
    """The library directories in search order (the user library, then $LOOPWRIGHT_WORKFLOWS_PATH),
    without duplicates; directories that do not exist are kept (they list nothing)."""
    extra = [p for p in os.environ.get(WORKFLOWS_PATH_ENV, "").split(os.pathsep) if p]
    out: list[Path] = []
    for path in [user_library_dir(), *(Path(p).expanduser() for p in extra)]:
        if path.absolute() not in [p.absolute() for p in out]:
            out.append(path)
    return out


def check_library_name(name: str) -> None:
    """ConfigError unless `name` can name a library workflow: letters, digits, `.`, `_`, `-`,
    starting with a letter or digit, and no workflow suffix (it becomes `NAME.yaml`)."""
    if not _NAME.fullmatch(name) or name.endswith(_SUFFIXES):
        raise ConfigError(
            f"{name!r} cannot name a library workflow",
            got=name,
            fix="use letters, digits, '.', '_' and '-' (starting with a letter or digit), "
            "without a .yaml/.json suffix, e.g. my-builder",
        )


def library_entries(
    builtins: Sequence[str], dirs: Sequence[Path] | None = None
) -> list[LibraryEntry]:
    """Every workflow file in the library directories (`dirs`, default `library_dirs()`), in
    search order and by name within a directory. Reads only file names and provenance."""
    entries = []
    for folder in library_dirs() if dirs is None else dirs:
        if not folder.is_dir():
            continue
        for path in sorted(folder.iterdir()):
            if not _is_workflow_file(path):
                continue
            name = path.name.removesuffix(path.suffix)
            entries.append(LibraryEntry(name, path, read_provenance(path), name in builtins))
    return entries


def library_workflow_path(name: str, builtins: Sequence[str]) -> Path | None:
    """The library file named `name` (not shadowed by a built-in), or None. ConfigError when two
    library files have that name (ambiguous)."""
    found = [e.path for e in library_entries(builtins) if e.name == name and not e.shadowed]
    if len(found) > 1:
        raise ConfigError(
            f"workflow {name!r} is ambiguous: the library holds it more than once",
            got=", ".join(str(p) for p in found),
            fix="pass the path of the one you mean, or rename or remove the others",
        )
    return found[0] if found else None


def provenance_path(workflow_path: Path) -> Path:
    """`NAME.provenance.json` beside `NAME.yaml`."""
    return workflow_path.with_name(
        workflow_path.name.removesuffix(workflow_path.suffix) + _PROVENANCE_SUFFIX
    )


def write_provenance(workflow_path: Path, provenance: Provenance) -> Path:
    """Write the provenance record beside `workflow_path` atomically; return its path."""
    path = provenance_path(workflow_path)
    atomic_write(path, provenance.model_dump_json(indent=2) + "\n")
    return path


def read_provenance(workflow_path: Path) -> Provenance | None:
    """The provenance beside `workflow_path`, or None when there is none or it does not read
    (a hand-edited record never stops a workflow from being used)."""
    path = provenance_path(workflow_path)
    if not path.is_file():
        return None
    try:
        return Provenance.model_validate_json(path.read_text(encoding="utf-8"))
    except (ValidationError, OSError, UnicodeDecodeError):
        return None


def _is_workflow_file(path: Path) -> bool:
    return (
        path.is_file()
        and path.suffix in _SUFFIXES
        and not path.name.endswith(_PROVENANCE_SUFFIX)
        and not path.name.startswith(".")
    )
