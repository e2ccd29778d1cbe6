"""Undo what an agent may have done to the tests before grading (the anchors' test restoration).

The test directory is rebuilt from the task (visible tests from repo/, hidden tests overlaid), and
files that steer pytest's collection or Python's start-up are reset to the original or removed.
Every action is reported: it is evidence of tampering worth keeping in the exhaust.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from loopwright._fs import SpecialFileError, read_regular
from loopwright.scoring._taskfiles import TaskFiles
from loopwright.tasks import Task, node_files, place_hidden, read_hidden_sources

__all__ = ["HOOK_FILES", "RestoreReport", "TaskTests", "restore_tests"]

# Files that change how pytest collects or how Python starts, wherever they sit in the workspace.
HOOK_FILES = frozenset(
    {"conftest.py", "pytest.ini", ".pytest.ini", "tox.ini", "sitecustomize.py", "usercustomize.py"}
)
# Config files with legitimate other uses: only a version that configures pytest is acted on.
_SHARED_CONFIGS = ("setup.cfg", "pyproject.toml")
_SETUP_CFG_SECTION = re.compile(r"^\s*\[\s*tool\s*:\s*pytest\s*\]", re.IGNORECASE | re.MULTILINE)


@dataclass(frozen=True, slots=True)
class RestoreReport:
    """What restoration changed (empty when the agent left tests and hooks alone), and the
    conftest.py files the workspace holds afterwards (all of them the task's own)."""

    actions: tuple[str, ...]
    conftests: tuple[Path, ...] = ()


@dataclass(frozen=True, slots=True)
class TaskTests:
    """An in-memory copy of everything restoration reads from a task: the repo's visible test
    directory (relative to test_dir), the task's hidden-test files (relative to the task
    directory: `tests/...` or `tests.patch`), the repo's original hook files (relative to
    repo/), the hidden tests as they land in the workspace (`placed`: workspace-relative path ->
    content, None where a patch deletes the file; also the repo's version of any other file of
    a listed test id outside test_dir), and the repo's own version of each placed path that
    exists there (`base`).

    Take it before an agent starts (`capture`), and restoration no longer depends on the task
    directory staying untouched: an unsandboxed agent can rewrite the task's files on disk.
    `whole` (taken when `capture(whole=True)`) copies every file of the task directory, so that
    all of it (task.toml, instruction.md, solution/, flawed/, repo/) is checked and put back.
    """

    visible: dict[str, bytes]
    hidden: dict[str, bytes]
    hooks: dict[str, bytes]
    placed: dict[str, bytes | None] = field(default_factory=dict)
    base: dict[str, bytes] = field(default_factory=dict)
    whole: TaskFiles | None = None

    @classmethod
    def capture(cls, task: Task, *, whole: bool = False) -> TaskTests:
        """Read the task's test and hook files now (and apply a test patch); with `whole`, every
        file of the task directory too. Raises OSError when they cannot be read or a test patch
        does not apply."""
        repo, layout = task.repo_dir, task.spec.hidden_tests_layout
        hidden = read_hidden_sources(task.root, layout)
        try:
            placed = place_hidden(layout, task.spec.test_dir, hidden, repo)
        except ValueError as exc:
            raise OSError(f"hidden tests of task {task.id}: {exc}") from None
        placed.update(_pinned_test_files(task, placed))
        return cls(
            visible=_read_tree(repo / task.spec.test_dir),
            hidden=hidden,
            hooks=_read_hooks(repo),
            placed=placed,
            base={
                rel: read_regular(repo / rel)
                for rel in placed
                if (repo / rel).is_file() and not (repo / rel).is_symlink()
            },
            whole=TaskFiles.capture(task.root) if whole else None,
        )

    def changes_on_disk(self, task: Task) -> list[str]:
        """The files of this copy that differ from the task directory now (relative to the
        task's root), sorted; empty when the task is as it was. With `whole`, any file of the
        task directory; else its tests and hooks."""
        if self.whole is not None:
            return self.whole.changes(task.root)
        repo, test_dir = task.repo_dir, task.spec.test_dir
        hidden = read_hidden_sources(task.root, task.spec.hidden_tests_layout)
        changed = [
            f"repo/{test_dir}/{p}" for p in _diff_keys(self.visible, _read_tree(repo / test_dir))
        ]
        changed += _diff_keys(self.hidden, hidden)
        changed += [f"repo/{p}" for p in _diff_keys(self.hooks, _read_hooks(repo))]
        return sorted(changed)

    def write_back(self, task: Task, changed: list[str]) -> list[str]:
        """Put this copy's files back into the task directory (repair after tampering);
        `changed` is what `changes_on_disk` found. Returns the files that could not be put back
        (past the whole copy's budget)."""
        if self.whole is not None:
            return self.whole.restore(task.root, changed)
        _write_tree(self.visible, task.repo_dir / task.spec.test_dir)
        _write_tree(self.hidden, task.root)
        _write_tree(self.hooks, task.repo_dir)
        return []

    def repo_file(self, task: Task, rel: str) -> bytes | None:
        """The task's repo/ version of `rel` as it was at the capture when the whole directory
        was copied (else read now); None when it has none."""
        kept = self.whole.file(f"repo/{rel}") if self.whole is not None else None
        if kept is not None:
            return kept
        try:
            return read_regular(task.repo_dir / rel)
        except OSError:
            return None


def restore_tests(workspace: Path, task: Task, tests: TaskTests | None = None) -> RestoreReport:
    """Rebuild `<workspace>/<test_dir>` from the task, place the hidden tests, and neutralise
    collection hooks.

    Afterwards the test directory holds exactly the repo's visible tests; every hidden-test
    path holds the task's version (wherever it is in the tree, overwriting the workspace's
    file; removed where a test patch deletes it); hook files match the original repo or the
    hidden tests, or are gone; no compiled bytecode is left. Reads `tests` (default: the task
    directory, read now), never the workspace's copies. Not atomic: run it on a workspace
    nobody else is using.
    """
    source = tests if tests is not None else TaskTests.capture(task)
    actions = list(_reset_test_dir(workspace, task.spec.test_dir, source))
    actions += _place_hidden(workspace, task.spec.test_dir, source)
    hook_actions, conftests = _neutralise_hooks(workspace, task.spec.test_dir, source)
    _remove_bytecode(workspace)
    return RestoreReport(actions=(*actions, *hook_actions), conftests=tuple(conftests))


def _reset_test_dir(workspace: Path, rel: str, source: TaskTests) -> Iterator[str]:
    current = workspace / rel
    changed = _tree_changes(source.visible, current)
    if changed:
        yield f"reset {rel}/: " + ", ".join(changed[:10]) + (" ..." if len(changed) > 10 else "")
    _real_dir(workspace, str(Path(rel).parent))
    if current.exists() or current.is_symlink():
        _remove(current)
    current.mkdir(parents=True, exist_ok=True)
    _write_tree(source.visible, current)


def _place_hidden(workspace: Path, test_dir: str, source: TaskTests) -> list[str]:
    """Write (or delete) every hidden-test path; report those outside test_dir the agent had
    changed from the repo's version (the test directory's own changes are reported by its
    reset)."""
    prefix = test_dir.rstrip("/") + "/"
    actions = []
    for rel, content in source.placed.items():
        target = workspace / rel
        if not rel.startswith(prefix) and _changed_from(target, source.base.get(rel)):
            actions.append(f"reset {rel} (changed by the agent)")
        _real_dir(workspace, str(Path(rel).parent))
        if target.exists() or target.is_symlink():
            _remove(target)
        if content is not None:
            target.write_bytes(content)
    return actions


def _changed_from(path: Path, original: bytes | None) -> bool:
    if original is None:
        return path.exists() or path.is_symlink()
    return not _same(path, original)


def _real_dir(workspace: Path, rel: str) -> None:
    """Make `workspace/rel` a real directory: any component the agent turned into a symlink or a
    file is removed first, so nothing restoration writes lands outside the workspace."""
    current = workspace
    for part in Path(rel).parts:
        if part in ("", "."):
            continue
        current = current / part
        if current.is_symlink() or (current.exists() and not current.is_dir()):
            _remove(current)
        current.mkdir(exist_ok=True)


def _pinned_test_files(task: Task, placed: dict[str, bytes | None]) -> dict[str, bytes | None]:
    """The repo's version of every test-id file outside test_dir that no hidden test places:
    visible tests anywhere in the tree that the grader runs, so restored like test_dir."""
    prefix = task.spec.test_dir.rstrip("/") + "/"
    pinned: dict[str, bytes | None] = {}
    for rel in node_files(task.test_ids):
        path = task.repo_dir / rel
        if not rel.startswith(prefix) and rel not in placed and path.is_file():
            pinned[rel] = read_regular(path.resolve())
    return pinned


def _read_hooks(repo: Path) -> dict[str, bytes]:
    return {
        path.relative_to(repo).as_posix(): read_regular(path)
        for path in _hook_candidates(repo)
        if stat.S_ISREG(path.lstat().st_mode)
    }


def _tree_changes(original: dict[str, bytes], current: Path) -> list[str]:
    if current.is_symlink() or (current.exists() and not current.is_dir()):
        return [f"{current.name} replaced by a {'symlink' if current.is_symlink() else 'file'}"]
    before, after = set(original), _files(current)
    changes = [f"deleted {p}" for p in sorted(before - after)]
    changes += [f"added {p}" for p in sorted(after - before)]
    changes += [
        f"modified {p}" for p in sorted(before & after) if not _same(current / p, original[p])
    ]
    return changes


def _same(path: Path, content: bytes) -> bool:
    try:
        return read_regular(path) == content
    except OSError:  # a symlink, FIFO, device or socket is never the original
        return False


def _files(root: Path) -> set[str]:
    if not root.is_dir():
        return set()
    found = set()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        for name in filenames:
            found.add((Path(dirpath) / name).relative_to(root).as_posix())
    return found


def _read_tree(root: Path) -> dict[str, bytes]:
    return {rel: _content(root / rel) for rel in sorted(_files(root))}


_SPECIAL = b"\0loopwright: not a regular file\0"


def _content(path: Path) -> bytes:
    """The file's bytes (through a symlink); `_SPECIAL` for a FIFO, device or socket, never
    opened."""
    try:
        return read_regular(path.resolve())
    except SpecialFileError:
        return _SPECIAL


def _write_tree(files: dict[str, bytes], root: Path) -> None:
    for rel, content in files.items():
        target = root / rel
        if target.is_symlink() or (target.exists() and not target.is_file()):
            _remove(target)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)


