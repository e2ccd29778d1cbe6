"""Undo what an agent may have done to the tests before grading (the anchors' test restoration).

The test directory is rebuilt from the task (visible tests from repo/, hidden tests overlaid), and
files that steer pytest's collection or Python's start-up are reset to the original or removed.
Every action is reported: it is evidence of tampering worth keeping in the exhaust.
"""

from __future__ import annotations

import filecmp
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from loopwright.tasks import Task, apply_overlay

__all__ = ["HOOK_FILES", "RestoreReport", "restore_tests"]

# Files that change how pytest collects or how Python starts, wherever they sit in the workspace.
HOOK_FILES = frozenset(
    {"conftest.py", "pytest.ini", ".pytest.ini", "tox.ini", "sitecustomize.py", "usercustomize.py"}
)
# Config files with legitimate other uses: only a version that configures pytest is acted on.
_PYTEST_SECTIONS = {"setup.cfg": "[tool:pytest]", "pyproject.toml": "[tool.pytest"}


@dataclass(frozen=True, slots=True)
class RestoreReport:
    """What restoration changed; empty when the agent left tests and hooks alone."""

    actions: tuple[str, ...]


def restore_tests(workspace: Path, task: Task) -> RestoreReport:
    """Rebuild `<workspace>/<test_dir>` from the task and neutralise collection hooks.

    Afterwards the test directory holds exactly the repo's visible tests plus the hidden tests;
    hook files match the original repo or are gone; no compiled bytecode is left. Reads only the task (never trusts the
    workspace's copies). Not atomic: run it on a workspace nobody else is using.
    """
    actions = list(_reset_test_dir(workspace, task))
    actions += _neutralise_hooks(workspace, task)
    _remove_bytecode(workspace)
    return RestoreReport(actions=tuple(actions))


def _reset_test_dir(workspace: Path, task: Task) -> Iterator[str]:
    rel = task.spec.test_dir
    current = workspace / rel
    original = task.repo_dir / rel
    changed = _tree_changes(original, current)
    if changed:
        yield f"reset {rel}/: " + ", ".join(changed[:10]) + (" ..." if len(changed) > 10 else "")
    if current.exists() or current.is_symlink():
        _remove(current)
    if original.is_dir():
        shutil.copytree(original, current, ignore=shutil.ignore_patterns("__pycache__"))
    apply_overlay(task.hidden_tests_dir, current)


def _tree_changes(original: Path, current: Path) -> list[str]:
    if current.is_symlink() or (current.exists() and not current.is_dir()):
        return [f"{current.name} replaced by a {'symlink' if current.is_symlink() else 'file'}"]
    before = _files(original)
    after = _files(current)
    changes = [f"deleted {p}" for p in sorted(before - after)]
    changes += [f"added {p}" for p in sorted(after - before)]
    changes += [
        f"modified {p}"
        for p in sorted(before & after)
        if (current / p).is_symlink() or not filecmp.cmp(original / p, current / p, shallow=False)
    ]
    return changes


def _files(root: Path) -> set[str]:
    if not root.is_dir():
        return set()
    found = set()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        for name in filenames:
            found.add((Path(dirpath) / name).relative_to(root).as_posix())
    return found


def _neutralise_hooks(workspace: Path, task: Task) -> list[str]:
    actions = []
    for path in _hook_candidates(workspace):
        rel = path.relative_to(workspace)
        original = task.repo_dir / rel
        if not _is_hook(path):
            continue
        if (
            original.is_file()
            and not path.is_symlink()
            and filecmp.cmp(original, path, shallow=False)
        ):
            continue
        _remove(path)
        if original.is_file():
            shutil.copyfile(original, path)
            actions.append(f"restored {rel.as_posix()} (changed by the agent)")
        else:
            actions.append(f"removed {rel.as_posix()} (added by the agent)")
    return actions


def _remove_bytecode(workspace: Path) -> None:
    # Compiled files are never graded: Python would trust a forged .pyc whose header matches.
    for dirpath, dirnames, filenames in os.walk(workspace):
        if ".git" in dirnames:
            dirnames.remove(".git")
        if "__pycache__" in dirnames:
            dirnames.remove("__pycache__")
            shutil.rmtree(Path(dirpath) / "__pycache__", ignore_errors=True)
        for name in filenames:
            if name.endswith((".pyc", ".pyo")):
                (Path(dirpath) / name).unlink(missing_ok=True)


def _hook_candidates(workspace: Path) -> Iterator[Path]:
    for dirpath, dirnames, filenames in os.walk(workspace):
        dirnames[:] = [d for d in dirnames if d not in (".git", "__pycache__")]
        for name in filenames:
            if name in HOOK_FILES or name in _PYTEST_SECTIONS or name.endswith(".pth"):
                yield Path(dirpath) / name


def _is_hook(path: Path) -> bool:
    section = _PYTEST_SECTIONS.get(path.name)
    if section is None:
        return True
    try:
        return section in path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return True


def _remove(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)
