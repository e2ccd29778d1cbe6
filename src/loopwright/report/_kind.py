"""Which kind of run directory a report is asked for, told from the files in it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

import yaml

from loopwright.errors import ConfigError, UsageError

__all__ = ["KNOWN_KINDS", "RunKind", "detect_kind", "is_ab_dir", "read_meta"]

RunKind = Literal["evolve", "run", "ab", "research"]
KNOWN_KINDS: tuple[RunKind, ...] = ("evolve", "run", "ab", "research")

AB_RECORD_KIND = "loop-ab-record"
AB_SCOREBOARD_KIND = "loop-ab-scoreboard"

CONFIG_FILE = "config.yaml"


def read_meta(run_dir: Path) -> dict[str, Any]:
    """`<run>/config.yaml` as a mapping; {} when there is none. ConfigError when it is not YAML
    or not a mapping."""
    path = run_dir / CONFIG_FILE
    if not path.is_file():
        return {}
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path} is not valid YAML", got=str(exc)[:300]) from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path} is not a mapping", got=type(data).__name__)
    return data


def is_ab_dir(run_dir: Path) -> bool:
    """A directory `loopwright ab record` wrote: its record.json or scoreboard.json says so."""
    for name, kind in (("scoreboard.json", AB_SCOREBOARD_KIND), ("record.json", AB_RECORD_KIND)):
        path = run_dir / name
        if not path.is_file():
            continue
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            continue
        if isinstance(data, dict) and data.get("kind") == kind:
            return True
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
            fix="pass the directory a loopwright run or evolve wrote (its --run-dir)",
        )
    kind = read_meta(run_dir).get("kind")
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
        fix="pass a directory written by `loopwright run`, `loopwright evolve`, "
        "`loopwright ab record` or `loopwright research init` (its --dir)",
    )
