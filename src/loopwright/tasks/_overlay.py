"""Overlays: a folder of files laid over a workspace at the same relative paths (gold, flawed,
hidden tests), or a gold given as a unified diff (`solution.patch`) applied to the workspace."""

from __future__ import annotations

import shutil
from pathlib import Path

from loopwright.tasks._hidden import apply_test_patch, patch_paths

__all__ = ["apply_overlay", "patch_changes"]


def apply_overlay(overlay: Path, dest: Path) -> list[str]:
    """Copy every file of the folder `overlay` onto `dest` at the same relative path; or, when
    `overlay` is a `.patch` file, apply it to `dest` (files it deletes are removed). Return the
    paths written or removed. Raises ValueError when a patch does not apply to `dest`."""
    if overlay.is_file():
        return _apply_patch_file(overlay, dest)
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


def patch_changes(patch: Path, repo: Path) -> dict[str, bytes | None]:
    """What the unified diff `patch` makes of the files of `repo` it touches: path -> content
    after (None: deleted), computed in a scratch directory (`repo` is not changed). Raises
    ValueError when it does not apply or names a path outside the repo; OSError on reads."""
    data = patch.read_bytes()
    base = {
        rel: (repo / rel).read_bytes()
        for rel in patch_paths(data, label=patch.name)
        if (repo / rel).is_file() and not (repo / rel).is_symlink()
    }
    return apply_test_patch(data, base, label=patch.name)


def _apply_patch_file(patch: Path, dest: Path) -> list[str]:
    changes = patch_changes(patch, dest)
    for rel, content in changes.items():
        target = dest / rel
        if target.is_symlink() or (target.exists() and not target.is_file()):
            _remove(target)
        if content is None:
            target.unlink(missing_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
    return sorted(changes)


def _remove(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)
