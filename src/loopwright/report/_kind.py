"""Which kind of run directory a report is asked for, told from the files in it."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from loopwright._caller import spoken
from loopwright.errors import UsageError
from loopwright.store import META_FILE, read_yaml_mapping

__all__ = ["KNOWN_KINDS", "RunKind", "detect_kind", "is_ab_dir", "read_kind"]

RunKind = Literal["evolve", "run", "ab", "research"]
KNOWN_KINDS: tuple[RunKind, ...] = ("evolve", "run", "ab", "research")

AB_RECORD_KIND = "loop-ab-record"
AB_SCOREBOARD_KIND = "loop-ab-scoreboard"


def read_kind(run_dir: Path) -> str | None:
    """`kind` of `<run>/config.yaml` (every layout has it at the top); None when there is no
    config.yaml. ConfigError when it is not YAML or not a mapping."""
    data = read_yaml_mapping(run_dir / META_FILE)
    kind = None if data is None else data.get("kind")
    return None if kind is None else str(kind)


class _Kinded(BaseModel):
    """The one field an A/B file is recognised by (the rest is read by its page)."""

    model_config = ConfigDict(extra="ignore")

    kind: str


def is_ab_dir(run_dir: Path) -> bool:
    """A directory `loopwright ab record` wrote: its record.json or scoreboard.json says so."""
    for name, kind in (("scoreboard.json", AB_SCOREBOARD_KIND), ("record.json", AB_RECORD_KIND)):
        path = run_dir / name
        if not path.is_file():
            continue
        try:
            if _Kinded.model_validate_json(path.read_bytes()).kind == kind:
                return True
        except (OSError, ValidationError):
            continue
    return False


def detect_kind(run_dir: Path) -> RunKind:
    """`evolve`, `run` or `research` (a `loopwright research` working directory), from
    config.yaml's `kind` (an evolve run killed before it wrote one is known by its
    checkpoint.json or progress.jsonl); `ab` for an A/B record directory (its record.json or
    scoreboard.json has the A/B kind; docs/ab.md).

    Raises UsageError when `run_dir` is not a directory or holds no run this report knows,
    saying what was found and which kinds are known.
    """
    if not run_dir.is_dir():
        raise UsageError(
            f"no run directory at {run_dir}",
            fix="pass the directory a loopwright run or evolve wrote "
            f"(its {spoken('run_dir', '--run-dir')})",
        )
    kind = read_kind(run_dir)
    if kind is None and is_ab_dir(run_dir):
        return "ab"
    if kind == "evolve":
        return "evolve"
    if kind == "run":
        return "run"
    if kind == "research":
        return "research"
    if kind is None and any((run_dir / f).is_file() for f in ("checkpoint.json", "progress.jsonl")):
        return "evolve"
    found = sorted(p.name for p in run_dir.iterdir())[:12]
    what = (
        f"this report cannot render run directories of kind {kind!r} yet"
        if kind is not None
        else f"{run_dir} is not a loopwright run directory this report knows"
    )
    raise UsageError(
        what,
        got=f"config.yaml kind {kind!r}; files: {', '.join(found) or '(empty)'}",
        fix=spoken(
            "pass a directory written by loopwright.run, loopwright.evolve, loopwright.research "
            "or `loopwright ab record`",
            "pass a directory written by `loopwright run`, `loopwright evolve`, "
            "`loopwright ab record` or `loopwright research init` (its --dir)",
        ),
    )