def _diff_keys(a: dict[str, bytes], b: dict[str, bytes]) -> list[str]:
    return [k for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]


def _neutralise_hooks(
    workspace: Path, test_dir: str, source: TaskTests
) -> tuple[list[str], list[Path]]:
    """Reset or remove hook files; return the actions and the conftest.py files that remain."""
    expected = dict(source.hooks)
    for rel, content in source.visible.items():
        expected[f"{test_dir}/{rel}"] = content  # the test directory was just rebuilt
    for rel, placed in source.placed.items():  # and the hidden tests placed
        if placed is None:
            expected.pop(rel, None)
        else:
            expected[rel] = placed
    actions, conftests = [], []
    for path in _hook_candidates(workspace):
        rel = path.relative_to(workspace).as_posix()
        original = expected.get(rel)
        if not _is_hook(path):
            continue
        if original is None or not _same(path, original):
            _remove(path)
            if original is None:
                actions.append(f"removed {rel} (added by the agent)")
                continue
            path.write_bytes(original)
            actions.append(f"restored {rel} (changed by the agent)")
        if path.name == "conftest.py":
            conftests.append(path)
    return actions, conftests


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
            if name in HOOK_FILES or name in _SHARED_CONFIGS or name.endswith(".pth"):
                yield Path(dirpath) / name


def _is_hook(path: Path) -> bool:
    """True when the file can steer pytest or Python start-up. A pyproject.toml counts when its
    parsed `tool` table has a `pytest` key (however the TOML spells it: a table header, dotted
    keys, an inline table), or when it does not parse; a setup.cfg when it has a tool:pytest
    section; anything unreadable counts."""
    if path.name not in _SHARED_CONFIGS:
        return True
    try:
        text = read_regular(path).decode("utf-8", errors="replace")
    except OSError:  # unreadable, or special (a FIFO would block the host): a hook
        return True
    if path.name == "setup.cfg":
        return _SETUP_CFG_SECTION.search(text) is not None
    try:
        tool = tomllib.loads(text).get("tool")
    except tomllib.TOMLDecodeError:
        return True
    return tool is not None and (not isinstance(tool, dict) or "pytest" in tool)


def _remove(path: Path) -> None:
    """Remove whatever is at `path`: a directory tree, or any other entry (a file, a symlink, a
    FIFO, a socket or a device node: never opened)."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.is_symlink() or path.exists():
        path.unlink()
