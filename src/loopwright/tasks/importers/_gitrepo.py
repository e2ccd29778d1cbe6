"""Reading a local clone and applying patches, for the importers: the clone of a repository
under `--repos`, a commit's files, its tree exported, its committer time, and patches applied
(forward or reversed) or written (`file_diff`). Every failure is a `SkipInstance` saying why, so
the importer reports the instance instead of raising."""

from __future__ import annotations

import difflib
import os
import subprocess
import tempfile
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path

from loopwright.tasks._hidden import PATCH_FILE, apply_test_patch, patch_paths

__all__ = [
    "SkipInstance",
    "apply_patch",
    "apply_patch_to",
    "commit_time",
    "exists_at",
    "export_repo",
    "file_diff",
    "find_clone",
    "read_at",
    "require_commit",
]

_GIT_TIMEOUT_S = 300


class SkipInstance(Exception):
    """Raised by a converter for an instance that cannot become a task; `reason` says why."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


def find_clone(repos: Path, repo: str) -> Path:
    """The local clone of `repo` (`owner/name`) under `repos`: `owner__name` or `owner/name`.
    Raises SkipInstance when neither is a git repository."""
    candidates = [repos / repo.replace("/", "__"), repos / repo]
    for path in candidates:
        if (path / ".git").exists() or (path / "HEAD").is_file():
            return path
    looked = ", ".join(str(p) for p in candidates)
    raise SkipInstance(f"no local clone of {repo} (looked for {looked})")


def _git(
    clone: Path, *args: str, stdin: bytes | None = None, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    base = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", "/"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "LANG": "C",
    }
    try:
        return subprocess.run(
            ["git", "-C", str(clone), *args],
            input=stdin, capture_output=True, env={**base, **(env or {})},
            timeout=_GIT_TIMEOUT_S, check=False,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SkipInstance(f"could not run git in {clone}: {exc}") from None


def export_repo(clone: Path, commit: str, dest: Path) -> None:
    """Write the tree of `commit` in `clone` into `dest` (created; no `.git`): every committed
    file, as a checkout of that commit has it (through a private index, so the clone's own
    index and work tree are untouched; unlike `git archive`, `export-ignore` attributes drop
    nothing). Submodules are not included. Raises SkipInstance when the commit is not in the
    clone or cannot be checked out."""
    require_commit(clone, commit)
    dest = dest.absolute()  # git runs in the clone (`-C`): a relative work tree would be its
    dest.mkdir(parents=True)
    with tempfile.TemporaryDirectory(prefix="lw-index-") as scratch:
        env = {"GIT_INDEX_FILE": str(Path(scratch) / "index")}
        steps = (
            ("read-tree", commit),
            ("-c", "core.autocrlf=false", f"--work-tree={dest}", "checkout-index", "-a", "-f"),
        )
        for step in steps:
            done = _git(clone, *step, env=env)
            if done.returncode != 0:
                tail = done.stderr.decode(errors="replace")[-300:]
                raise SkipInstance(f"could not check out {commit} from {clone}: {tail}")


def require_commit(clone: Path, commit: str) -> None:
    """Raise SkipInstance unless `commit` is a commit of `clone`."""
    known = _git(clone, "cat-file", "-e", f"{commit}^{{commit}}")
    if known.returncode != 0:
        raise SkipInstance(f"commit {commit} is not in the clone {clone} (fetch it there first)")


def commit_time(clone: Path, commit: str) -> str | None:
    """The committer time of `commit` in `clone`, in UTC (`YYYY-MM-DDTHH:MM:SSZ`), or None."""
    shown = _git(clone, "show", "-s", "--format=%ct", commit)
    stamp = shown.stdout.strip() if shown.returncode == 0 else b""
    if not stamp.isdigit():
        return None
    return datetime.fromtimestamp(int(stamp), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def exists_at(clone: Path, commit: str, rel: str) -> bool:
    """True when `rel` is a file (or directory) at `commit` in `clone`."""
    return _git(clone, "cat-file", "-e", f"{commit}:{rel}").returncode == 0


def read_at(clone: Path, commit: str, paths: Iterable[str]) -> dict[str, bytes]:
    """The content of each of `paths` at `commit` in `clone`; paths that are not files there
    are left out."""
    found = {}
    for rel in paths:
        shown = _git(clone, "show", f"{commit}:{rel}")
        if shown.returncode == 0:
            found[rel] = shown.stdout
    return found


def apply_patch(repo: Path, patch: str, label: str) -> dict[str, bytes | None]:
    """Apply `patch` to copies of the files it touches in the directory `repo` (not changed);
    return every touched path's content after (None: the patch deletes it). Raises
    SkipInstance, naming `label`, when it does not apply."""
    paths = _patch_paths(patch, label)
    base = {
        rel: (repo / rel).read_bytes()
        for rel in paths
        if (repo / rel).is_file() and not (repo / rel).is_symlink()
    }
    return apply_patch_to(base, patch, label)


def _patch_paths(patch: str, label: str) -> list[str]:
    try:
        return patch_paths(patch.encode())
    except ValueError as exc:
        raise SkipInstance(f"{label}: {exc}".replace(PATCH_FILE, label)) from None


def apply_patch_to(
    base: Mapping[str, bytes], patch: str, label: str, *, reverse: bool = False
) -> dict[str, bytes | None]:
    """`apply_patch` on `base` (repo-relative path -> content before) with `git apply` in a
    scratch directory; `reverse`: the patch undone (`git apply -R`), as FeatureBench's harness
    applies its masking patch and its level-1 test patch."""
    _patch_paths(patch, label)  # a path it may not touch: SkipInstance naming `label`
    try:
        return apply_test_patch(
            patch.encode(), base, label=label, reverse=reverse, where="at the base commit"
        )
    except ValueError as exc:
        raise SkipInstance(str(exc)) from None


def file_diff(rel: str, old: bytes | None, new: bytes | None) -> str:
    """A unified diff (git's header style) turning `old` into `new` at `rel` (None: the file
    is absent on that side), that `git apply` takes; empty when they are equal. Text files
    only: raises SkipInstance for content that is not UTF-8."""
    if old == new:
        return ""
    try:
        before = (old or b"").decode().splitlines(keepends=True)
        after = (new or b"").decode().splitlines(keepends=True)
    except UnicodeDecodeError:
        raise SkipInstance(f"{rel} is not a UTF-8 text file; it cannot be diffed") from None
    head = [f"diff --git a/{rel} b/{rel}\n"]
    if old is None:
        head.append("new file mode 100644\n")
    elif new is None:
        head.append("deleted file mode 100644\n")
    head.append(f"--- {'/dev/null' if old is None else 'a/' + rel}\n")
    head.append(f"+++ {'/dev/null' if new is None else 'b/' + rel}\n")
    body = difflib.unified_diff(before, after, n=3)
    lines = [line for i, line in enumerate(body) if i >= 2]  # difflib's own ---/+++ lines
    out = []
    for line in lines:
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(head + out)
