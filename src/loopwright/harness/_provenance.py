"""Provenance: the git commit the loops were measured at, and whether the tree was dirty.

Loop behaviour is still moving, so a scoreboard recorded against another commit may describe
loops that no longer exist as measured; stamping the commit makes that visible.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from loopwright._version import __version__

__all__ = ["PACKAGE_DIR", "Provenance", "current_provenance", "staleness"]

PACKAGE_DIR = Path(__file__).resolve().parents[1]
"""The loopwright package directory: its git status is what "dirty" means."""


class Provenance(BaseModel):
    """Where a measurement was made. `commit` and `dirty` are None outside a git checkout
    (an installed wheel): unknown, never guessed. `dirty` is True when a file of the
    loopwright package (tracked or not) differs from the commit."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    commit: str | None
    dirty: bool | None
    loopwright_version: str


def _git(args: list[str], cwd: Path) -> str | None:
    try:
        done = subprocess.run(
            ["git", *args], cwd=cwd, capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def current_provenance(package_dir: Path | None = None) -> Provenance:
    """The commit of the checkout holding `package_dir` (default: loopwright's own) and
    whether anything under that directory differs from it. Read-only git commands only."""
    where = (package_dir or PACKAGE_DIR).resolve()
    head = _git(["rev-parse", "HEAD"], where)
    if head is None:
        return Provenance(commit=None, dirty=None, loopwright_version=__version__)
    status = _git(["status", "--porcelain", "--untracked-files=all", "--", "."], where)
    dirty = None if status is None else bool(status.strip())
    return Provenance(commit=head.strip(), dirty=dirty, loopwright_version=__version__)


def staleness(recorded: Provenance, current: Provenance) -> str | None:
    """Why a scoreboard recorded at `recorded` is stale for the code at `current` (another
    commit, or a commit that cannot be known), or None when the commits match. A dirty tree is
    reported apart, from `recorded.dirty`."""
    if recorded.commit is None or current.commit is None:
        return "provenance unknown: not measured in (or not read from) a git checkout"
    if recorded.commit != current.commit:
        return (
            f"stale: recorded at commit {recorded.commit[:12]}, the code is now at "
            f"{current.commit[:12]}"
        )
    return None
