"""The container sandbox's paths: a command's paths outside the workspace copied into the
container's staging mounts (and the writable ones copied back), and host paths in a command's
argv, cwd and environment rewritten to where the container shows them. See docs/sandbox.md."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

__all__ = ["STAGE", "PathMap", "Staged", "env_flags", "staged"]

STAGE = "/.lw"  # inside: ro/ (read-only) and rw/ (writable) staging mounts


@dataclass(frozen=True, slots=True)
class Staged:
    """One path of a command, copied to `staged` on the host, seen at `inside`."""

    host: Path
    staged: Path
    inside: str
    writable: bool


@contextmanager
def staged(
    stage: Path, root: Path, number: int, writable: Sequence[Path], readonly: Sequence[Path]
) -> Iterator[list[Staged]]:
    """Copy command `number`'s paths outside the workspace `root` into the staging mounts (host
    directory `stage`: ro/ and rw/); afterwards copy the writable ones back and remove the
    copies."""
    copies = [
        _stage_one(stage, path, number, i, writable=path in writable)
        for i, path in enumerate(dict.fromkeys([*writable, *readonly]))
        if not path.is_relative_to(root)
    ]
    try:
        yield copies
    finally:
        for item in copies:
            if item.writable:
                _copy(item.staged, item.host)
        for kind in ("ro", "rw"):
            shutil.rmtree(stage / kind / str(number), ignore_errors=True)


def _stage_one(stage: Path, path: Path, number: int, i: int, *, writable: bool) -> Staged:
    kind = "rw" if writable else "ro"
    copy = stage / kind / str(number) / str(i)
    copy.parent.mkdir(parents=True, exist_ok=True)
    _copy(path, copy)
    return Staged(path, copy, f"{STAGE}/{kind}/{number}/{i}", writable)


def _copy(source: Path, dest: Path) -> None:
    if source.is_dir():
        shutil.copytree(source, dest, symlinks=True, dirs_exist_ok=True)
    elif source.exists() or source.is_symlink():
        shutil.copy2(source, dest, follow_symlinks=False)


def env_flags(env: Mapping[str, str], paths: PathMap) -> list[str]:
    flags = []
    for key, value in env.items():
        flags += ["--env", f"{key}={paths.inside(value)}"]
    return flags


class PathMap:
    """Rewrites host paths in a string to where the container shows them. A host path matches
    only as a whole: `/tmp/a` is rewritten in `/tmp/a/b` and `--x=/tmp/a`, not in `/tmp/ab`."""

    def __init__(self, pairs: list[tuple[Path, str]]) -> None:
        ordered = sorted(pairs, key=lambda pair: -len(str(pair[0])))
        self._inside = {str(host): inside for host, inside in ordered}
        alternatives = "|".join(re.escape(str(host)) for host, _ in ordered)
        self._pattern = re.compile(f"({alternatives})(?![^/:\\s,;=\"')\\]])")

    def inside(self, text: str) -> str:
        """`text` with every host path replaced by its inside path."""
        return self._pattern.sub(lambda match: self._inside[match.group(1)], text)
