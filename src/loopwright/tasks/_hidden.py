"""Where a task's hidden tests land in the workspace: its `hidden_tests_layout` resolved to files.

Three layouts (docs/task-format.md, "Hidden tests"): `test_dir` (today's: `<task>/tests/` is
overlaid onto `<workspace>/<test_dir>`), `tree` (`<task>/tests/` mirrors workspace paths anywhere
in the tree, overwriting files that exist), `patch` (`<task>/tests.patch`, a unified git diff,
applied with `git apply` to the base repo's versions of the files it touches). Every layout
resolves to the same thing: workspace-relative path -> content at grading (None: deleted).
The patch is applied in a private scratch directory holding only the task's own files, never in
a workspace: nothing an agent wrote (a `.gitattributes`, a git config) can steer it.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path

from loopwright._fs import read_regular

__all__ = [
    "HIDDEN_LAYOUTS",
    "PATCH_FILE",
    "apply_test_patch",
    "patch_paths",
    "place_hidden",
    "read_hidden_sources",
]

PATCH_FILE = "tests.patch"
HIDDEN_LAYOUTS = ("test_dir", "tree", "patch")
_HEADER = re.compile(r"^(?:---|\+\+\+) (?:[ab]/)?(.+?)\s*$")
_GIT_TIMEOUT_S = 60


def read_hidden_sources(root: Path, layout: str) -> dict[str, bytes]:
    """The task's hidden-test files, relative to the task directory (`tests/...` or
    `tests.patch`); empty when there are none. Raises OSError when they cannot be read (a FIFO, device or
    socket is never opened: SpecialFileError)."""
    if layout == "patch":
        patch = root / PATCH_FILE
        return {PATCH_FILE: read_regular(patch.resolve())} if patch.is_file() else {}
    hidden = root / "tests"
    files = {}
    for dirpath, dirnames, filenames in os.walk(hidden):
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        for name in filenames:
            path = Path(dirpath) / name
            files[path.relative_to(root).as_posix()] = read_regular(path.resolve())
    return dict(sorted(files.items()))


def patch_paths(patch: bytes, *, label: str = PATCH_FILE) -> list[str]:
    """The repo-relative paths a unified diff reads or writes, sorted. Raises ValueError for a
    path that is absolute, climbs out (`..`), enters `.git`, or is quoted (unusual characters)."""
    paths = set()
    for line in patch.decode("utf-8", errors="replace").splitlines():
        match = _HEADER.match(line)
        if match is None or match.group(1) == "/dev/null":
            continue
        path = match.group(1)
        parts = Path(path).parts
        if path.startswith(('"', "/")) or ".." in parts or ".git" in parts:
            raise ValueError(f"{label} touches {path!r}: paths must be plain and inside the repo")
        paths.add(Path(path).as_posix())
    if not paths:
        raise ValueError(f"{label} touches no file (is it a unified diff?)")
    return sorted(paths)


def apply_test_patch(
    patch: bytes,
    base: Mapping[str, bytes],
    *,
    label: str = PATCH_FILE,
    reverse: bool = False,
    where: str = "to repo/",
) -> dict[str, bytes | None]:
    """Apply `patch` with `git apply` (`reverse`: undo it, `git apply -R`) to `base`
    (repo-relative path -> the repo's content, for the paths the patch touches that exist in
    the repo) in a scratch directory; return every touched path's content afterwards (None: the
    patch deletes it). Raises ValueError when the patch does not apply, saying git's reason:
    "`label` does not apply [reversed ]`where`: ...". The one patch application of the task
    format and the importers."""
    paths = patch_paths(patch, label=label)
    with tempfile.TemporaryDirectory(prefix="lw-testpatch-") as scratch:
        root = Path(scratch) / "repo"
        root.mkdir()
        for rel in paths:
            if rel in base:
                (root / rel).parent.mkdir(parents=True, exist_ok=True)
                (root / rel).write_bytes(base[rel])
        (Path(scratch) / PATCH_FILE).write_bytes(patch)
        _git_apply(root, Path(scratch) / PATCH_FILE, label, reverse=reverse, where=where)
        return {rel: (root / rel).read_bytes() if (root / rel).is_file() else None for rel in paths}


def _git_apply(root: Path, patch: Path, label: str, *, reverse: bool, where: str) -> None:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "GIT_CEILING_DIRECTORIES": str(root.parent),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "HOME": str(root.parent),
        "LANG": "C",
    }
    try:
        done = subprocess.run(
            ["git", "apply", "--whitespace=nowarn", *(["-R"] if reverse else []), str(patch)],
            cwd=root, env=env, capture_output=True, text=True, timeout=_GIT_TIMEOUT_S,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ValueError(f"could not run git apply on {label}: {exc}") from None
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip()[-500:]
        raise ValueError(f"{label} does not apply {'reversed ' if reverse else ''}{where}: {tail}")


def place_hidden(
    layout: str, test_dir: str, sources: Mapping[str, bytes], repo: Path
) -> dict[str, bytes | None]:
    """The hidden tests as they land in the workspace: workspace-relative path -> content (None:
    the patch deletes the file), from `sources` (`read_hidden_sources`) and, for a patch, the
    base versions in `repo`. Raises ValueError when a patch does not apply, OSError on reads."""
    if layout == "patch":
        patch = sources.get(PATCH_FILE)
        if patch is None:
            raise ValueError(f"{PATCH_FILE} is missing")
        base = {
            rel: (repo / rel).read_bytes()
            for rel in patch_paths(patch)
            if (repo / rel).is_file() and not (repo / rel).is_symlink()
        }
        return dict(apply_test_patch(patch, base))
    prefix = "" if layout == "tree" else test_dir.rstrip("/") + "/"
    placed: dict[str, bytes | None] = {
        prefix + rel.removeprefix("tests/"): content for rel, content in sources.items()
    }
    inside_git = [rel for rel in placed if ".git" in Path(rel).parts]
    if inside_git:
        raise ValueError(f"hidden test files may not go inside .git: {inside_git}")
    return placed
