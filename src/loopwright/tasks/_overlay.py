"""Overlays: a folder of files laid over a workspace at the same relative paths (gold, flawed, hidden tests)."""

from __future__ import annotations

import shutil
from pathlib import Path

__all__ = ["apply_overlay"]


def apply_overlay(overlay: Path, dest: Path) -> list[str]:
    """Copy every file of `overlay` onto `dest` at the same relative path; return those paths."""
    written = []
    for path in sorted(overlay.rglob("*")):
        rel = path.relative_to(overlay)
        if not path.is_file() or "__pycache__" in rel.parts:
            continue
        target = dest / rel
        if target.is_symlink() or (target.exists() and not target.is_file()):
            _remove(target)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
        written.append(rel.as_posix())
    return written


def _remove(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)
